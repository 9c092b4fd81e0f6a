"""`spark-pair run`: one headless turn: prints the diff or JSON lines; writes what flags allow."""

from __future__ import annotations

import click

from ...base.exitcodes import report_errors
from ...headless.cliusage import JsonUsageCommand, Seconds
from ._common import flag_overrides, model_options, turn_options, usage_json


@click.command("run", cls=JsonUsageCommand, on_usage_error=usage_json)
@click.argument("prompt", metavar="PROMPT")
@click.option("-f", "--file", "files", multiple=True, metavar="PATH",
              help="A file to put in the context, or a folder for its files (repeatable).")
@turn_options
@click.option("--timeout", type=Seconds(), metavar="SECONDS",
              help="Deadline for the whole run; exit code 7 when it runs out.")
@click.option("--no-meter", is_flag=True, help="No TTFT / tok/s meter line on stderr.")
@click.option("--check", "check", metavar="CMD",
              help="With --apply: run CMD (the shell, in the repository root) after the turn; "
                   "exit 9 when it fails.")
@click.option("--fix", "fix", type=click.IntRange(0, 10), default=0, metavar="N",
              help="With --check: when it fails, send its output back for up to N fix rounds.")
@click.option("--escalate", is_flag=True,
              help="With --fix: the last fix round goes to [model] stronger.")
@click.option("--no-repair", "no_repair", is_flag=True,
              help="Do not send hunks that match nowhere back to the model for one repair "
                   "round ([review] repair).")
@click.option("-c", "--continue", "continue_", is_flag=True,
              help="Carry on this repository's newest session (its turns and model).")
@click.option("--session", metavar="NAME",
              help="Carry on the session NAME (begun under that name when there is none).")
@model_options
@report_errors
def command(prompt: str, files: tuple[str, ...], apply_: bool, allow_delete: bool,
            allow_rename: bool, commit: bool, as_json: bool, deltas: bool, no_auto_context: bool,
            timeout: float | None,
            no_meter: bool, check: str | None, fix: int, escalate: bool, no_repair: bool,
            continue_: bool, session: str | None, base_url: str | None,
            model: str | None, transport: str | None) -> None:
    """Ask for one change to this repository. PROMPT is the instruction, or - to read it from
    stdin. A dry run (no --apply) checks the changes too: one that cannot apply exits 5.

    Exit codes: 0 ok, 2 usage, 3 config, 4 model, 5 the edits cannot be applied (patch
    conflict, stale file, refused path, write failure; nothing written), 6 refused by policy
    (nothing written), 7 --timeout, 9 the --check still fails after the --fix rounds (the
    tree keeps them; undo takes each back), 10 --commit: not committed (a hook refused, HEAD
    moved, a file holds your own edits: the turn stays applied; or no commit can go here:
    nothing written), 130 interrupted."""
    from ...base.errors import UsageError
    from ...headless.options import RunOptions
    from ...headless.start import leave, run

    if deltas and not as_json:
        raise UsageError("--deltas needs --json", hint="add --json, or leave out --deltas")
    from ...headless.commit import check_flags

    wrong = (_check_flags(check, fix, escalate, apply_) or check_flags(commit, apply_)
             or _one_session(continue_, session))
    if wrong is not None:
        if as_json:
            usage_json(wrong)
        raise wrong
    if (allow_delete or allow_rename) and not apply_:
        click.echo("spark-pair: --allow-delete/--allow-rename only matter with --apply "
                   "(this is a dry run)", err=True)
    opts = RunOptions(prompt=prompt, files=list(files), apply=apply_, allow_delete=allow_delete,
                      allow_rename=allow_rename, json=as_json, deltas=deltas, timeout=timeout,
                      overrides={**flag_overrides(base_url, model, transport),
                                 **({"review.repair": "false"} if no_repair else {}),
                                 # only the -f files: the model is not offered a second look
                                 **({"context.second_look": "false"} if no_auto_context
                                    else {})},
                      meter=not no_meter,
                      leave=leave, started=_started(), auto_context=not no_auto_context,
                      check=(check or "").strip(), fix=fix, escalate=escalate,
                      continue_=continue_, session=session, commit=commit)
    leave(run(opts))


def _started() -> float | None:
    """When the process began (time.monotonic), as the entry point passed it; None when the
    command line was started some other way (the run's clock then starts with the run)."""
    obj = click.get_current_context().obj
    return obj.get("started") if isinstance(obj, dict) else None


def _one_session(continue_: bool, session: str | None) -> Exception | None:
    from ...base.errors import UsageError

    if continue_ and session:
        return UsageError("--continue and --session both name a session",
                          hint="use one: --continue for the newest, --session NAME for another")
    return None


def _check_flags(check: str | None, fix: int, escalate: bool, apply_: bool) -> Exception | None:
    """What is wrong with --check, --fix and --escalate together (None: nothing)."""
    from ...base.errors import UsageError

    if check is not None and not check.strip():
        return UsageError("--check needs a command", hint='e.g. --check "pytest -q"')
    if check and not apply_:
        return UsageError("--check needs --apply (a dry run writes nothing to check)",
                          hint="add --apply; spark-pair undo takes the turn back")
    if fix and not check:
        return UsageError("--fix needs --check", hint='e.g. --check "pytest -q" --fix 2')
    if escalate and not fix:
        return UsageError("--escalate needs --fix N (its last round goes to the stronger "
                          "model)", hint="add --fix 1 or more")
    return None
