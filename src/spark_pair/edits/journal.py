"""The undo journal: before-images of every file a turn touches, kept per repository.

Layout under data_dir/journal/<key>/ (key = hash of the real repo path):
    <turn id>/record          line 1: the manifest (JSON): turn id, time, summary, kind, per
                              file: path, existed, before ("record") and at ([offset, size] of
                              its before-image after line 1), before_sha256, mode,
                              after_sha256, after_mode, tmp (the name of the temp file the
                              turn writes it through); then the before-images, back to back
    <turn id>/committed       written once every file of the turn is in place
    <turn id>/undone          written once an undo of this turn committed (on an undo turn: once
                              a redo of it committed)
    <turn id>/finishing       on an undo or redo turn until the markers it sets are written
    (the markers are second names of the record, or empty files without hard links)
    checked                   (beside the turns) earlier versions' undos and redos, which had no
                              `finishing` marker, were finished once
    unfinished/<turn id>      (beside the turns) an empty file per turn that may be unfinished
    lock                      the lock; its first line: the holder's process id, then (once it
                              let go, the index complete) "indexed" and the folder's mtime
Turns written by earlier versions keep their manifest in <turn id>/manifest.json and each
before-image in <turn id>/before/<n>; they are read (undone, recovered) the same way.
An undo is itself a turn (kind "undo", undoes = the turn it restored); a redo is a turn of kind
"redo" that restores the before-images of an undo turn (undoes = that undo turn), so the undone
turn's after-state comes back byte for byte. A redo removes the undone turn's `undone` marker
(it can be undone again), then marks the undo turn `undone`; a crash in between is finished by
recover() (it reads only the turns left `finishing`, and the uncommitted ones). A turn
applied after an undo ends the redo chain, as in an editor.
A turn directory with a manifest but no `committed` marker was interrupted: recover() puts
back the before-image of each file that still holds what the turn wrote, and keeps (and names)
a file changed since. A turn is written in four steps, each synced before the next: the
record (one file: one sync for every before-image and the manifest) and the folders holding
it; every new content as a temp file beside its target; the renames over the targets, then
the removals (their folders synced once each); the `committed` marker. So no repository file
is touched before its before-image is on disk, and no file is replaced by one that is not; a
record cut short by a crash (shorter than its manifest says) was never finished, so no file
was touched, and recovery discards it. Neither undo nor recovery ever writes one of
spark-pair's own files (edits.paths.confine_target), and recovery removes only the temp files
the manifest names and the ones its own restores use (named from the turn and the path). When
recovery keeps a file the user changed, the turn moves to <turn id>.interrupted and the kept
files' before-images are written out as plain files in its before-images/<path>.

The index of unfinished turns keeps recovery's cost independent of the history (every apply
recovers first). Its invariant: every turn folder without `committed`, or with `finishing`,
has its entry in unfinished/. The entry is made before the turn's folder and synced with it,
before any repository file is touched; it goes (unsynced) only once what it guards is on disk:
the commit of an apply, the markers of an undo or redo, the rollback (the folder renamed away
and the journal's folder synced). An entry left by a lost removal is only looked at and dropped.
recover() then reads only unfinished/, when the lock's last holder wrote that the index was
complete and the journal's folder has the mtime it left (an earlier version writes only its
process id there, and its new turn folders change the mtime, on disk together with them);
otherwise it looks at every turn folder, as before, and the index is complete once it is done.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from ..base import dirs as app_dirs
from ..base.errors import ApplyError, Cancelled, SparkPairError, StaleError, UndoError
from . import fsio
from .paths import confine_target, real_root


@dataclass(slots=True)
class FileChange:
    """One file's planned change within a turn (None content: the file is absent)."""

    path: str
    before: bytes | None
    before_mode: int | None
    after: bytes | None
    after_mode: int | None
    new_dirs: list[str] = field(default_factory=list)  # parent dirs this change creates
    tmp: str | None = None  # the temp file name it is written through (set by Journal.begin)


