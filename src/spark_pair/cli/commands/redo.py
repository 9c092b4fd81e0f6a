"""`spark-pair redo`: re-apply exactly what the last `undo` restored."""

from __future__ import annotations

import json
import sys

import click

from ...base.errors import SparkPairError
from ...base.exitcodes import report_errors
from ...base.termwrap import say
from ...headless.cliusage import JsonUsageCommand
from ...headless.textfit import file_lines
from .undo import _error_fields, _usage_json, record_undo


@click.command("redo", cls=JsonUsageCommand, on_usage_error=_usage_json)
@click.option("--force", is_flag=True, help="Redo even if files changed since the undo.")
@click.option("--json", "as_json", is_flag=True,
              help="Machine-readable output on stdout (errors too: {\"error\": {...}}).")
@report_errors
def command(force: bool, as_json: bool) -> None:
    """Re-apply the turn the last undo restored, byte for byte (creates, deletes and renames
    too). Works until a new turn is applied in the repository.

    Exit codes: 0 re-applied, 2 usage, 8 redo refused (nothing to redo, or a file changed since
    the undo: --force overwrites it)."""
    from ...edits.journal import Journal, TurnKind
    from ...workspace.files import find_root

    try:
        journal = Journal(find_root())
        with journal.locked():
            recovered = journal.recover()
        for rec in recovered:
            say(sys.stderr, rec.describe())
        written = journal.redo(force=force)
        record_undo(journal.last_undone(TurnKind.REDO), False)
    except SparkPairError as exc:
        if as_json:
            click.echo(json.dumps({"error": _error_fields(exc)}))
        raise
    if as_json:
        click.echo(json.dumps({"repo": str(journal.root), "reapplied": written}))
    else:
        click.echo("\n".join(file_lines(f"re-applied {len(written)} file(s):", written)))
