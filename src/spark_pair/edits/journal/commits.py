"""What git knows of a journaled turn: the files it wrote (for a commit of exactly the turn) and
the commit that holds it.

<turn id>/git-commit holds the id of the commit a turn went into (written by spark-pair after
the commit, in the journal's folder, never in the repository's .git).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ...base.errors import UndoError
from .. import fsio
from . import record

COMMIT = "git-commit"


@dataclass(frozen=True, slots=True)
class TurnFile:
    """A file a turn wrote: its bytes and mode before (None: absent) and the hash and mode of
    what the turn left (after_sha256 of None bytes: the turn removed it)."""

    path: str
    before: bytes | None
    before_mode: int | None
    after_sha256: str | None
    after_mode: int | None


def turn_files(tdir: Path) -> list[TurnFile]:
    """The files of the turn in `tdir`, in the order the turn wrote them."""
    manifest = record.read_manifest(tdir)
    if manifest is None:
        raise UndoError(f"the journal entry of turn {tdir.name} cannot be read")
    out = []
    try:
        for entry in manifest["files"]:
            before = record.before_image(tdir, entry)
            out.append(TurnFile(entry["path"], before,
                                entry["mode"] if before is not None else None,
                                entry["after_sha256"], entry["after_mode"]))
    except (OSError, KeyError, TypeError, ValueError) as exc:
        raise UndoError(f"the journal entry of turn {tdir.name} is damaged "
                        f"({type(exc).__name__}: {exc})") from exc
    return out


def note_commit(tdir: Path, commit: str) -> None:
    """Remember the commit a turn went into (durably)."""
    fsio.atomic_write(tdir / COMMIT, commit.encode() + b"\n", 0o600)


def commit_of(tdir: Path) -> str | None:
    """The commit a turn went into, if it was committed by spark-pair."""
    try:
        text = (tdir / COMMIT).read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return text if text and all(c in "0123456789abcdef" for c in text) else None
