"""The live diff's rows: what a row is, how a line is made safe to paint, the headers of files
and hunks, and how a row is cut at the view's edge (plain Python and Rich; the view paints)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from enum import IntEnum, StrEnum
from typing import NamedTuple, overload

from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip

from ...base.printable import shown, shown_text
from ...edits.ops import Create, Delete, Hunk, HunkHeader, Modify, Operation, Rename

CACHE_ROWS = 512  # strips kept; a rebuilt row costs tens of microseconds
BARS_S = 0.25  # while the diff grows, its scrollbars are repainted at most this often
TAB = 4
NOTE_ROWS = 8  # a refusal's rows at most (a conflict lists the lines it looked for)
MORE, LESS = "→", "←"  # a row goes on past the right edge / starts left of the view
ELIDE_KEEP = 8  # columns kept before `…` when a row's change lies past the edge
_MARK = Style(bold=True)


class HunkMark(StrEnum):
    """A decision shown on a hunk header (set by the review pane)."""

    ACCEPTED = "accepted"
    REJECTED = "rejected"
    STALE = "stale"
    UNFIT = "unfit"  # the tool left it out: its lines are not in the file (no one rejected it)


class Kind(IntEnum):
    PROSE = 0
    FILE = 1
    HUNK = 2
    ADDED = 3
    REMOVED = 4
    CONTEXT = 5
    NOTE = 6


class Row(NamedTuple):
    kind: Kind
    text: str  # escaped and tab-expanded, ready to paint
    op: int = -1
    hunk: int = -1


_KINDS = tuple(Kind)  # by value


class Rows(Sequence[Row]):
    """The rows of a turn, kept as plain tuples of str and int: the collector stops tracking
    those, so a huge diff adds nothing to a full collection's walk (a `Row` or an enum member
    in it would keep every row tracked)."""

    def __init__(self) -> None:
        self._items: list[tuple[int, str, int, int]] = []

    def __len__(self) -> int:
        return len(self._items)

    @overload
    def __getitem__(self, index: int) -> Row: ...
    @overload  # (mypy reports an Any of Sequence's own overloads here)
    def __getitem__(self, index: slice) -> list[Row]: ...  # type: ignore[explicit-any]
    def __getitem__(self, index: int | slice) -> Row | list[Row]:  # type: ignore[explicit-any]
        if isinstance(index, slice):
            return [Row(_KINDS[k], text, op, hunk) for k, text, op, hunk in self._items[index]]
        k, text, op, hunk = self._items[index]
        return Row(_KINDS[k], text, op, hunk)

    def __iter__(self) -> Iterator[Row]:
        return (Row(_KINDS[k], text, op, hunk) for k, text, op, hunk in self._items)

    def __setitem__(self, index: int, row: Row) -> None:
        self._items[index] = (int(row.kind), row.text, row.op, row.hunk)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Rows) and self._items == other._items

    def append(self, row: Row) -> None:
        self._items.append((int(row.kind), row.text, row.op, row.hunk))


_OP_WORDS = {"modify": "modify", "create": "create", "delete": "DELETE", "rename": "rename"}
_MARK_TEXT = {HunkMark.ACCEPTED: "✓ accepted", HunkMark.REJECTED: "✗ rejected",
              HunkMark.STALE: "! stale", HunkMark.UNFIT: "✗ can't apply (not a rejection)"}
_MARKER_KIND = {"+": Kind.ADDED, "-": Kind.REMOVED}
# lines of diff syntax never shown as prose: fences, headers, git extended headers, envelopes
_SYNTAX = ("```", "~~~", "--- ", "+++ ", "@@", "diff --git", "*** ", "index ", "old mode ",
           "new mode ", "new file mode", "deleted file mode", "similarity index",
           "rename from", "rename to", "copy from", "copy to", "Binary files", "\\ No newline")
_FENCES = ("```", "~~~")
_DIFF_START = ("```diff", "```patch", "~~~diff", "--- ", "+++ ", "@@", "diff --git", "*** ")
_DIFF_FIRST = frozenset(" +-\\@")
# NO_COLOR: text attributes alone tell the rows apart (the markers stay too)
_NO_COLOR = {Kind.FILE: Style(bold=True, reverse=True), Kind.HUNK: Style(underline=True),
             Kind.ADDED: Style(bold=True), Kind.REMOVED: Style(dim=True),
             Kind.NOTE: Style(bold=True, italic=True), Kind.PROSE: Style(italic=True)}


def _cut(strip: Strip, scroll_x: int, width: int, fill: Style, style: Style) -> Strip:
    """The part of a row in view; where the row goes on past the right edge its last column
    says so (`→`), and `←` where it starts left of the view (scrolled sideways)."""
    out = strip.crop_extend(scroll_x, scroll_x + width, fill)
    return mark_edges(out, strip.cell_length, scroll_x, style)


def mark_edges(out: Strip, total: int, scroll_x: int, style: Style) -> Strip:
    """`out`, the part in view of a row `total` cells long, with `→` in its last column when
    the row goes on past the right edge and `←` in its first when it starts left of the view."""
    width = out.cell_length
    if width < 4:
        return out
    if total > scroll_x + width:
        out = Strip.join([out.crop(0, width - 1), Strip([Segment(MORE, style + _MARK)])])
    if scroll_x > 0 and total > scroll_x:
        out = Strip.join([Strip([Segment(LESS, style + _MARK)]), out.crop(1, width)])
    return out


def _bar(overflow: str, needed: bool) -> bool:
    return overflow == "scroll" or (overflow == "auto" and needed)


def content_text(line: str) -> str:
    """A diff or prose line as safe to paint: tabs expanded, control and bidi characters
    escaped (so a line can neither drive the terminal nor reorder what is shown)."""
    text = shown_text(line)  # escaped first, so tab stops count what is painted
    return text.expandtabs(TAB) if "\t" in text else text


def hunk_header_text(hunk: HunkHeader | Hunk) -> str:
    """`@@ -a,b +c,d @@ section` from a hunk's numbers (`@@ … @@` when they are missing)."""
    if hunk.old_start is None or hunk.new_start is None:
        nums = "…"
    else:
        nums = f"-{hunk.old_start},{hunk.old_len} +{hunk.new_start},{hunk.new_len}"
    section = f" {content_text(hunk.section)}" if hunk.section else ""
    return f"@@ {nums} @@{section}"


