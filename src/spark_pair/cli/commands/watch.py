"""`spark-pair watch`: a headless turn for each new AI! comment (an answer for each AI?)."""

from __future__ import annotations

import sys

import click

from ...base.exitcodes import report_errors
from ...headless.cliusage import JsonUsageCommand, Seconds
from ._common import flag_overrides, model_options, turn_options, usage_json


@click.command("watch", cls=JsonUsageCommand, on_usage_error=usage_json)
@turn_options
@click.option("--timeout", type=Seconds(), metavar="SECONDS",
              help="Deadline for each turn; that turn ends with exit code 7's error.")
@click.option("--no-meter", is_flag=True, help="No TTFT / tok/s meter line on stderr.")
@model_options
@report_errors
def command(apply_: bool, allow_delete: bool, allow_rename: bool, commit: bool, as_json: bool,
            deltas: bool, no_auto_context: bool, timeout: float | None, no_meter: bool,
            base_url: str | None, model: str | None, transport: str | None) -> None:
    """Watch the repository and run a turn for each AI! comment saved in a file (the model
    does what it says and removes the comment), or answer each AI? comment (no edit). Comments
    already there when it starts are left alone. Same flags and JSON lines as `run`; Ctrl-C
    stops (exit 0, or 130 when it cancels a running turn)."""
    from ...base.errors import UsageError
    from ...headless.options import RunOptions
    from ...headless.watch import main

    if deltas and not as_json:
        raise UsageError("--deltas needs --json", hint="add --json, or leave out --deltas")
    from ...headless.commit import check_flags

    wrong = check_flags(commit, apply_)
    if wrong is not None:
        raise wrong
    if (allow_delete or allow_rename) and not apply_:
        click.echo("spark-pair: --allow-delete/--allow-rename only matter with --apply "
                   "(this is a dry run)", err=True)
    opts = RunOptions(prompt="", apply=apply_, allow_delete=allow_delete,
                      allow_rename=allow_rename, json=as_json, deltas=deltas, timeout=timeout,
                      overrides={**flag_overrides(base_url, model, transport),  # only -f
                                 **({"context.second_look": "false"} if no_auto_context
                                    else {})}, meter=not no_meter,
                      prewarm=True, auto_context=not no_auto_context, commit=commit)
    code = main(opts)
    if code:
        sys.exit(code)
