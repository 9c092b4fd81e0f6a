"""The undo of a committed turn: its commit stays in history (nothing is rewritten), and a
revert commit records the undo, only once every turn the commit holds is undone (a commit of
several turns, the rounds of a --fix run or one /commit of many, is reverted whole or not at
all), and only once."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..base.errors import CommitError
from ..edits.journal import Journal


@dataclass(frozen=True, slots=True)
class UndoneCommit:
    """A commit some of whose turns are undone."""

    commit: str
    undos: list[str]  # the undo turns of its turns, oldest first (what a revert commits)
    left: list[str]  # its turns still applied: a revert now would be a partial one
    reverted: str | None  # the revert commit recorded already, if any


def committed_undo(journal: Journal) -> UndoneCommit | None:
    """The commit of the turn the newest undo undid, when that turn was committed."""
    from ..edits.journal import TurnKind

    turns = journal.list_turns()  # newest first
    undo = next((t for t in turns if t.kind == TurnKind.UNDO), None)
    if undo is None or undo.undone or undo.undoes is None:
        return None
    commit = journal.commit_of(undo.undoes)
    if commit is None:
        return None
    held = [t.turn_id for t in reversed(turns)
            if t.kind == TurnKind.APPLY and journal.commit_of(t.turn_id) == commit]
    undos = [t.turn_id for t in reversed(turns)
             if t.kind == TurnKind.UNDO and not t.undone and t.undoes in held]
    undone = {t.undoes for t in turns if t.turn_id in undos}
    reverted = next((c for c in map(journal.commit_of, undos) if c is not None), None)
    return UndoneCommit(commit, undos, [t for t in held if t not in undone], reverted)


def check_whole(found: UndoneCommit, again: str) -> None:
    """Refuse (CommitError) a revert that would be partial or a second one; `again`: how the
    person undoes the next turn (`spark-pair undo --revert`, /undo)."""
    short = found.commit[:12]
    if found.reverted is not None:
        raise CommitError(f"not reverted: commit {short} was reverted already (by "
                          f"{found.reverted[:12]})", reason="reverted",
                          hint="the files are restored; `git log` shows both commits")
    if found.left:
        held = len(found.left) + len(found.undos)
        raise CommitError(
            f"not reverted yet: commit {short} holds {held} turns and "
            f"{', '.join(found.left)} {'is' if len(found.left) == 1 else 'are'} still applied, "
            "so a revert now would undo only part of it", reason="partial",
            hint=f"the files of the undone turn are restored; {again} undoes the next one, and "
                 f"once all of them are undone one revert of the whole commit is recorded (or "
                 f"`git revert {short}` by hand)")


def stays_note(commit: str, how: str) -> str:
    """What an undo of a committed turn says: the commit stays, and `how` records a revert."""
    return (f"its commit {commit[:12]} stays in history (nothing is rewritten); the restored "
            f"files are uncommitted changes: {how} records a revert commit")


def revert_message(root: Path, commit: str) -> str:
    """git's own revert message for `commit`."""
    from ..base.git import git_ok

    subject = (git_ok(root, "log", "-1", "--format=%s", commit) or b"").decode(
        "utf-8", "replace").strip()
    return f'Revert "{subject}"\n\nThis reverts commit {commit}.'
