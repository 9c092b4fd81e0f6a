"""`spark-pair sessions`: the stored sessions of this repository (or all), and --prune DAYS."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import click

from ...base.exitcodes import report_errors


@click.command("sessions")
@click.option("--all", "all_", is_flag=True, help="The sessions of every repository.")
@click.option("--prune", type=click.FloatRange(min=0), metavar="DAYS",
              help="Remove this repository's sessions (every repository's with --all) not "
                   "used for DAYS days (an open one stays).")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per session on stdout.")
@report_errors
def command(all_: bool, prune: float | None, as_json: bool) -> None:
    """List the stored sessions, newest first: name, age, turns, last instruction. Carry one
    on with `spark-pair --resume NAME`, `spark-pair -c` (the newest) or
    `spark-pair run --session NAME`."""
    from ...store.sessions import SessionStore, owner_alive, row
    from ...workspace.files import find_root

    warn = lambda text: click.echo(f"spark-pair: {text}", err=True)  # noqa: E731
    root = None if all_ else find_root(Path.cwd())
    with SessionStore(warn=warn) as store:
        if prune is not None:
            gone = store.prune(prune, None if root is None else str(root))
            for info in gone:
                click.echo(f"removed {info.name} ({info.repo}, {info.turns} turn"
                           f"{'s' if info.turns != 1 else ''})")
            click.echo(f"{len(gone)} session{'s' if len(gone) != 1 else ''} removed "
                       f"(not used for {prune:g} days"
                       f"{'' if all_ else ', this repository; --all: every one'})", err=True)
            return
        found = store.listed(None if root is None else str(root))
    if as_json:
        for s in found:
            click.echo(json.dumps({"name": s.name, "repo": s.repo, "created": s.created,
                                   "updated": s.updated, "model": s.model, "turns": s.turns,
                                   "last_instruction": s.last_instruction,
                                   "forked_from": s.parent or None,
                                   "open": bool(s.owner) and owner_alive(s.owner)}))
        return
    if not found:
        click.echo("no stored sessions" + ("" if all_ else " in this repository") +
                   " (each `spark-pair` or `spark-pair run` begins one)", err=True)
        return
    width = shutil.get_terminal_size((100, 24)).columns
    for s in found:
        click.echo(row(s, width) + (f"  [{s.repo}]" if all_ else ""))