@dataclass(slots=True)
class TurnInfo:
    turn_id: str
    time: float
    summary: str
    files: list[str]
    kind: str  # "apply", "undo" or "redo"
    undoes: str | None
    committed: bool
    undone: bool

    def to_dict(self) -> dict[str, object]:
        return {"turn_id": self.turn_id, "time": self.time, "summary": self.summary,
                "files": self.files, "kind": self.kind, "undoes": self.undoes,
                "undone": self.undone}


@dataclass(slots=True)
class Recovery:
    """What rolling back an interrupted turn did."""

    turn_id: str
    restored: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)  # "path (why)": left as they are
    saved: Path | None = None  # where the before-images stay when a file was kept

    def describe(self) -> str:
        text = f"turn {self.turn_id} was interrupted; "
        text += f"restored {', '.join(self.restored)}" if self.restored else "nothing to restore"
        if self.kept:
            text += (f"; kept {', '.join(self.kept)}; its before-images are in {self.saved}")
        return text


def new_turn_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S", time.gmtime()) + "-" + os.urandom(3).hex()


def _sha(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


def _mark(tdir: Path, name: str) -> None:
    """Put the marker `name` (committed, undone) in a turn's folder, durably."""
    source = tdir / RECORD if (tdir / RECORD).exists() else tdir / "manifest.json"
    _put_marker(source, tdir / name)
    fsio.fsync_dir(tdir)


def _put_marker(source: Path, marker: Path) -> None:
    """A marker is a second name of the turn's record (no file to create and sync), or an
    empty synced file where the file system has no hard links (or the record is missing).
    The caller syncs the folder."""
    try:
        os.link(source, marker)
    except FileExistsError:
        pass
    except OSError:
        fd = os.open(marker, os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _read_state(full: Path) -> tuple[bytes | None, int | None]:
    try:
        return full.read_bytes(), os.stat(full).st_mode & 0o7777
    except FileNotFoundError:
        return None, None


class Journal:
    """The journal of one repository."""

    def __init__(self, repo_root: Path, data_dir: Path | None = None) -> None:
        self.root = real_root(repo_root)
        key = hashlib.sha256(os.fsencode(self.root)).hexdigest()[:20]
        self.data_dir = data_dir or app_dirs.data_dir()
        self.dir = self.data_dir / "journal" / key
        self.damaged: list[str] = []  # committed turns whose manifest cannot be read
        self._indexed = False  # the lock was taken with the index of unfinished turns complete
        self._recovered = False  # recover() ran while the lock is held (the index is complete)

    # ---- locking and writing ----------------------------------------------------------------

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
            fd = os.open(self.dir / "lock", os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            raise self.unusable("cannot open the undo journal", exc) from exc
        try:
            if stop is None:
                fcntl.flock(fd, fcntl.LOCK_EX)
            else:
                while not _try_lock(fd):
                    if stop():
                        raise Cancelled(f"gave up waiting for the undo journal lock of this "
                                        f"repository: {_holder(fd)} holds it",
                                        hint="nothing was written; wait until that command "
                                             "finishes (or stop it), then run again",
                                        waiting="journal lock")
                    time.sleep(LOCK_POLL_S)
            self._indexed = _sealed(fd, self.dir)  # read before the process id replaces it
            # who holds it, for a command that waits: the first word of the file (not
            # truncated first: a truncate can wait for the file system's journal, and a longer
            # number left behind is only read after the newline)
            try:
                os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
            except OSError as exc:  # (a full disk: the first bytes a run writes there)
                raise self.unusable("cannot write the lock of the undo journal", exc) from exc
            try:
                yield
            finally:
                if self._recovered:
                    _seal(fd, self.dir)
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
        if fsio.make_dirs(self.dir):  # a new journal holds no earlier version's turns
            (self.dir / CHECKED).touch()
        fsio.make_dirs(self.dir / INDEX)

    def begin(self, turn_id: str, changes: list[FileChange], *, summary: str = "",
              kind: str = "apply", undoes: str | None = None) -> Path:
        """Write the turn's record (manifest and before-images, one file) and sync it and the
        folders holding it, before any file is touched."""
        self._make_dir()
        tdir = self.dir / turn_id
        os.close(os.open(self.dir / INDEX / turn_id, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        tdir.mkdir()
        files, body, at = [], [], 0
        for ch in changes:
            if ch.after is not None:
                ch.tmp = _free_tmp_name(self.root / ch.path)
            entry: dict[str, object] = {"path": ch.path, "existed": ch.before is not None,
                                        "before": None, "mode": ch.before_mode,
                                        "after_sha256": _sha(ch.after), "after_mode": ch.after_mode,
                                        "new_dirs": ch.new_dirs, "tmp": ch.tmp}
            if ch.before is not None:
                entry.update(before=RECORD, at=[at, len(ch.before)],
                             before_sha256=_sha(ch.before))
                body.append(ch.before)
                at += len(ch.before)
            files.append(entry)
        manifest = {"turn_id": turn_id, "time": time.time(), "summary": summary[:500],
                    "kind": kind, "undoes": undoes, "repo": str(self.root), "files": files}
        head = json.dumps(manifest).encode()  # one line: JSON escapes every line break
        record = head + b"\n" + b"".join(body)
        fsio.sync_files([fsio.create_file(tdir / RECORD, record, 0o600)])
        if kind != "apply":  # it sets markers once committed: recovery finishes that
            _put_marker(tdir / RECORD, tdir / FINISHING)
        fsio.sync_dirs([tdir, self.dir, self.dir / INDEX])
        return tdir

    def commit(self, turn_id: str, *, done: bool = True) -> None:
        """Mark the turn committed, durably. `done`: nothing is left to do after it (an undo
        or redo keeps its index entry until its markers are set)."""
        _mark(self.dir / turn_id, "committed")
        if done:
            self._close(turn_id)

    def _close(self, turn_id: str) -> None:
        """Drop a turn's entry from the index of unfinished turns: only once what it guards is
        synced. Not synced itself: an entry left behind is only looked at again."""
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.dir / INDEX / turn_id)

    def rollback(self, turn_id: str) -> Recovery:
        """Put the files of an unfinished turn back to their before-images, then forget the turn.

        Only a file still holding what the turn wrote (or its before-image) is touched; one that
        changed since (the user went on working after a crash) is kept as it is, and the turn's
        before-images are then kept in `<turn>.interrupted` for the user to take from. An
        OSError (a disk or permission fault) leaves the turn as it is, to be rolled back again
        by the next recovery.
        """
        tdir = self.dir / turn_id
        if (tdir / "committed").exists():  # its commit failed to be synced: it is not applied
            (tdir / "committed").unlink()
            fsio.fsync_dir(tdir)
        manifest = self._manifest(tdir)
        out = Recovery(turn_id)
        kept = []
        if manifest is not None:
            for entry in manifest["files"]:
                if self._roll_back_file(tdir, entry, out):
                    kept.append(entry)
            self._remove_new_dirs(manifest)
        if out.kept:
            saved = tdir.with_name(tdir.name + ".interrupted")
            os.replace(tdir, saved)
            fsio.fsync_dir(self.dir)
            out.saved = _write_out(saved, kept)
        else:
            self._discard(tdir)
        self._close(turn_id)
        return out

    def _roll_back_file(self, tdir: Path, entry: dict, out: Recovery) -> bool:
        """Put one file back; True when it is kept as it is."""
        try:
            rel, full = self.confine(entry["path"])
            tmp = _restore_tmp(tdir.name, entry, full)
            tmp.unlink(missing_ok=True)  # only the one this turn (or its recovery) made
            now, _ = _read_state(full)
            before = _before_image(tdir, entry)
        except SparkPairError as exc:
            out.kept.append(f"{entry['path']} ({exc.message})")
            return True
        except (IsADirectoryError, NotADirectoryError):  # no longer a file: the user's now
            out.kept.append(f"{entry['path']} (not a file now; kept as it is)")
            return True
        if now == before:
            if before is not None and os.stat(full).st_mode & 0o7777 != entry["mode"]:
                os.chmod(full, entry["mode"])
            return False
        if _sha(now) != entry["after_sha256"]:
            out.kept.append(f"{rel} (changed after the interrupted turn; kept as it is)")
            return True
        if before is None:
            fsio.remove_file(full)
        else:
            fsio.make_dirs(full.parent)
            fsio.atomic_write(full, before, entry["mode"], tmp=tmp)
        out.restored.append(rel)
        return False

    def _remove_new_dirs(self, manifest: dict) -> None:
        """Remove the directories a turn created, if they are empty again (deepest first)."""
        dirs = {d for entry in manifest["files"] for d in entry.get("new_dirs", [])
                if isinstance(d, str)}
        for d in sorted(dirs, key=lambda d: d.count("/"), reverse=True):
            try:
                _, full = self.confine(d)  # never a folder outside the repository
                full.rmdir()
            except (SparkPairError, OSError):
                pass

    def discard(self, turn_id: str) -> None:
        """Forget a turn whose journal entry could not be written (no file was touched)."""
        if (self.dir / turn_id).exists():
            self._discard(self.dir / turn_id)
        self._close(turn_id)

    def _discard(self, tdir: Path) -> None:
        gone = tdir.with_name(tdir.name + ".discard")
        os.replace(tdir, gone)
        fsio.fsync_dir(self.dir)
        _remove_tree(gone)

    # ---- reading -----------------------------------------------------------------------------

    @staticmethod
    def _manifest(tdir: Path) -> dict | None:
        """The turn's manifest; None when it is missing or unreadable, or when its record is
        shorter than the manifest says (a crash while it was written, before any file of the
        repository was touched)."""
        try:
            with open(tdir / RECORD, "rb") as f:
                head = f.readline()
                manifest = json.loads(head)
                size = os.fstat(f.fileno()).st_size - len(head)
            ends = [sum(at) for entry in manifest["files"]
                    if isinstance(at := entry.get("at"), list) and _is_slice(at)]
            return manifest if max(ends, default=0) <= size else None
        except FileNotFoundError:
            pass
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None
        try:  # a turn written by an earlier version
            return json.loads((tdir / "manifest.json").read_text())
        except (OSError, ValueError):
            return None

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
                    elif entry.is_dir() and _turn_name(entry.name):
                        turns.append(entry.name)
        except (FileNotFoundError, NotADirectoryError):
            return None
        return turns, discards

    def recover(self) -> list[Recovery]:
        """Roll back any turn a crash interrupted; finish marking undone turns. Only those
        turns are read: a committed apply is never looked into. With the index of unfinished
        turns known complete (see the module's docstring), only the turns it names are looked
        at; otherwise every turn folder is."""
        done: list[Recovery] = []
        try:
            names = os.listdir(self.dir / INDEX)
        except (FileNotFoundError, NotADirectoryError):
            names = []
        for name in names:
            if _turn_name(name):
                self._recover_turn(self.dir / name, done)
                _remove_tree(self.dir / f"{name}.discard")  # a rollback cut short leaves it
            self._close(name)
        if not self._indexed:
            listing = self._listing()
            if listing is None:
                return done
            turns, discards = listing
            for name in discards:
                _remove_tree(self.dir / name)
            for name in turns:
                self._recover_turn(self.dir / name, done)
            if not (self.dir / CHECKED).exists():
                self._finish_earlier()
        self._recovered = True
        return [r for r in done if r.restored or r.kept]

    def _recover_turn(self, tdir: Path, done: list[Recovery]) -> None:
        """Roll back the turn if it is not committed; finish it if it is left `finishing`."""
        if not os.path.exists(os.path.join(tdir, "committed")):
            if not tdir.is_dir():  # (an index entry whose turn is gone)
                return
            try:
                done.append(self.rollback(tdir.name))
            except OSError as exc:
                raise ApplyError(
                    f"turn {tdir.name} was interrupted, and rolling it back failed ({exc})",
                    hint="nothing else was changed; fix the cause (disk space, permissions), "
                         "then run again: the next spark-pair command rolls it back") from exc
        elif os.path.exists(os.path.join(tdir, FINISHING)):
            self._finish(tdir)

    def _finish_earlier(self) -> None:
        """Finish the undos and redos an earlier version left unmarked (it wrote no `finishing`
        marker): once per journal, every committed undo and redo is finished (redos first: a
        redo cut short has already taken the `undone` marker off the turn it redid)."""
        found = []
        for tdir in self._turn_dirs():
            manifest = self._manifest(tdir) if (tdir / "committed").exists() else None
            if manifest and manifest.get("kind") in ("undo", "redo"):
                found.append((manifest.get("kind") != "redo", tdir.name))
        for _, name in sorted(found):
            self._finish(self.dir / name)
        (self.dir / CHECKED).touch()  # not synced: if lost, the same check runs again

    def _finish(self, tdir: Path) -> None:
        """Set the markers of a committed undo or redo turn (a crash may have come first),
        then drop its `finishing` marker."""
        manifest = self._manifest(tdir)
        if manifest and _plain_name(manifest.get("undoes")):
            target = self.dir / manifest["undoes"]
            kind = manifest.get("kind")
            # (an undo that was redone is spent)
            if (target.is_dir() and not (target / "undone").exists() and kind in ("undo", "redo")
                    and not (kind == "undo" and (tdir / "undone").exists())):
                self._remove_new_dirs(self._manifest(target) or {"files": []})
                if kind == "redo":
                    self._finish_redo(target)
                else:
                    _mark(target, "undone")
        # not synced: if this removal is lost, the next recovery sets the same markers again
        (tdir / FINISHING).unlink(missing_ok=True)
        self._close(tdir.name)

    def list_turns(self) -> list[TurnInfo]:
        """Committed turns, newest first."""
        out = []
        self.damaged = []
        for tdir in self._turn_dirs():
            if not (tdir / "committed").exists():
                continue
            m = self._manifest(tdir) or {}
            try:
                out.append(TurnInfo(m["turn_id"], m["time"], m.get("summary", ""),
                                    [f["path"] for f in m["files"]], m.get("kind", "apply"),
                                    m.get("undoes"), True, (tdir / "undone").exists()))
            except (KeyError, TypeError, AttributeError):
                self.damaged.append(tdir.name)
        out.sort(key=lambda t: (t.time, t.turn_id), reverse=True)
        return out

    # ---- undo --------------------------------------------------------------------------------

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
                todo = [t for t in turns if t.kind == "apply" and not t.undone]
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
            last_apply = max((t.time for t in turns if t.kind == "apply"), default=0.0)
            todo = [t for t in turns if t.kind == "undo" and not t.undone and t.time >= last_apply]
            if not todo:
                raise UndoError("nothing to redo in this repository",
                                hint="redo re-applies what the last undo restored, until a new "
                                     "turn is applied; `spark-pair undo --list` shows the turns")
            return self._undo_turn(todo[0].turn_id, force, kind="redo")

    def _finish_redo(self, undo_dir: Path) -> None:
        """After a redo committed: the redone turn can be undone again; the undo is spent."""
        manifest = self._manifest(undo_dir) or {}
        redone = manifest.get("undoes")
        if isinstance(redone, str) and _plain_name(redone):
            marker = self.dir / redone / "undone"
            if marker.exists():
                marker.unlink()
                fsio.fsync_dir(marker.parent)
        _mark(undo_dir, "undone")

    def _undo_turn(self, turn_id: str, force: bool, kind: str = "undo") -> list[str]:
        tdir = self.dir / turn_id
        manifest = self._manifest(tdir) or {}
        changes, changed_since = [], []
        try:
            for entry in manifest["files"]:
                rel, full = self.confine(entry["path"])
                now, mode = _read_state(full)
                if _sha(now) != entry["after_sha256"] or (
                        now is not None and mode != entry["after_mode"]):
                    changed_since.append(rel)
                before = _before_image(tdir, entry)
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
            what = "redo" if kind == "redo" else f"undo turn {turn_id}"
            raise UndoError(
                f"cannot {what}: changed since the {'undo' if kind == 'redo' else 'turn'}: "
                f"{', '.join(changed_since)}",
                hint=f"{kind} --force overwrites those changes; `spark-pair undo --list` shows "
                     "turns")
        undo_id = new_turn_id()
        write_changes(self, undo_id, changes, summary=f"{kind} of {turn_id}", kind=kind,
                      undoes=turn_id)
        self._finish(self.dir / undo_id)
        return [e["path"] for e in manifest["files"]]


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


def write_changes(journal: Journal, turn_id: str, changes: list[FileChange], *, summary: str = "",
                  kind: str = "apply", undoes: str | None = None) -> None:
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
                os.replace(full.with_name(_tmp_of(ch)), full)
            else:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(full)
            dirs.append(full.parent)
        current = ""
        fsio.sync_dirs(dirs)
        journal.commit(turn_id, done=kind == "apply")
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


def _not_rolled_back(journal: Journal, turn_id: str, changes: list[FileChange],
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
    if (journal.dir / turn_id / "committed").exists():
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


LOCK_POLL_S = 0.05
RECORD = "record"  # a turn's manifest and before-images
FINISHING = "finishing"  # an undo or redo turn whose markers may not be set yet
CHECKED = "checked"  # in the journal's folder: no earlier version's turn is left unfinished
INDEX = "unfinished"  # in the journal's folder: an entry per turn that may be unfinished
SEAL = b"indexed"  # in the lock's first line: its last holder left the index complete
_BEFORE_NAME = re.compile(r"before/[0-9]+")


def _before_image(tdir: Path, entry: dict) -> bytes | None:
    """The bytes a manifest entry had before its turn (None: the turn created the file). Only
    the turn's own record (or before/<n> files) is read, whatever a damaged or planted
    manifest names."""
    if not entry["existed"]:
        return None
    name = entry["before"]
    if name == RECORD:
        at = entry.get("at")
        if not (isinstance(at, list) and _is_slice(at)):
            raise UndoError(f"the journal entry gives {at!r} as the place of a before-image")
        with open(tdir / RECORD, "rb") as f:
            f.readline()
            f.seek(at[0], os.SEEK_CUR)
            data = f.read(at[1])
        if len(data) != at[1] or _sha(data) != entry.get("before_sha256"):
            raise UndoError(f"the before-image of {entry['path']} in the journal is damaged",
                            hint=f"it cannot be restored from {tdir}; git (git diff, git "
                                 "checkout) still has the committed versions")
        return data
    if not isinstance(name, str) or not _BEFORE_NAME.fullmatch(name):
        raise UndoError(f"the journal entry names {name!r} as a before-image (not one of the "
                        "turn's own); nothing is read from it")
    return (tdir / name).read_bytes()


def _restore_tmp(turn_id: str, entry: dict, full: Path) -> Path:
    """The temp file a rollback restores a file through: the one the turn wrote it through,
    or a name made from the turn and the path, so a crash during recovery leaves no temp file
    the next recovery does not know."""
    tmp = entry.get("tmp")
    if isinstance(tmp, str) and fsio.is_tmp_name_of(full, tmp):
        return full.parent / tmp
    return fsio.tmp_name(full, key=f"{turn_id}/{entry['path']}")


def _write_out(saved: Path, kept: list[dict]) -> Path:
    """The before-images of the kept files as plain files, <turn>.interrupted/before-images/<repo
    path> (the record holds them as byte ranges); returns that folder, or the turn's folder when
    none could be written out. Never a path outside that folder, whatever the manifest says."""
    folder = saved / "before-images"
    wrote = False
    for entry in kept:
        path = entry.get("path")
        if not isinstance(path, str) or "\0" in path:
            continue
        parts = PurePosixPath(path).parts
        if not parts or parts[0] == "/" or any(p in (".", "..") for p in parts):
            continue
        try:
            data = _before_image(saved, entry)
            if data is None:  # the turn made the file: there was nothing before it
                continue
            target = folder.joinpath(*parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            wrote = True
        except (SparkPairError, OSError, KeyError):
            continue
    return folder if wrote else saved


def _remove_tree(folder: Path) -> None:
    """Remove a set-aside turn folder, as far as it goes (shutil loads only when one is)."""
    import shutil

    shutil.rmtree(folder, ignore_errors=True)


def _is_slice(at: list) -> bool:
    """Whether a manifest's `at` is [offset, size]: two whole numbers, not negative."""
    return len(at) == 2 and all(type(n) is int and n >= 0 for n in at)


def _refuse_record(turn: TurnInfo, turns: dict[str, TurnInfo]) -> None:
    """An undo or redo is not undone itself: say which command does what was meant."""
    if turn.kind == "undo":
        raise UndoError(f"turn {turn.turn_id} is an undo of turn {turn.undoes}, not an applied "
                        "turn; nothing was changed",
                        hint="`spark-pair redo` re-applies what the last undo restored; "
                             "`spark-pair undo --list` shows the turns")
    if turn.kind == "redo":
        undo = turns.get(turn.undoes or "")
        applied = undo.undoes if undo is not None else None
        raise UndoError(f"turn {turn.turn_id} is a redo of turn {applied or turn.undoes}, not "
                        "an applied turn; nothing was changed",
                        hint=f"undo the applied turn itself: spark-pair undo --turn {applied}"
                        if applied else "`spark-pair undo --list` shows the turns")


def _turn_name(name: str) -> bool:
    """Whether a name in the journal's folder (or the index) is a turn's (not set aside, not
    the index)."""
    return name != INDEX and not name.endswith((".interrupted", ".discard"))


def _sealed(fd: int, folder: Path) -> bool:
    """Whether the lock's last holder let go with the index of unfinished turns complete (it
    wrote SEAL and the folder's mtime then) and nothing changed the folder since."""
    try:
        words = os.pread(fd, 64, 0).split(b"\n", 1)[0].split()
        return words[1:] == [SEAL, str(os.stat(folder).st_mtime_ns).encode()]
    except OSError:
        return False


def _seal(fd: int, folder: Path) -> None:
    """Say in the lock that the index is complete, as of the folder's mtime now (not synced:
    if it is lost, the next recovery looks at every turn once)."""
    with contextlib.suppress(OSError):
        os.pwrite(fd, f"{os.getpid()} {SEAL.decode()} {os.stat(folder).st_mtime_ns}\n".encode(), 0)


def _plain_name(name: object) -> bool:
    """Whether a manifest's turn reference is a bare name in the journal folder."""
    return (
        isinstance(name, str)
        and name not in ("", ".", "..")
        and os.path.basename(name) == name
        and "\0" not in name
    )


def _try_lock(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _holder(fd: int) -> str:
    """Who holds the lock, as its holder wrote it (a process id)."""
    try:
        pid = int(os.pread(fd, 32, 0).split()[0])
    except (OSError, ValueError, IndexError):
        return "another spark-pair command"
    return f"another spark-pair command (process {pid})"


def _free_tmp_name(target: Path) -> str:
    """A temp file name next to `target` that no file has (so only ours is ever removed)."""
    for _ in range(100):  # 32 random bits: a clash is already unlikely once
        tmp = fsio.tmp_name(target)
        if not os.path.lexists(tmp):
            break
    return tmp.name


def missing_dirs(root: Path, rel: str) -> list[str]:
    """Parent directories of `rel` that do not exist yet (shallowest first)."""
    out = []
    parts = rel.split("/")[:-1]
    for i in range(1, len(parts) + 1):
        d = "/".join(parts[:i])
        if not (root / d).is_dir():
            out.append(d)
    return out
