"""The review pane's rows as text, Textual-free: an operation's line, its hunks' lines, the
refusal under it, wrapped to a width (the pane paints them; `widgets.review`)."""

from __future__ import annotations

import re

from rich.console import Console
from rich.text import Text

from ...base.printable import shown, shown_text
from ...edits.ops import Create, Hunk, Modify, OpKind, Rename
from ..review_state import Entry, Mark, Refusal, Undone

TAGS = {OpKind.MODIFY: ("M", "modify"), OpKind.CREATE: ("+", "create"),
        OpKind.DELETE: ("D", "DELETE"), OpKind.RENAME: ("R", "RENAME")}
MARKS = {Mark.UNDECIDED: ("·", "undecided"), Mark.ACCEPTED: ("✓", "accepted"),
         Mark.REJECTED: ("✗", "rejected")}
REFUSALS = {
    Refusal.NEEDS_CONFIRM: "a delete or rename is accepted with alt+d then alt+y (alt+r "
                           "rejects it)",
    Refusal.BLOCKED: "the file changed on disk: this operation cannot be accepted until the "
                     "session re-checks it (alt+r rejects it, ctrl+r regenerates the turn)",
    Refusal.DECIDED: "already decided",
    Refusal.NOTHING: "nothing to decide yet",
    Refusal.UNFIT: "it is left out; the rest can still be accepted (ctrl+r regenerates the "
                   "turn)",
}
NOT_WRITTEN = ("○", "not written")  # a mark once the turn ended without writing
UNFIT = ("✗", "can't apply")
REFUSED = ("!", "refused")


HEAD = -1  # a row's part: the operation's own line
PROBLEM = -2  # the line under it that says why it was refused
MAX_LINES = 4  # a part wraps onto at most this many lines (the last one then ends in …)
_FIELD_GAP = re.compile(r" {2,}")  # between the fields of a row


def question(entry: Entry) -> str:
    op = entry.op
    if isinstance(op, Rename):
        return f"Rename {shown(op.src)} to {shown(op.dst)}?"
    warn = " It has uncommitted changes!" if getattr(op, "uncommitted", False) else ""
    return f"Delete {shown(op.path)}?{warn}"


def wraps(entry: Entry, part: int) -> bool:
    """Whether a part may need more than one line: an operation's line, its problem, a hunk
    with a reason or placed loosely (a hunk's state comes first in its row; its section may be
    cut)."""
    return part < 0 or bool(entry.reasons.get(part) or entry.unfit.get(part, "").strip()) or (
        loose(entry, part))


def loose(entry: Entry, part: int) -> bool:
    hunks = getattr(entry.op, "hunks", ())
    placement = hunks[part].placement if part < len(hunks) else None
    return placement is not None and placement.loose


def wrapped(text: Text, width: int, indent: int, console: Console) -> list[Text]:
    """`text` in lines of `width` cells, the later ones indented, broken between its fields
    (the runs of two spaces: a state stays whole, "! refused") and only within a field longer
    than a line (a reason); at most MAX_LINES (the last then ends in …). One line when it fits
    or the width is unknown."""
    if width <= indent + 8 or text.cell_len <= width:
        return [text]
    cuts = [m.end() for m in _FIELD_GAP.finditer(text.plain) if m.start() and m.end() < len(text)]
    lines: list[Text] = []
    line: Text | None = None
    for field in text.divide(cuts):
        field.rstrip()
        room = width - (indent if lines else 0)
        if line is not None and line.cell_len + 2 + field.cell_len <= room:
            line.append("  ")
            line.append_text(field)
            continue
        if line is not None:
            lines.append(line)
        room = width - (indent if lines else 0)
        if field.cell_len <= room:
            line = field
            continue
        *whole, line = field.wrap(console, width - indent, overflow="fold", no_wrap=False)
        lines += whole
    if line is not None:
        lines.append(line)
    if len(lines) > MAX_LINES:
        lines = lines[:MAX_LINES]
        lines[-1].append(" …")
    for line in lines[1:]:
        line.rstrip()
        line.pad_left(indent)
    return [line.copy() for line in lines]


