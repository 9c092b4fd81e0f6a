"""`spark-pair config`: the effective settings, where each came from, the key redacted."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from ...base.exitcodes import report_errors
from ._common import flag_overrides, model_options


@click.command("config")
@model_options
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
@report_errors
def command(base_url: str | None, model: str | None, transport: str | None, as_json: bool) -> None:
    """Show the effective settings and where each value came from (key redacted)."""
    from ...base import dirs
    from ...base.config import SECTIONS, find_project_file, load_settings

    settings = load_settings(overrides=flag_overrides(base_url, model, transport))
    values = {}
    for section, cls in SECTIONS.items():
        for name in cls.names():
            if name == "api_key":
                continue
            dotted = f"{section}.{name}"
            values[dotted] = {"value": settings.value(dotted), "source": settings.sources[dotted]}
    key = settings.api_key
    key_info = {"env": settings.key_env, "set": key is not None, "length": len(key or "")}
    project = find_project_file(Path.cwd())
    from ...base.errors import redact
    from ...telemetry.options import options_of

    telemetry = options_of(settings)  # with the OTEL_* variables, as a run reads them
    report = {
        "user_file": str(dirs.user_config_file()),
        "user_file_found": dirs.user_config_file().is_file(),
        "project_file": str(project) if project else None,
        "files_read": [str(p) for p in settings.files],
        "settings": values,
        "api_key": key_info,
        "prices": {
            m: {"input_per_m": i, "output_per_m": o} for m, (i, o) in settings.prices.items()
        },
        "keys": dict(settings.keys),
        "warnings": settings.warnings,
        "telemetry": {"on": telemetry is not None,
                      "to": redact(telemetry.where) if telemetry is not None else None},
    }
    if as_json:
        click.echo(json.dumps(report, indent=2))
        return
    _print_text(report)


def _print_text(report: dict) -> None:
    user = report["user_file"] + ("" if report["user_file_found"] else "  (not found)")
    click.echo(f"user file:    {user}")
    click.echo(f"project file: {report['project_file'] or '(none: no .spark-pair.toml here)'}")
    click.echo("")
    width = max(len(k) for k in report["settings"])
    for dotted, entry in report["settings"].items():
        value = entry["value"]
        if isinstance(value, bool):
            shown = "true" if value else "false"
        else:
            shown = ", ".join(value) if isinstance(value, list) else str(value)
        line = f"{dotted:<{width}}  {shown or '(empty)'}"
        source = f"[{entry['source']}]"
        if len(line) + 2 + len(source) > 80:  # the source on its own line, under the value
            click.echo(f"{line}\n{'':<{width}}  {source}")
        else:
            click.echo(f"{line}  {source}")
    tel = report["telemetry"]
    click.echo(f"{'telemetry':<{width}}  " + (f"on, to {tel['to']} (with the OTEL_* "
               "variables)" if tel["on"] else "off (in effect, with the OTEL_* variables)"))
    key = report["api_key"]
    state = f"set, {key['length']} chars" if key["set"] else "NOT SET"
    click.echo(f"{'api key':<{width}}  ${key['env']}: {state} (never shown)")
    for model, price in report["prices"].items():
        click.echo(f"price {model}: ${price['input_per_m']}/M in, ${price['output_per_m']}/M out")
    for binding, keys in report["keys"].items():
        click.echo(f"key {binding}: {keys}")
    from ...base.termwrap import say

    for warning in report["warnings"]:
        say(sys.stderr, warning, prefix="warning: ")
