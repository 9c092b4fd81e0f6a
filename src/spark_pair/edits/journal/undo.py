"""Undo and redo: each is itself a journaled turn.

An undo (kind "undo", undoes = the turn it restored) puts back a turn's before-images; a redo
(kind "redo", undoes = that undo turn) puts back the undo's, so the undone turn's after-state
comes back byte for byte. A redo removes the undone turn's `undone` marker (it can be undone
again), then marks the undo turn `undone`; a crash in between is finished by recover(). A
turn applied after an undo ends the redo chain, as in an editor.
"""

from __future__ import annotations

from collections.abc import Callable

from ...base.errors import UndoError
from ...base.ids import new_turn_id
from ..paths import content_hash
from . import commits, record
from .record import FileChange, TurnInfo, TurnKind
from .recovery import Recovering, read_state
from .write import missing_dirs, write_changes


class Journal(Recovering):
    """The journal of one repository: its turns written, recovered, undone and redone."""

    def undo(self, turn_id: str | None = None, force: bool = False, *,
             stop: Callable[[], bool] | None = None) -> list[str]:
        """Restore the files of the last applied turn (or `turn_id`) exactly; returns their paths.

        The undo is itself a journaled turn, so a crash mid-undo is rolled back too. Blocking
        (lock, fsync): from an event loop, call it in a worker thread; `stop` ends the wait for
        a lock another command holds (Cancelled, nothing written).
        """
        with self.locked(stop):
            self.recover()
            turns = self.list_turns()
            if turn_id is None:
                if self.damaged:  # the last turn might be one of them: never undo an older one
                    raise UndoError(f"the journal entry of turn {', '.join(self.damaged)} is "
                                    "damaged, so the last turn is not known; nothing was changed",
                                    hint="`spark-pair undo --list` shows the turns; undo one "
                                         "with --turn ID")
                todo = [t for t in turns if t.kind == TurnKind.APPLY and not t.undone]
                if not todo:
                    raise UndoError("nothing to undo in this repository",
                                    hint="`spark-pair undo --list` shows the journaled turns")
                turn = todo[0]
            else:
                found = [t for t in turns if t.turn_id == turn_id]
                if not found:
                    raise UndoError(f"no turn {turn_id!r} in this repository's journal")
                turn = found[0]
                _refuse_record(turn, {t.turn_id: t for t in turns})
                if turn.undone:
                    raise UndoError(f"turn {turn_id} was already undone")
            return self._undo_turn(turn.turn_id, force)

    def redo(self, force: bool = False, *, stop: Callable[[], bool] | None = None) -> list[str]:
        """Re-apply the turn the last undo restored, exactly; returns the paths it wrote.

        Only while no turn was applied after that undo (a new turn ends the redo chain). The
        redo is a journaled turn too, and refuses when a file changed since the undo. `stop`
        as for undo.
        """
        with self.locked(stop):
            self.recover()
            turns = self.list_turns()
            if self.damaged:
                raise UndoError(f"the journal entry of turn {', '.join(self.damaged)} is damaged, "
                                "so the last undo is not known; nothing was changed",
                                hint="`spark-pair undo --list` shows the turns")
            last_apply = max((t.time for t in turns if t.kind == TurnKind.APPLY), default=0.0)
            todo = [t for t in turns if t.kind == TurnKind.UNDO and not t.undone
                    and t.time >= last_apply]
            if not todo:
                raise UndoError("nothing to redo in this repository",
                                hint="redo re-applies what the last undo restored, until a new "
                                     "turn is applied; `spark-pair undo --list` shows the turns")
            return self._undo_turn(todo[0].turn_id, force, kind=TurnKind.REDO)

    def last_undone(self, kind: TurnKind = TurnKind.UNDO) -> str:
        """The applied turn the newest undo (`kind` UNDO) took back, or the newest redo (REDO)
        wrote again: a redo undoes an undo, which undid the turn ("" when none is known)."""
        turns = self.list_turns()  # newest first
        by_id = {t.turn_id: t for t in turns}
        newest = next((t for t in turns if t.kind == kind), None)
        undone = by_id.get(newest.undoes or "") if newest is not None else None
        if kind == TurnKind.REDO and undone is not None:
            undone = by_id.get(undone.undoes or "")
        return undone.turn_id if undone is not None else ""

    def files_of(self, turn_id: str) -> list[commits.TurnFile]:
        """The files a turn wrote, with their before-images (for a commit of the turn)."""
        return commits.turn_files(self.dir / turn_id)

    def note_commit(self, turn_id: str, commit: str) -> None:
        """Remember that a turn went into `commit`."""
        commits.note_commit(self.dir / turn_id, commit)

    def commit_of(self, turn_id: str) -> str | None:
        """The commit a turn went into (None: not committed by spark-pair)."""
        return commits.commit_of(self.dir / turn_id)

    def _undo_turn(self, turn_id: str, force: bool, kind: TurnKind = TurnKind.UNDO
                   ) -> list[str]:
        tdir = self.dir / turn_id
        manifest = self._manifest(tdir) or {}
        changes, changed_since = [], []
        try:
            for entry in manifest["files"]:
                rel, full = self.confine(entry["path"])
                now, mode = read_state(full)
                if content_hash(now) != entry["after_sha256"] or (
                        now is not None and mode != entry["after_mode"]):
                    changed_since.append(rel)
                before = record.before_image(tdir, entry)
                if (now, mode) != (before, entry["mode"] if before is not None else None):
                    changes.append(FileChange(rel, now, mode, before, entry["mode"],
                                              missing_dirs(self.root, rel) if before is not None
                                              else []))
        except (OSError, KeyError, TypeError, ValueError, AttributeError) as exc:
            raise UndoError(
                f"the journal entry of turn {turn_id} is damaged ({type(exc).__name__}: "
                f"{exc}); nothing was changed",
                hint=f"it cannot be undone from {tdir}; git (git diff, git checkout) "
                "still has the committed versions",
            ) from exc
        if changed_since and not force:
            what = "redo" if kind == TurnKind.REDO else f"undo turn {turn_id}"
            raise UndoError(
                f"cannot {what}: changed since the {'undo' if kind == TurnKind.REDO else 'turn'}: "
                f"{', '.join(changed_since)}",
                hint=f"{kind} --force overwrites those changes; `spark-pair undo --list` shows "
                     "turns")
        undo_id = new_turn_id()
        write_changes(self, undo_id, changes, summary=f"{kind} of {turn_id}", kind=kind,
                      undoes=turn_id)
        self._finish(self.dir / undo_id)
        return [e["path"] for e in manifest["files"]]


def _refuse_record(turn: TurnInfo, turns: dict[str, TurnInfo]) -> None:
    """An undo or redo is not undone itself: say which command does what was meant."""
    if turn.kind == TurnKind.UNDO:
        raise UndoError(f"turn {turn.turn_id} is an undo of turn {turn.undoes}, not an applied "
                        "turn; nothing was changed",
                        hint="`spark-pair redo` re-applies what the last undo restored; "
                             "`spark-pair undo --list` shows the turns")
    if turn.kind == TurnKind.REDO:
        undo = turns.get(turn.undoes or "")
        applied = undo.undoes if undo is not None else None
        raise UndoError(f"turn {turn.turn_id} is a redo of turn {applied or turn.undoes}, not "
                        "an applied turn; nothing was changed",
                        hint=f"undo the applied turn itself: spark-pair undo --turn {applied}"
                        if applied else "`spark-pair undo --list` shows the turns")
