"""The `spark-pair` command. Sub-commands live in spark_pair.cli.commands.* (the simulator's in
spark_pair.sim.command) and load lazily, so that `spark-pair run` starts fast."""

from __future__ import annotations

import importlib

import click

from .. import __version__
from .commands._common import flag_overrides, model_options

# name -> (its module, short help)
COMMANDS: dict[str, tuple[str, str]] = {
    "run": ("spark_pair.cli.commands.run",
            "Headless: one turn; prints the diff, applies only what flags allow."),
    "watch": ("spark_pair.cli.commands.watch",
              "Headless: a turn for each AI! comment saved in a file, until Ctrl-C."),
    "demo": ("spark_pair.cli.commands.demo",
             "Try spark-pair offline against the built-in simulator (no key)."),
    "undo": ("spark_pair.cli.commands.undo",
             "Restore the files of the last applied turn (or --list, --turn ID)."),
    "redo": ("spark_pair.cli.commands.redo",
             "Re-apply exactly what the last undo restored."),
    "config": ("spark_pair.cli.commands.config",
               "Show the effective settings and where each value came from."),
    "doctor": ("spark_pair.cli.commands.doctor",
               "Check base URL, key and model end to end; explain each failure."),
    "bench": ("spark_pair.cli.commands.bench",
              "Throughput and error-rate sweep over concurrency."),
    "stats": ("spark_pair.cli.commands.stats",
              "Report the request log: tokens, TTFT, tok/s, errors, cost."),
    "sim": ("spark_pair.sim.command",
            "Serve the simulated Spark-class endpoint on loopback."),
    "sessions": ("spark_pair.cli.commands.sessions",
                 "List this repository's stored sessions (or --prune DAYS)."),
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        module = importlib.import_module(COMMANDS[name][0])
        return module.command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, help_) for name, (_, help_) in COMMANDS.items()]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, invoke_without_command=True)
@click.version_option(__version__, prog_name="spark-pair")
@click.option("-c", "--continue", "continue_", is_flag=True,
              help="Open the app on this repository's newest session.")
@click.option("--resume", is_flag=False, flag_value="", default=None, metavar="[NAME]",
              help="Open the app on the session NAME (no name: pick one from a list).")
@model_options
@click.pass_context
def main(ctx: click.Context, continue_: bool, resume: str | None, base_url: str | None,
         model: str | None, transport: str | None) -> None:
    """spark-pair: a pair programmer for Spark-class (1000+ tok/s) coding models."""
    if ctx.invoked_subcommand is not None and (continue_ or resume is not None):
        raise click.UsageError("-c/--continue and --resume open the app; for a headless run "
                               "use `spark-pair run --continue` or `run --session NAME`")
    flags = flag_overrides(base_url, model, transport)
    if ctx.invoked_subcommand is not None and flags:
        raise click.UsageError(f"--base-url, --model and --transport go after the command: "
                               f"`spark-pair {ctx.invoked_subcommand} --model NAME ...`")
    if ctx.invoked_subcommand is None:
        from ..ui.launch import is_terminal

        if not is_terminal():
            if continue_ or resume is not None:  # asked for the app, and it cannot open here
                raise click.UsageError("-c/--continue and --resume open the app, which needs a "
                                       "terminal; without one, `spark-pair run --continue "
                                       "PROMPT` or `run --session NAME PROMPT` carries a "
                                       "session on")
            click.echo(ctx.get_help())
            return
        from ..base.exitcodes import report_errors
        from ..session.pick import Pick
        from ..ui.launch import run_app
        from ..ui.sessions import Choice

        if continue_ and resume is not None:
            raise click.UsageError("-c/--continue and --resume both name a session; use one")
        choice = Choice(Pick(newest=continue_, name=resume or None), picker=resume == "")
        report_errors(run_app)(session=choice, overrides=flags)
