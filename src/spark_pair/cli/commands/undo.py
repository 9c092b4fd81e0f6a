"""`spark-pair undo`: restore the files of the last applied turn (or list turns, or a named one)."""

from __future__ import annotations

import json
import sys
import time
from typing import TYPE_CHECKING

import click

from ...base.errors import SparkPairError, UsageError
from ...base.exitcodes import report_errors
from ...base.termwrap import say
from ...headless.cliusage import JsonUsageCommand
from ...headless.textfit import INDENT, WIDTH, file_lines

if TYPE_CHECKING:
    from ...edits.journal import Journal, TurnInfo


def _usage_json(error: Exception) -> None:
    click.echo(json.dumps({"error": _error_fields(error)}))


def _error_fields(error: Exception) -> dict[str, object]:
    from ...base.exitcodes import ExitCode, exit_code_for
    from ...headless.jsonl import error_fields

    code = exit_code_for(error)
    return {**error_fields(error), "exit_code": int(code), "exit_name": ExitCode(code).name}


@click.command("undo", cls=JsonUsageCommand, on_usage_error=_usage_json)
@click.option("--list", "list_", is_flag=True, help="List the journaled turns, newest first.")
@click.option("--turn", "turn_id", metavar="ID",
              help="Undo this applied turn instead of the last one (an undo or redo is refused).")
@click.option("--force", is_flag=True, help="Undo even if files changed since the turn.")
@click.option("--revert", is_flag=True,
              help="When the turn was committed: record the undo as a revert commit (exit 10 "
                   "when it cannot be committed; the files stay restored).")
@click.option("--json", "as_json", is_flag=True,
              help="Machine-readable output on stdout (errors too: {\"error\": {...}}).")
@report_errors
def command(list_: bool, turn_id: str | None, force: bool, revert: bool, as_json: bool
            ) -> None:
    """Restore the files of the last applied turn exactly (bytes and mode).

    Exit codes: 0 restored (or listed), 2 usage, 8 undo refused (nothing to undo, no such turn,
    already undone, or a file changed since the turn: --force overwrites it), 10 --revert:
    the revert commit was not made (a hook refused, or no commit can go here: nothing
    restored). A committed turn's commit stays in history; --revert records its revert."""
    try:
        _undo(list_, turn_id, force, as_json, revert)
    except SparkPairError as exc:
        if as_json:
            restored = exc.details.get("restored")
            click.echo(json.dumps({"error": _error_fields(exc), **(
                {} if restored is None else {"repo": exc.details.get("repo"),
                                             "restored": restored})}))
        raise


def _undo(list_: bool, turn_id: str | None, force: bool, as_json: bool,
          revert: bool = False) -> None:
    from ...edits.journal import Journal
    from ...workspace.files import find_root

    if list_ and (turn_id or force or revert):
        raise UsageError("--list cannot be combined with --turn, --force or --revert",
                         hint="`spark-pair undo --list` lists; `spark-pair undo --turn ID` undoes")
    journal = Journal(find_root())
    with journal.locked():
        recovered = journal.recover()
    for rec in recovered:  # a crash interrupted a turn: say what was put back
        say(sys.stderr, rec.describe())
    if list_:
        turns = journal.list_turns()
        for name in journal.damaged:
            say(sys.stderr, f"turn {name}: its journal entry is damaged and cannot be listed or "
                            "undone", prefix="warning: ")
        if as_json:
            click.echo(json.dumps({"repo": str(journal.root),
                                   "turns": [t.to_dict() for t in turns]}))
            return
        if not turns:
            click.echo("no journaled turns in this repository")
        for t in turns:
            click.echo("\n".join(_turn_lines(t)))
        return
    if revert:  # refused before anything is restored where no commit can go
        from ...base.gitcommit import check_state

        check_state(journal.root)
    restored = journal.undo(turn_id, force=force)
    record_undo(turn_id or journal.last_undone(), True)
    try:
        commit, reverted = _after_undo(journal, revert)
    except SparkPairError as exc:  # the files are restored all the same: said first
        exc.details.update(repo=str(journal.root), restored=restored)
        if exc.details.get("reason") in ("hook", "interrupted", "moved", "git"):
            exc.hint = ("the files are restored (the undo stands) and uncommitted; "
                        "`git commit` of them records the revert by hand")
        if not as_json:
            click.echo("\n".join(file_lines(f"restored {len(restored)} file(s):", restored)))
        raise
    if as_json:
        click.echo(json.dumps({"repo": str(journal.root), "restored": restored,
                               "commit": commit, "revert": reverted}))
    else:
        click.echo("\n".join(file_lines(f"restored {len(restored)} file(s):", restored)))


