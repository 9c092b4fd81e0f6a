"""`spark-pair doctor`: check the set-up end to end and say how to fix each failure."""

from __future__ import annotations

import asyncio
import json
import sys

import click

from ...base.errors import ConfigError
from ...base.exitcodes import ExitCode, report_errors
from ...base.termwrap import wrap
from ._common import flag_overrides, model_options

MARKS = {"pass": ("✓", "green"), "fail": ("✗", "bold red"), "skip": ("-", "dim")}


def exit_code(report) -> ExitCode:
    """0 if every check passed (or did not apply), 3 if the config is unusable, else 1."""
    failed = report.first_failure
    if failed is None:
        return ExitCode.OK
    return ExitCode.CONFIG if failed.id == "config" else ExitCode.FAILURE


def print_result(console, result) -> None:
    from rich.table import Table
    from rich.text import Text

    from ...ops.doctor.results import CheckStatus

    mark, style = MARKS[result.status]
    row = Table.grid(expand=True, padding=(0, 1))
    row.add_column(width=1, no_wrap=True)
    row.add_column(ratio=1)
    row.add_column(justify="right", no_wrap=True)
    skipped = result.status == CheckStatus.SKIP
    row.add_row(Text(mark, style=style), Text(result.title, style="dim" if skipped else "bold"),
                Text("skipped" if skipped else f"{result.duration_ms:,.0f} ms", "dim"))
    console.print(row)
    width = max(console.width, 40)
    if skipped:
        reason = result.detail.removeprefix("skipped: ")
        for line in wrap(reason, width, "    ", "      "):
            console.print(Text(line, style="dim"), soft_wrap=True)
        return
    for detail in result.detail.splitlines():
        for line in wrap(detail, width, "    ", "      "):
            console.print(Text(line), soft_wrap=True)
    if result.note:
        for line in wrap("note: " + result.note, width, "    ", "          "):
            console.print(Text(line, style="cyan"), soft_wrap=True)
    if result.hint:
        for line in wrap("fix: " + result.hint, width, "    ", "         "):
            console.print(Text(line, style="yellow"), soft_wrap=True)


@click.command("doctor")
@model_options
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (for scripts).")
@click.option("--check-timeout", type=click.FloatRange(min=0.1), default=5.0, show_default=True,
              help="Seconds each check may take before it fails.")
@report_errors
def command(base_url: str | None, model: str | None, transport: str | None, as_json: bool,
            check_timeout: float) -> None:
    """Check base URL, key and model end to end; explain each failure and how to fix it.

    Runs in order: config, base URL shape, DNS/connect/TLS, key, model list, a plain request,
    a streaming request (a short reply: its TTFT and tok/s), the WebSocket mode, a two-turn
    memory check, the first fallback, and the metrics export when telemetry is on (a test
    point to the OTLP endpoint and the Pushgateway: docs/telemetry.md).

    \b
    ✓ pass     the step works as spark-pair uses it.
    ✓ + note   it works, with something worth knowing: a mode this server does not offer
               while transport = auto (spark-pair uses another one), a slow stream, no
               usage in the stream (token counts are estimated).
    ✗ fail     spark-pair cannot work this way; the "fix:" line says what to change. A mode
               the config demands (transport = ws or responses) that the server lacks fails.
    - skipped  the check does not apply, or waits on one that did not pass.

    Exit code 0 only if nothing failed (notes included).
    """
    from ...base import gcpolicy
    from ...base.config import load_settings
    from ...ops.doctor import DoctorConfig, config_from_settings, run_doctor

    gcpolicy.started()

    try:
        settings = load_settings(overrides=flag_overrides(base_url, model, transport))
        cfg = config_from_settings(settings, check_timeout_s=check_timeout)
    except ConfigError as exc:
        cfg = DoctorConfig(config_error=exc, check_timeout_s=check_timeout)

    if as_json:
        report = asyncio.run(run_doctor(cfg))
        out = report.as_dict()
        out["exit_code"] = int(exit_code(report))
        click.echo(json.dumps(out, indent=2))
        sys.exit(out["exit_code"])

    from rich.console import Console
    from rich.text import Text

    console = Console(highlight=False)
    target = " · ".join(x for x in (cfg.base_url, cfg.model) if x)
    for i, line in enumerate(wrap(f"spark-pair doctor  {target}", console.width, "", "  ")):
        text = Text(line)  # plain text, never markup
        if i == 0:
            text.stylize("bold", 0, len("spark-pair doctor"))
        console.print(text, soft_wrap=True)
    report = asyncio.run(run_doctor(cfg, on_result=lambda r: print_result(console, r)))
    counts = {s: sum(r.status == s for r in report.results) for s in ("pass", "fail", "skip")}
    noted = sum(bool(r.note) for r in report.results if r.status == "pass")
    with_notes = f" ({noted} with a note)" if noted else ""
    summary = (f"({counts['pass']} passed{with_notes}, {counts['fail']} failed, "
               f"{counts['skip']} skipped).")
    if report.ok:
        head = Text.assemble(("All checks passed", "green"))
    else:
        failed = report.first_failure
        head = Text.assemble(("Doctor found a problem", "red"),
                             f" at '{failed.title if failed else ''}'")
    if head.cell_len + 1 + len(summary) <= console.width:
        console.print(Text.assemble(head, " ", summary), soft_wrap=True)
    else:
        console.print(head, soft_wrap=True)
        console.print(Text("  " + summary), soft_wrap=True)
    sys.exit(int(exit_code(report)))
