"""File operations parsed from a model's diff. Plain data; applying lives in edits.apply."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import NamedTuple

from ..base.printable import shown
from .paths import content_hash as content_hash  # its home is .paths
from .placement import Loose, Placement


class OpKind(StrEnum):
    MODIFY = "modify"
    CREATE = "create"
    DELETE = "delete"
    RENAME = "rename"


class HunkHeader(NamedTuple):
    """A hunk's `@@` line as the model wrote it (numbers may be wrong or None)."""

    old_start: int | None
    old_len: int | None
    new_start: int | None
    new_len: int | None
    section: str = ""


@dataclass(slots=True)
class Hunk:
    """One hunk. `lines` keep their marker: ' ' context, '-' removed, '+' added (no newline).

    `old_start` / `new_start` are the model's claims and may be wrong or missing (None).
    `no_newline_old` / `no_newline_new`: the old/new side ends without a final newline.
    `placement`: how it was placed in its file, set each time it is planned (None before).
    """

    old_start: int | None
    old_len: int | None
    new_start: int | None
    new_len: int | None
    lines: list[str] = field(default_factory=list)
    section: str = ""  # text after the second @@ (function name), display only
    no_newline_old: bool = False
    no_newline_new: bool = False
    # the parser's tolerances (e.g. recounted), and where it went once planned (edits.apply)
    loose: tuple[Loose, ...] = field(default=(), compare=False)
    placement: Placement | None = field(default=None, compare=False)

    @property
    def header(self) -> HunkHeader:
        """A snapshot of the header (the hunk itself may still grow)."""
        return HunkHeader(self.old_start, self.old_len, self.new_start, self.new_len,
                          self.section)

    @property
    def old_lines(self) -> list[str]:
        return [ln[1:] for ln in self.lines if ln[:1] in (" ", "-")]

    @property
    def new_lines(self) -> list[str]:
        return [ln[1:] for ln in self.lines if ln[:1] in (" ", "+")]

    @property
    def added(self) -> int:
        return sum(1 for ln in self.lines if ln[:1] == "+")

    @property
    def removed(self) -> int:
        return sum(1 for ln in self.lines if ln[:1] == "-")


@dataclass(slots=True)
class Modify:
    path: str
    hunks: list[Hunk]
    base_hash: str | None = None

    def summary(self) -> str:
        add = sum(h.added for h in self.hunks)
        rem = sum(h.removed for h in self.hunks)
        return f"modify {shown(self.path)} · {len(self.hunks)} hunk(s) +{add} -{rem}"


@dataclass(slots=True)
class Create:
    path: str
    content: str
    base_hash: str | None = None  # None: the file must not exist

    def summary(self) -> str:
        text = self.content
        lines = text.count("\n") + (bool(text) and not text.endswith("\n"))
        return f"create {shown(self.path)} · {lines} line(s)"


@dataclass(slots=True)
class Delete:
    """`lines`: the lines the reply shows it removes (markers stripped); None when it shows none
    (a header-only delete). Applied only when they are the file's whole content, or, with
    none shown, when the file is empty or exactly what the model was shown (`base_hash`)."""

    path: str
    base_hash: str | None = None
    uncommitted: bool = False  # the file has changes git does not have: the approver must warn
    lines: list[str] | None = None
    binary: bool = False  # the reply says so (`Binary files a/x and /dev/null differ`)

    @property
    def removed(self) -> int:
        """The lines the reply shows removed (0 for a header-only delete)."""
        return len(self.lines or ())

    def summary(self) -> str:
        warn = " (has uncommitted changes!)" if self.uncommitted else ""
        return f"DELETE {shown(self.path)}{warn}"


@dataclass(slots=True)
class Rename:
    src: str
    dst: str
    hunks: list[Hunk] = field(default_factory=list)
    base_hash: str | None = None

    @property
    def path(self) -> str:
        return self.src

    def summary(self) -> str:
        edits = f" · {len(self.hunks)} hunk(s)" if self.hunks else ""
        return f"RENAME {shown(self.src)} → {shown(self.dst)}{edits}"


Operation = Modify | Create | Delete | Rename


def loose_hunks(ops: Sequence[Operation]) -> list[tuple[int, int, Placement]]:
    """(operation index, hunk index, placement) of every hunk placed loosely."""
    out = []
    for i, op in enumerate(ops):
        for j, hunk in enumerate(getattr(op, "hunks", ())):
            p = hunk.placement
            if p is not None and p.loose:
                out.append((i, j, p))
    return out


def op_kind(op: Operation) -> OpKind:
    match op:
        case Modify():
            return OpKind.MODIFY
        case Create():
            return OpKind.CREATE
        case Delete():
            return OpKind.DELETE
        case Rename():
            return OpKind.RENAME
    raise TypeError(f"not an operation: {op!r}")


def op_paths(op: Operation) -> list[str]:
    """Every repo path an operation touches."""
    return [op.src, op.dst] if isinstance(op, Rename) else [op.path]