def file_header_text(op_kind: str, path: str, new_path: str | None) -> str:
    word = _OP_WORDS.get(str(op_kind), str(op_kind))
    name = shown(path) if not new_path else f"{shown(path)} → {shown(new_path)}"
    return f"{word:<6}  {name}"


def op_detail(op: Operation) -> str:
    """What an operation holds, for its file header: hunks and lines, a new file's length."""
    match op:
        case Modify(hunks=hunks) | Rename(hunks=hunks) if hunks:
            added = sum(h.added for h in hunks)
            removed = sum(h.removed for h in hunks)
            return f"{len(hunks)} hunk{'s' if len(hunks) != 1 else ''} +{added} -{removed}"
        case Create(content=content):
            lines = content.count("\n") + (bool(content) and not content.endswith("\n"))
            return f"new file, {lines} line{'s' if lines != 1 else ''}"
        case Delete(uncommitted=True):
            return "has uncommitted changes!"
    return ""


def elide(strip: Strip, spans: Sequence[tuple[int, int]] | None, width: int,
          style: Style) -> Strip:
    """A removed or added row whose changed words (`spans`) all lie past the right edge (a
    `-`/`+` pair that looks the same in view): its middle is left out (`…`) so that the first
    change is in view; scrolling sideways shows the whole row."""
    if not spans or spans[0][0] < width - 2:
        return strip
    keep = min(ELIDE_KEEP, width // 4)  # the marker and the indentation
    start = max(keep + 1, spans[0][0] - width // 3)
    return Strip.join([strip.crop(0, keep), Strip([Segment("…", style + _MARK)]),
                       strip.crop(start, strip.cell_length)])
