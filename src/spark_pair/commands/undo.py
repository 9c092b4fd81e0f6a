"""`spark-pair undo`: restore the files of the last applied turn (or list turns, or a named one)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import click

from ..errors import UsageError
from ..termwrap import say
from ._common import report_errors


def repo_root(cwd: Path | None = None) -> Path:
    """The git root of the current directory (the directory itself outside git)."""
    cwd = cwd or Path.cwd()
    try:
        out = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=cwd, capture_output=True,
                             text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return cwd
    return Path(out.stdout.strip()) if out.returncode == 0 and out.stdout.strip() else cwd


@click.command("undo")
@click.option("--list", "list_", is_flag=True, help="List the journaled turns, newest first.")
@click.option("--turn", "turn_id", metavar="ID", help="Undo this turn instead of the last one.")
@click.option("--force", is_flag=True, help="Undo even if files changed since the turn.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output on stdout.")
@report_errors
def command(list_: bool, turn_id: str | None, force: bool, as_json: bool) -> None:
    """Restore the files of the last applied turn exactly (bytes and mode)."""
    from ..edits.journal import Journal

    if list_ and (turn_id or force):
        raise UsageError("--list cannot be combined with --turn or --force")
    journal = Journal(repo_root())
    with journal.locked():
        recovered = journal.recover()
    for rec in recovered:  # a crash interrupted a turn: say what was put back
        say(sys.stderr, rec.describe())
    if list_:
        turns = journal.list_turns()
        if as_json:
            click.echo(json.dumps({"repo": str(journal.root),
                                   "turns": [t.to_dict() for t in turns]}))
            return
        if not turns:
            click.echo("no journaled turns in this repository")
        for t in turns:
            when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t.time))
            state = "undone" if t.undone else ("undo of " + str(t.undoes) if t.kind == "undo" else "applied")
            files = ", ".join(t.files[:4]) + (f" (+{len(t.files) - 4})" if len(t.files) > 4 else "")
            click.echo(f"{t.turn_id}  {when}  {state}  {files}")
            if t.summary and t.kind != "undo":
                click.echo(f"    {t.summary[:100]}")
        return
    restored = journal.undo(turn_id, force=force)
    if as_json:
        click.echo(json.dumps({"repo": str(journal.root), "restored": restored}))
    else:
        click.echo(f"restored {len(restored)} file(s): {', '.join(restored)}")