def record_undo(turn_id: str, undone: bool) -> None:
    """The turn undone (`undone` False: written again by redo) said so where spark-pair keeps
    turns, as the app's /undo does: its stored session lists it undone and `-c` tells the model,
    `stats` leaves it out. Only stores that exist are touched; a store that cannot be written is
    warned of (the files are restored all the same)."""
    if not turn_id:
        return
    import sqlite3

    from ...base import dirs
    from ...store.sessions import FILE_NAME, ROLLED_BACK, UNDONE, SessionStore
    from ...store.sqlite import RequestStore

    try:
        if (dirs.data_dir() / "requests.sqlite3").is_file():
            with RequestStore() as requests:
                requests.record_undo(turn_id, undone)
        if (dirs.data_dir() / FILE_NAME).is_file():
            with SessionStore() as sessions:
                sessions.mark_turn(turn_id, *((UNDONE, ("applied",)) if undone
                                              else ("applied", (UNDONE, ROLLED_BACK))))
    except (SparkPairError, sqlite3.Error) as exc:
        say(sys.stderr, f"the stored sessions and stats were not told of it: {exc}",
            prefix="warning: ")


def _after_undo(journal: Journal, revert: bool) -> tuple[str | None, str | None]:
    """A committed turn's undo: its commit stays (said), and with --revert the revert commit
    is made. (the undone turn's commit, the revert commit)."""
    from ...session.commit import make_commit, plan_commit, with_trailer
    from ...session.revert import check_whole, committed_undo, revert_message, stays_note

    found = committed_undo(journal)
    if found is None:
        if revert:
            say(sys.stderr, "note: the turn was not committed by spark-pair, so there is no "
                            "commit to revert; its files are restored")
        return None, None
    commit = found.commit
    if not revert:
        say(sys.stderr, "note: " + stays_note(commit, "`git commit` of them"))
        return commit, None
    check_whole(found, "`spark-pair undo --revert` again")
    plan = plan_commit(journal.root, found.undos, journal)
    from ...base.config import load_settings

    message = with_trailer(revert_message(journal.root, commit),
                           load_settings(journal.root).git.trailer)
    reverted = make_commit(plan, message, journal=journal)
    say(sys.stderr, f"recorded the revert of {commit[:12]} as commit {reverted[:12]}")
    return commit, reverted


def _turn_lines(t: TurnInfo) -> list[str]:
    """One listed turn in lines of at most 80 columns: id, time and state; its files; its
    prompt (cut)."""
    from ...edits.journal import TurnKind

    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t.time))
    if t.kind == TurnKind.UNDO:
        state = "undo (redone since)" if t.undone else f"undo of {t.undoes}"
    elif t.kind == TurnKind.REDO:
        state = f"redo of {t.undoes}"
    elif t.undone:
        state = "undone"
    else:
        state = "applied"
    lines = [f"{t.turn_id}  {when}  {state}"[:WIDTH]]
    lines += file_lines("  files:", t.files, max_lines=3)
    summary = " ".join(t.summary.split())
    if summary and t.kind == TurnKind.APPLY:
        room = WIDTH - len(INDENT)
        lines.append(INDENT + (summary if len(summary) <= room else summary[:room - 1] + "…"))
    return lines
