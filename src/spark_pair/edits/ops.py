"""File operations parsed from a model's diff. Plain data; applying lives in edits.apply."""

from __future__ import annotations

from enum import StrEnum

from ..values import Frozen, Value, set_field
from .paths import content_hash as content_hash  # its home is .paths
from .paths import shown


class OpKind(StrEnum):
    MODIFY = "modify"
    CREATE = "create"
    DELETE = "delete"
    RENAME = "rename"


class HunkHeader(Frozen):
    """A hunk's `@@` line as the model wrote it (numbers may be wrong or None)."""

    __slots__ = ("old_start", "old_len", "new_start", "new_len", "section")
    old_start: int | None
    old_len: int | None
    new_start: int | None
    new_len: int | None
    section: str

    def __init__(self, old_start: int | None, old_len: int | None, new_start: int | None,
                 new_len: int | None, section: str = "") -> None:
        set_field(self, "old_start", old_start)
        set_field(self, "old_len", old_len)
        set_field(self, "new_start", new_start)
        set_field(self, "new_len", new_len)
        set_field(self, "section", section)


class Hunk(Value):
    """One hunk. `lines` keep their marker: ' ' context, '-' removed, '+' added (no newline).

    `old_start` / `new_start` are the model's claims and may be wrong or missing (None).
    `no_newline_old` / `no_newline_new`: the old/new side ends without a final newline.
    """

    __slots__ = ("old_start", "old_len", "new_start", "new_len", "lines", "section",
                 "no_newline_old", "no_newline_new")
    old_start: int | None
    old_len: int | None
    new_start: int | None
    new_len: int | None
    lines: list[str]
    section: str  # text after the second @@ (function name), display only
    no_newline_old: bool
    no_newline_new: bool

    def __init__(self, old_start: int | None, old_len: int | None, new_start: int | None,
                 new_len: int | None, lines: list[str] | None = None, section: str = "",
                 no_newline_old: bool = False, no_newline_new: bool = False) -> None:
        self.old_start = old_start
        self.old_len = old_len
        self.new_start = new_start
        self.new_len = new_len
        self.lines = [] if lines is None else lines
        self.section = section
        self.no_newline_old = no_newline_old
        self.no_newline_new = no_newline_new

    def with_lines(self, lines: list[str]) -> Hunk:
        """A copy holding `lines` instead."""
        return Hunk(self.old_start, self.old_len, self.new_start, self.new_len, lines,
                    self.section, self.no_newline_old, self.no_newline_new)

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


class Modify(Value):
    __slots__ = ("path", "hunks", "base_hash")
    path: str
    hunks: list[Hunk]
    base_hash: str | None

    def __init__(self, path: str, hunks: list[Hunk], base_hash: str | None = None) -> None:
        self.path = path
        self.hunks = hunks
        self.base_hash = base_hash

    def summary(self) -> str:
        add = sum(h.added for h in self.hunks)
        rem = sum(h.removed for h in self.hunks)
        return f"modify {shown(self.path)} · {len(self.hunks)} hunk(s) +{add} -{rem}"


class Create(Value):
    __slots__ = ("path", "content", "base_hash")
    path: str
    content: str
    base_hash: str | None  # None: the file must not exist

    def __init__(self, path: str, content: str, base_hash: str | None = None) -> None:
        self.path = path
        self.content = content
        self.base_hash = base_hash

    def summary(self) -> str:
        text = self.content
        lines = text.count("\n") + (bool(text) and not text.endswith("\n"))
        return f"create {shown(self.path)} · {lines} line(s)"


class Delete(Value):
    """`lines`: the lines the reply shows it removes (markers stripped); None when it shows none
    (a header-only delete). Applied only when they are the file's whole content, or, with
    none shown, when the file is empty or exactly what the model was shown (`base_hash`)."""

    __slots__ = ("path", "base_hash", "uncommitted", "lines", "binary")
    path: str
    base_hash: str | None
    uncommitted: bool  # the file has changes git does not have: the approver must warn
    lines: list[str] | None
    binary: bool  # the reply says so (`Binary files a/x and /dev/null differ`)

    def __init__(self, path: str, base_hash: str | None = None, uncommitted: bool = False,
                 lines: list[str] | None = None, binary: bool = False) -> None:
        self.path = path
        self.base_hash = base_hash
        self.uncommitted = uncommitted
        self.lines = lines
        self.binary = binary

    @property
    def removed(self) -> int:
        """The lines the reply shows removed (0 for a header-only delete)."""
        return len(self.lines or ())

    def summary(self) -> str:
        warn = " (has uncommitted changes!)" if self.uncommitted else ""
        return f"DELETE {shown(self.path)}{warn}"


class Rename(Value):
    __slots__ = ("src", "dst", "hunks", "base_hash")
    src: str
    dst: str
    hunks: list[Hunk]
    base_hash: str | None

    def __init__(self, src: str, dst: str, hunks: list[Hunk] | None = None,
                 base_hash: str | None = None) -> None:
        self.src = src
        self.dst = dst
        self.hunks = [] if hunks is None else hunks
        self.base_hash = base_hash

    @property
    def path(self) -> str:
        return self.src

    def summary(self) -> str:
        edits = f" · {len(self.hunks)} hunk(s)" if self.hunks else ""
        return f"RENAME {shown(self.src)} → {shown(self.dst)}{edits}"


Operation = Modify | Create | Delete | Rename


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
