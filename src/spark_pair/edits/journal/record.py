"""A turn's record on disk: its manifest and before-images in one file, and its markers.

<turn id>/record holds on line 1 the manifest (JSON): turn id, time, summary, kind, undoes,
repo, and per file: path, existed, before ("record") and at ([offset, size] of its
before-image after line 1), before_sha256, mode, after_sha256, after_mode, new_dirs, tmp (the
name of the temp file the turn writes it through); then the before-images, back to back.
A marker (committed, undone, finishing) is a second name of the record, or an empty file
where the file system has no hard links.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from ...base.errors import UndoError
from .. import fsio
from ..paths import content_hash

RECORD = "record"  # a turn's manifest and before-images
COMMITTED = "committed"  # every file of the turn is in place
UNDONE = "undone"  # an undo of this turn (on an undo turn: a redo of it) committed
FINISHING = "finishing"  # an undo or redo turn whose markers may not be set yet
INDEX = "unfinished"  # in the journal's folder: an entry per turn that may be unfinished


class TurnKind(StrEnum):
    """What a turn did (its manifest's "kind")."""

    APPLY = "apply"  # the edits of a model's reply
    UNDO = "undo"  # put back a turn's before-images (undoes = that turn)
    REDO = "redo"  # put back an undo's before-images (undoes = that undo turn)


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
    kind: TurnKind
    undoes: str | None
    committed: bool
    undone: bool

    def to_dict(self) -> dict[str, object]:
        return {"turn_id": self.turn_id, "time": self.time, "summary": self.summary,
                "files": self.files, "kind": self.kind, "undoes": self.undoes,
                "undone": self.undone}


def encode(turn_id: str, root: Path, changes: list[FileChange], *, summary: str,
           kind: TurnKind, undoes: str | None) -> bytes:
    """The record of a turn: one line of manifest, then every before-image. Sets each change's
    temp file name (a name next to its target that no file has)."""
    files, body, at = [], [], 0
    for ch in changes:
        if ch.after is not None:
            ch.tmp = _free_tmp_name(root / ch.path)
        entry: dict[str, object] = {"path": ch.path, "existed": ch.before is not None,
                                    "before": None, "mode": ch.before_mode,
                                    "after_sha256": content_hash(ch.after),
                                    "after_mode": ch.after_mode,
                                    "new_dirs": ch.new_dirs, "tmp": ch.tmp}
        if ch.before is not None:
            entry.update(before=RECORD, at=[at, len(ch.before)],
                         before_sha256=content_hash(ch.before))
            body.append(ch.before)
            at += len(ch.before)
        files.append(entry)
    manifest = {"turn_id": turn_id, "time": time.time(), "summary": summary[:500],
                "kind": kind, "undoes": undoes, "repo": str(root), "files": files}
    head = json.dumps(manifest).encode()  # one line: JSON escapes every line break
    return head + b"\n" + b"".join(body)


def read_manifest(tdir: Path) -> dict | None:
    """The turn's manifest; None when it is missing or unreadable, or when its record is
    shorter than the manifest says (a crash while it was written, before any file of the
    repository was touched)."""
    try:
        with open(tdir / RECORD, "rb") as f:
            head = f.readline()
            manifest = json.loads(head)
            size = os.fstat(f.fileno()).st_size - len(head)
        ends = [sum(at) for entry in manifest["files"]
                if isinstance(at := entry.get("at"), list) and is_slice(at)]
        return manifest if max(ends, default=0) <= size else None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def before_image(tdir: Path, entry: dict) -> bytes | None:
    """The bytes a manifest entry had before its turn (None: the turn created the file). Only
    the turn's own record is read, whatever a damaged or planted manifest names."""
    if not entry["existed"]:
        return None
    name = entry["before"]
    if name != RECORD:
        raise UndoError(f"the journal entry names {name!r} as a before-image (not the turn's "
                        "own record); nothing is read from it")
    at = entry.get("at")
    if not (isinstance(at, list) and is_slice(at)):
        raise UndoError(f"the journal entry gives {at!r} as the place of a before-image")
    with open(tdir / RECORD, "rb") as f:
        f.readline()
        f.seek(at[0], os.SEEK_CUR)
        data = f.read(at[1])
    if len(data) != at[1] or content_hash(data) != entry.get("before_sha256"):
        raise UndoError(f"the before-image of {entry['path']} in the journal is damaged",
                        hint=f"it cannot be restored from {tdir}; git (git diff, git "
                             "checkout) still has the committed versions")
    return data


def is_slice(at: list) -> bool:
    """Whether a manifest's `at` is [offset, size]: two whole numbers, not negative."""
    return len(at) == 2 and all(type(n) is int and n >= 0 for n in at)


def mark(tdir: Path, name: str) -> None:
    """Put the marker `name` (committed, undone) in a turn's folder, durably."""
    put_marker(tdir / RECORD, tdir / name)
    fsio.fsync_dir(tdir)


def put_marker(source: Path, marker: Path) -> None:
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


def turn_name(name: str) -> bool:
    """Whether a name in the journal's folder (or the index) is a turn's (not set aside, not
    the index)."""
    return name != INDEX and not name.endswith((".interrupted", ".discard"))


def plain_name(name: object) -> bool:
    """Whether a manifest's turn reference is a bare name in the journal folder."""
    return (
        isinstance(name, str)
        and name not in ("", ".", "..")
        and os.path.basename(name) == name
        and "\0" not in name
    )


def _free_tmp_name(target: Path) -> str:
    """A temp file name next to `target` that no file has (so only ours is ever removed)."""
    for _ in range(100):  # 32 random bits: a clash is already unlikely once
        tmp = fsio.tmp_name(target)
        if not os.path.lexists(tmp):
            break
    return tmp.name
