"""Recovery: an interrupted turn rolled back, an undo or redo cut short finished.

A turn folder without `committed` was interrupted: its rollback puts back the before-image of
each file that still holds what the turn wrote, and keeps (and names) a file changed since;
the turn then moves to <turn id>.interrupted, the kept files' before-images written out as
plain files in its before-images/<path>. An undo or redo left `finishing` gets its markers.
Recovery reads only the index of unfinished turns when the lock says it is complete (see the
package's docstring), else every turn folder, and removes only the temp files the manifest
names and the ones its own restores use (named from the turn and the path).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from ...base.errors import ApplyError, SparkPairError
from .. import fsio
from ..paths import content_hash
from . import record
from .folder import JournalFolder, remove_tree
from .record import COMMITTED, FINISHING, INDEX, UNDONE, TurnKind


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


class Recovering(JournalFolder):
    """A journal folder that rolls back interrupted turns and finishes undos and redos."""

    def recover(self) -> list[Recovery]:
        """Roll back any turn a crash interrupted; finish marking undone turns. Only those
        turns are read: a committed apply is never looked into. With the index of unfinished
        turns known complete, only the turns it names are looked at; otherwise every turn
        folder is."""
        done: list[Recovery] = []
        try:
            names = os.listdir(self.dir / INDEX)
        except (FileNotFoundError, NotADirectoryError):
            names = []
        for name in names:
            if record.turn_name(name):
                self._recover_turn(self.dir / name, done)
                remove_tree(self.dir / f"{name}.discard")  # a rollback cut short leaves it
            self._close(name)
        if not self._indexed:
            listing = self._listing()
            if listing is None:
                return done
            turns, discards = listing
            for name in discards:
                remove_tree(self.dir / name)
            for name in turns:
                self._recover_turn(self.dir / name, done)
        self._recovered = True
        return [r for r in done if r.restored or r.kept]

    def _recover_turn(self, tdir: Path, done: list[Recovery]) -> None:
        """Roll back the turn if it is not committed; finish it if it is left `finishing`."""
        if not os.path.exists(os.path.join(tdir, COMMITTED)):
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

    def rollback(self, turn_id: str) -> Recovery:
        """Put the files of an unfinished turn back to their before-images, then forget the turn.

        Only a file still holding what the turn wrote (or its before-image) is touched; one that
        changed since (the user went on working after a crash) is kept as it is, and the turn's
        before-images are then kept in `<turn>.interrupted` for the user to take from. An
        OSError (a disk or permission fault) leaves the turn as it is, to be rolled back again
        by the next recovery.
        """
        tdir = self.dir / turn_id
        if (tdir / COMMITTED).exists():  # its commit failed to be synced: it is not applied
            (tdir / COMMITTED).unlink()
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
            now, _ = read_state(full)
            before = record.before_image(tdir, entry)
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
        if content_hash(now) != entry["after_sha256"]:
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

    def _finish(self, tdir: Path) -> None:
        """Set the markers of a committed undo or redo turn (a crash may have come first),
        then drop its `finishing` marker."""
        manifest = self._manifest(tdir)
        if manifest and record.plain_name(manifest.get("undoes")):
            target = self.dir / manifest["undoes"]
            kind = manifest.get("kind")
            # (an undo that was redone is spent)
            if (target.is_dir() and not (target / UNDONE).exists()
                    and kind in (TurnKind.UNDO, TurnKind.REDO)
                    and not (kind == TurnKind.UNDO and (tdir / UNDONE).exists())):
                self._remove_new_dirs(self._manifest(target) or {"files": []})
                if kind == TurnKind.REDO:
                    self._finish_redo(target)
                else:
                    record.mark(target, UNDONE)
        # not synced: if this removal is lost, the next recovery sets the same markers again
        (tdir / FINISHING).unlink(missing_ok=True)
        self._close(tdir.name)

    def _finish_redo(self, undo_dir: Path) -> None:
        """After a redo committed: the redone turn can be undone again; the undo is spent."""
        manifest = self._manifest(undo_dir) or {}
        redone = manifest.get("undoes")
        if isinstance(redone, str) and record.plain_name(redone):
            marker = self.dir / redone / UNDONE
            if marker.exists():
                marker.unlink()
                fsio.fsync_dir(marker.parent)
        record.mark(undo_dir, UNDONE)


def read_state(full: Path) -> tuple[bytes | None, int | None]:
    """A file's bytes and permission bits (None, None: absent)."""
    try:
        return full.read_bytes(), os.stat(full).st_mode & 0o7777
    except FileNotFoundError:
        return None, None


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
            data = record.before_image(saved, entry)
            if data is None:  # the turn made the file: there was nothing before it
                continue
            target = folder.joinpath(*parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            wrote = True
        except (SparkPairError, OSError, KeyError):
            continue
    return folder if wrote else saved
