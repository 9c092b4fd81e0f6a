"""One repository's journal folder: where it is, its lock, writing a turn's record, its commit
and its index entry, and listing the turns."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from ...base import dirs as app_dirs
from ...base.errors import ApplyError
from .. import fsio
from ..paths import confine_target, real_root
from . import lock, record
from .record import COMMITTED, FINISHING, INDEX, RECORD, UNDONE, FileChange, TurnInfo, TurnKind


class JournalFolder:
    """The journal folder of one repository (data_dir/journal/<hash of the repo's real path>)."""

    def __init__(self, repo_root: Path, data_dir: Path | None = None) -> None:
        self.root = real_root(repo_root)
        key = hashlib.sha256(os.fsencode(self.root)).hexdigest()[:20]
        self.data_dir = data_dir or app_dirs.data_dir()
        self.dir = self.data_dir / "journal" / key
        self.damaged: list[str] = []  # committed turns whose manifest cannot be read
        self._indexed = False  # the lock was taken with the index of unfinished turns complete
        self._recovered = False  # recover() ran while the lock is held (the index is complete)

    @property
    def own(self) -> tuple[Path, ...]:
        """Folders no edit may touch besides the default ones (this journal's data folder)."""
        return (self.data_dir,)

    def confine(self, path: str) -> tuple[str, Path]:
        """A path undo or recovery may write: inside the repository, never spark-pair's own."""
        return confine_target(self.root, path, self.own)

    @contextmanager
    def locked(self, stop: Callable[[], bool] | None = None) -> Iterator[None]:
        """Hold the repository's journal lock (one turn or undo at a time).

        With `stop`, the wait polls and gives up (Cancelled, naming the holder) once stop()
        is true; without it, it waits for as long as the other command holds the lock.
        """
        try:
            self._make_dir()
            fd = os.open(self.dir / lock.LOCK, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            raise self.unusable("cannot open the undo journal", exc) from exc
        try:
            lock.wait(fd, stop)
            self._indexed = lock.sealed(fd, self.dir)  # read before the process id replaces it
            try:
                lock.claim(fd)
            except OSError as exc:  # (a full disk: the first bytes a run writes there)
                raise self.unusable("cannot write the lock of the undo journal", exc) from exc
            try:
                yield
            finally:
                if self._recovered:
                    lock.seal(fd, self.dir)
                self._indexed = self._recovered = False
        finally:
            os.close(fd)

    def unusable(self, what: str, exc: OSError) -> ApplyError:
        """The error for a journal folder that cannot be written: what to free or fix."""
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            hint = (f"nothing was changed; the disk (or quota) holding {self.data_dir} is full: "
                    "free space there, or set SPARK_PAIR_HOME to a folder on another disk")
        else:
            hint = ("nothing was changed; check the data dir's permissions and free space "
                    "(SPARK_PAIR_HOME relocates it)")
        return ApplyError(f"{what} {self.dir} ({exc})", hint=hint)

    def _make_dir(self) -> None:
        """The journal's folder (and the data folders above it) and its index of unfinished
        turns, made durably the first time."""
        fsio.make_dirs(self.dir)
        fsio.make_dirs(self.dir / INDEX)

    # ---- a turn's record, commit and index entry ---------------------------------------------

    def begin(self, turn_id: str, changes: list[FileChange], *, summary: str = "",
              kind: TurnKind = TurnKind.APPLY, undoes: str | None = None) -> Path:
        """Write the turn's record (manifest and before-images, one file) and sync it and the
        folders holding it, before any file is touched."""
        self._make_dir()
        tdir = self.dir / turn_id
        os.close(os.open(self.dir / INDEX / turn_id, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        tdir.mkdir()
        data = record.encode(turn_id, self.root, changes, summary=summary, kind=kind,
                             undoes=undoes)
        fsio.sync_files([fsio.create_file(tdir / RECORD, data, 0o600)])
        if kind != TurnKind.APPLY:  # it sets markers once committed: recovery finishes that
            record.put_marker(tdir / RECORD, tdir / FINISHING)
        fsio.sync_dirs([tdir, self.dir, self.dir / INDEX])
        return tdir

    def commit(self, turn_id: str, *, done: bool = True) -> None:
        """Mark the turn committed, durably. `done`: nothing is left to do after it (an undo
        or redo keeps its index entry until its markers are set)."""
        record.mark(self.dir / turn_id, COMMITTED)
        if done:
            self._close(turn_id)

    def _close(self, turn_id: str) -> None:
        """Drop a turn's entry from the index of unfinished turns: only once what it guards is
        synced. Not synced itself: an entry left behind is only looked at again."""
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.dir / INDEX / turn_id)

    def discard(self, turn_id: str) -> None:
        """Forget a turn whose journal entry could not be written (no file was touched)."""
        if (self.dir / turn_id).exists():
            self._discard(self.dir / turn_id)
        self._close(turn_id)

    def _discard(self, tdir: Path) -> None:
        gone = tdir.with_name(tdir.name + ".discard")
        os.replace(tdir, gone)
        fsio.fsync_dir(self.dir)
        remove_tree(gone)

    # ---- reading -----------------------------------------------------------------------------

    @staticmethod
    def _manifest(tdir: Path) -> dict | None:
        return record.read_manifest(tdir)

    def _turn_dirs(self) -> list[Path]:
        listing = self._listing()
        return [] if listing is None else [self.dir / name for name in listing[0]]

    def _listing(self) -> tuple[list[str], list[str]] | None:
        """The names of the turn folders, and of the folders set aside to be discarded, from
        one listing (the kind of each entry comes with it: undo, redo and a recovery without
        a complete index list every turn the repository ever had, so nothing is looked up per
        entry); None without a journal."""
        turns, discards = [], []
        try:
            with os.scandir(self.dir) as entries:
                for entry in entries:
                    if entry.name.endswith(".discard"):
                        discards.append(entry.name)
                    elif entry.is_dir() and record.turn_name(entry.name):
                        turns.append(entry.name)
        except (FileNotFoundError, NotADirectoryError):
            return None
        return turns, discards

    def list_turns(self) -> list[TurnInfo]:
        """Committed turns, newest first."""
        out = []
        self.damaged = []
        for tdir in self._turn_dirs():
            if not (tdir / COMMITTED).exists():
                continue
            m = self._manifest(tdir) or {}
            try:
                out.append(TurnInfo(m["turn_id"], m["time"], m.get("summary", ""),
                                    [f["path"] for f in m["files"]],
                                    TurnKind(m.get("kind", TurnKind.APPLY)),
                                    m.get("undoes"), True, (tdir / UNDONE).exists()))
            except (KeyError, TypeError, AttributeError, ValueError):
                self.damaged.append(tdir.name)
        out.sort(key=lambda t: (t.time, t.turn_id), reverse=True)
        return out


def remove_tree(folder: Path) -> None:
    """Remove a set-aside turn folder, as far as it goes (shutil loads only when one is)."""
    import shutil

    shutil.rmtree(folder, ignore_errors=True)