def row_text(entry: Entry, part: int, closed: bool = False) -> Text:
    """A hunk's row, or the problem row, of an operation (`closed`: the turn wrote nothing)."""
    if part == PROBLEM:
        return Text("  ! " + entry.problem, style="bold", no_wrap=True, overflow="ellipsis")
    assert isinstance(entry.op, Modify)
    unfit = entry.unfit.get(part, "") if None not in entry.unfit else " "
    mark = entry.hunks[part]
    refused = bool(entry.problem) and entry.sent and mark is Mark.UNDECIDED
    return hunk_line(entry.op.hunks[part], mark, entry.reasons.get(part, ""),
                      entry.amended.get(part), unfit=unfit, closed=closed and not entry.applied,
                      refused=refused)


def label(entry: Entry) -> str:
    op = entry.op
    if isinstance(op, Rename):
        return f"the rename of {shown(op.src)}"
    return f"the {entry.kind} of {shown(op.path)}"


def entry_line(entry: Entry, undone: Undone | None = None, closed: bool = False) -> Text:
    op = entry.op
    letter, word = TAGS[entry.kind]
    style = {OpKind.MODIFY: "", OpKind.CREATE: "bold", OpKind.DELETE: "bold reverse",
             OpKind.RENAME: "bold underline"}[entry.kind]
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(f"[{letter}] {word} ", style=style)
    if isinstance(op, Rename):
        text.append(f"{shown(op.src)} → {shown(op.dst)}")
        if op.hunks:
            text.append(f" · {len(op.hunks)} hunk(s)")
    else:
        text.append(shown(op.path))
    if isinstance(op, Create):
        lines = op.content.count("\n") + (bool(op.content) and not op.content.endswith("\n"))
        text.append(f" · {lines} line(s)")
    unwritten = closed and not entry.applied
    if None in entry.unfit:
        text.append("  {} {}".format(*UNFIT), style="bold")
    elif entry.per_hunk and unwritten:
        text.append(" · {} {}".format(*NOT_WRITTEN))
    elif entry.per_hunk:
        accepted = entry.hunks.count(Mark.ACCEPTED)
        text.append(f" · {accepted}/{len(entry.hunks)} hunk(s) accepted")
        if entry.unfit:
            text.append(f" · {len(entry.unfit)} can't apply", style="bold")
    else:
        marker, words = MARKS[entry.mark]
        if entry.mark is Mark.UNDECIDED and entry.needs_confirm:
            words = "needs alt+d"
        if entry.content is not None:
            words = "edited"
        if entry.problem and entry.sent and entry.mark is Mark.UNDECIDED:
            marker, words = REFUSED  # (the row under it says why)
        if unwritten and entry.mark is not Mark.REJECTED:
            marker, words = NOT_WRITTEN
        text.append(f"  {marker} {words}")
        if entry.reasons.get(None):
            text.append(f"  why: {shown_text(entry.reasons[None])}", style="italic")
    if entry.blocked or (entry.stale and not entry.again):
        text.append("  STALE: changed on disk" + (" (blocked)" if entry.blocked else ""),
                    style="bold")
    elif entry.again:
        text.append("  changed on disk, asked again")
    if entry.applied:
        text.append(f"  {undone}" if undone else "  written", style="bold")
    if getattr(op, "uncommitted", False):
        text.append("  has uncommitted changes!", style="bold")
    return text


def hunk_line(hunk: Hunk, mark: Mark, reason: str = "", edited: Hunk | None = None, *,
               unfit: str = "", closed: bool = False, refused: bool = False) -> Text:
    """`edited`: the person's version of the hunk (alt+e), whose header and counts are shown
    (where the model's was placed stays said: its old side is the same); `unfit`: why the
    hunk can not apply (" ": its operation's row says why); `closed`: the turn ended without
    writing it; `refused`: the session refused its operation (the row under it says why)."""
    marker, words = MARKS[mark]
    placement = hunk.placement
    if edited is not None:
        words, hunk = "edited", edited
    if unfit:
        marker, words = UNFIT
        reason = unfit.strip()
    elif closed and mark is not Mark.REJECTED:
        marker, words = NOT_WRITTEN
    elif refused:
        marker, words = REFUSED
    head = "@@"
    if hunk.old_start is not None:
        head = f"@@ -{hunk.old_start},{hunk.old_len} +{hunk.new_start},{hunk.new_len} @@"
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(f"  {marker} {words:<9} ", style="bold" if unfit else "")
    text.append(f"{head} +{hunk.added} -{hunk.removed}")
    if hunk.section:
        text.append(f"  {shown_text(hunk.section)}", style="italic")
    if placement is not None and placement.loose:
        text.append(f"  ~ {placement.describe()}", style="bold")
    if reason:
        text.append(f"  why: {shown_text(reason)}", style="italic")
    return text
