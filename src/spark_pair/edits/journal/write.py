"""Writing a turn: its record first, then every new content beside its target, the renames
and removals, the commit; on any failure, the rollback.

A turn is written in four steps, each synced before the next: the record (one file: one sync
for every before-image and the manifest) and the folders holding it; every new content as a
temp file beside its target; the renames over the targets, then the removals (their folders
synced once each); the `committed` marker. So no repository file is touched before its
before-image is on disk, and no file is replaced by one that is not.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from ...base.errors import ApplyError, SparkPairError, StaleError
from .. import fsio
from .record import COMMITTED, FileChange, TurnKind
from .recovery import Recovering


def _now(full: Path) -> bytes | None | bool:
    """A target's bytes as they are now (None: absent; False: not a readable file)."""
    try:
        return full.read_bytes() if not full.is_symlink() else False
    except FileNotFoundError:
        return None
    except OSError:
        return False


_writes = 0  # writes this process has begun (a run's watchdog never cuts one short)


def writes_begun() -> int:
    return _writes


def write_changes(journal: Recovering, turn_id: str, changes: list[FileChange], *,
                  summary: str = "", kind: TurnKind = TurnKind.APPLY,
                  undoes: str | None = None) -> None:
    """Journal the before-images, write every change, commit; on any failure roll back."""
    if (journal.dir / turn_id).exists():
        raise ApplyError(
            f"turn id {turn_id!r} is already in the journal", hint="nothing was changed"
        )
    for ch in changes:  # before anything is journaled or written
        journal.confine(ch.path)
    global _writes
    _writes += 1
    try:
        journal.begin(turn_id, changes, summary=summary, kind=kind, undoes=undoes)
    except OSError as exc:
        journal.discard(turn_id)
        raise journal.unusable("could not write the undo journal in", exc) from exc
    current, fds, discarded = "", [], False
    try:
        targets = [journal.confine(ch.path)[1] for ch in changes]
        dirs: list[Path] = []
        for ch, full in zip(changes, targets, strict=True):  # every new content is written
            if ch.after is None:  # beside its target, then all of them are synced...
                continue
            current = ch.path
            for d in ch.new_dirs:
                (journal.root / d).mkdir(exist_ok=True)
                dirs.append((journal.root / d).parent)
            fds.append(fsio.create_file(full.with_name(_tmp_of(ch)), ch.after, ch.after_mode))
        pending, fds = fds, []
        fsio.sync_files(pending)
        late = next((ch.path for ch, full in zip(changes, targets, strict=True)
                     if _now(full) != ch.before), None)  # a save made while it synced
        if late is not None:  # nothing replaced yet: the temp files and the entry go
            for ch, full in zip(changes, targets, strict=True):
                if ch.after is not None:
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(full.with_name(_tmp_of(ch)))
            journal.discard(turn_id)
            discarded = True
            raise StaleError(f"{late} changed on disk while the turn was being written; "
                             "nothing was written and the change on disk was kept",
                             hint="look at the file, then run the turn again")
        # ...then they replace their targets, then the removed files go (a rename's
        # destination is in place before its source goes), then each folder is synced once
        for ch, full in sorted(zip(changes, targets, strict=True),
                               key=lambda c: c[0].after is None):
            current = ch.path
            if ch.after is not None:
                fsio.replace_file(full.with_name(_tmp_of(ch)), full)
            else:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(full)
            dirs.append(full.parent)
        current = ""
        fsio.sync_dirs(dirs)
        journal.commit(turn_id, done=kind == TurnKind.APPLY)
    except BaseException as exc:
        fsio.close_files(fds)
        if discarded:
            raise
        outcome, hint = "every file of the turn was restored", None
        try:
            back = journal.rollback(turn_id)
            if back.kept:
                outcome = back.describe()
                hint = (f"every other file was put back; the kept ones changed meanwhile and "
                        f"stay as they are (their earlier content is in {back.saved})")
        except Exception as again:  # the journal keeps the turn: say where the files stand
            outcome, hint = _not_rolled_back(journal, turn_id, changes, again)
        if isinstance(exc, SparkPairError) or not isinstance(exc, Exception):
            raise
        what = f"writing {current}" if current else "syncing the turn's files"
        raise ApplyError(f"{what} failed ({exc}); {outcome}", hint=hint) from exc


def _not_rolled_back(journal: Recovering, turn_id: str, changes: list[FileChange],
                     exc: Exception) -> tuple[str, str]:
    """(what happened, what to do) when a failed write could not be rolled back either: which
    files hold the turn's content and which are as they were, and what puts them back."""
    new, old, other = [], [], []
    for ch in changes:
        now = _now(journal.root / ch.path)
        if now == ch.before:
            old.append(ch.path)
        elif now is None if ch.after is None else now == ch.after:
            new.append(ch.path)
        else:
            other.append(ch.path)
    parts = [f"{', '.join(new)} {'holds' if len(new) == 1 else 'hold'} the turn's new content"
             if new else "",
             f"{', '.join(old)} {'is' if len(old) == 1 else 'are'} as before" if old else "",
             f"{', '.join(other)} could not be read" if other else ""]
    state = "; ".join(p for p in parts if p)
    said = f"putting the files back failed too ({exc}): {state}"
    if (journal.dir / turn_id / COMMITTED).exists():
        return (f"{said}; the turn stays recorded as applied",
                f"`spark-pair undo --turn {turn_id}` restores the files (once what failed is "
                f"fixed: disk space, permissions)")
    if not new and not other:
        return (f"{said}; the undo journal keeps the turn's record",
                "no file of the repository was changed; `spark-pair undo --list` clears the "
                "record once what failed is fixed (disk space, permissions)")
    return (f"{said}; the undo journal keeps the turn",
            "files of the repository were changed and not yet put back: fix what failed (disk "
            "space, permissions), then run `spark-pair undo --list` (or apply a turn): it "
            "puts them back as they were")


def _tmp_of(ch: FileChange) -> str:
    """The temp file name the manifest gives a change that writes a file."""
    assert ch.tmp is not None  # set by Journal.begin for every change with content
    return ch.tmp



def missing_dirs(root: Path, rel: str) -> list[str]:
    """Parent directories of `rel` that do not exist yet (shallowest first)."""
    out = []
    parts = rel.split("/")[:-1]
    for i in range(1, len(parts) + 1):
        d = "/".join(parts[:i])
        if not (root / d).is_dir():
            out.append(d)
    return out
