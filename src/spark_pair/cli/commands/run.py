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
@model_options
@report_errors
def command(prompt: str, files: tuple[str, ...], apply_: bool, allow_delete: bool,
            allow_rename: bool, as_json: bool, deltas: bool, no_auto_context: bool,
            timeout: float | None,
            no_meter: bool, base_url: str | None, model: str | None, transport: str | None) -> None:
    """Ask for one change to this repository. PROMPT is the instruction, or - to read it from
    stdin. A dry run (no --apply) checks the changes too: one that cannot apply exits 5.

    Exit codes: 0 ok, 2 usage, 3 config, 4 model, 5 the edits cannot be applied (patch
    conflict, stale file, refused path, write failure; nothing written), 6 refused by policy
    (nothing written), 7 --timeout, 130 interrupted."""
    from ...base.errors import UsageError
    from ...headless.options import RunOptions
    from ...headless.start import leave, run

    if deltas and not as_json:
        raise UsageError("--deltas needs --json", hint="add --json, or leave out --deltas")
    if (allow_delete or allow_rename) and not apply_:
        click.echo("spark-pair: --allow-delete/--allow-rename only matter with --apply "
                   "(this is a dry run)", err=True)
    opts = RunOptions(prompt=prompt, files=list(files), apply=apply_, allow_delete=allow_delete,
                      allow_rename=allow_rename, json=as_json, deltas=deltas, timeout=timeout,
                      overrides=flag_overrides(base_url, model, transport), meter=not no_meter,
                      leave=leave, started=_started(), auto_context=not no_auto_context)
    leave(run(opts))


def _started() -> float | None:
    """When the process began (time.monotonic), as the entry point passed it; None when the
    command line was started some other way (the run's clock then starts with the run)."""
    obj = click.get_current_context().obj
    return obj.get("started") if isinstance(obj, dict) else None
