"""The live diff pane: a Line API view that grows by frame-sized batches of session events.

Work per token is O(1) (text is only appended to a list); a frame costs O(visible rows): each
row becomes a `Strip` when it is first painted and is kept in a bounded LRU cache, with its
border and the app's filters (`render_lines`): a frame that scrolls the tail repaints only the
rows it has not shown before, and the screen reuses what it made of the others.
"""

from __future__ import annotations

import textwrap
import time
from collections.abc import Iterable

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.cache import LRUCache
from textual.geometry import Size
from textual.strip import Strip
from textual.timer import Timer

from ...base.printable import shown
from ...edits.ops import Modify, Operation
from ...edits.parse_events import FileFinished, FileStarted, HunkStarted, LineAdded
from ...protocol.events import Completed, Failed, ModelChanged, Rewound, Started, TextDelta
from ...session.events import (
    OperationProposed,
    Refused,
    RepairFinished,
    RepairStarted,
    SessionEvent,
    Stale,
    TurnFinished,
)
from .. import repair_rows
from ..textual_private import anchor_released
from ..typed import pass_typed
from ..word_marks import WordMarks
from .diff_rows import (  # noqa: F401 - re-exported: the view's rows and helpers
    _DIFF_FIRST,
    _DIFF_START,
    _FENCES,
    _MARK,
    _MARK_TEXT,
    _MARKER_KIND,
    _NO_COLOR,
    _OP_WORDS,
    _SYNTAX,
    BARS_S,
    CACHE_ROWS,
    ELIDE_KEEP,
    LESS,
    MORE,
    NOTE_ROWS,
    TAB,
    HunkMark,
    Kind,
    Row,
    Rows,
    _bar,
    _cut,
    content_text,
    elide,
    file_header_text,
    hunk_header_text,
    op_detail,
)
from .framed import FramedRows
from .scrollbars import bars_for, tell_scrollbars


class DiffView(FramedRows, can_focus=True):
    """The diff of the current turn as it streams, with the model's prose around it."""

    PASSES_TYPED = True  # text typed here goes to the prompt (SparkPairApp.on_event)

    COMPONENT_CLASSES = {
        "diff-view--prose", "diff-view--file", "diff-view--hunk", "diff-view--added",
        "diff-view--removed", "diff-view--context", "diff-view--note", "diff-view--partial",
        "diff-view--accepted", "diff-view--rejected", "diff-view--stale", "diff-view--focus",
        "diff-view--unfit", "diff-view--word",
    }

    DEFAULT_CSS = """
    DiffView {
        background: $surface;
        color: $foreground;
        overflow-y: scroll;  /* always there: the first screenful and a new turn lay out nothing */
        overflow-x: auto;
        scrollbar-size-vertical: 1;
        scrollbar-size-horizontal: 1;
        & > .diff-view--prose { color: $text-muted; }
        & > .diff-view--file { color: $diff-file; text-style: bold; }
        & > .diff-view--hunk { color: $diff-hunk; }
        & > .diff-view--added { background: $diff-added; }
        & > .diff-view--removed { background: $diff-removed; }
        & > .diff-view--context { }
        & > .diff-view--note { color: $text-warning; text-style: bold; }
        & > .diff-view--partial { text-style: italic; }
        & > .diff-view--accepted { color: $text-success; text-style: bold; }
        & > .diff-view--rejected { color: $text-error; text-style: bold; }
        & > .diff-view--stale { color: $text-warning; text-style: bold; }
        & > .diff-view--unfit { color: $text-warning; text-style: bold; }
        & > .diff-view--focus { text-style: reverse; }
        & > .diff-view--word { text-style: bold underline; }
    }
    """

    def __init__(self, *, name: str | None = None, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        # painted rows by (row, scroll x, width): the row alone, and framed (border, filters)
        self._cache: LRUCache[tuple[int, int, int], Strip] = LRUCache(CACHE_ROWS)
        self._styles: dict[str, Style] = {}
        self._marks = WordMarks(self._words_ready)  # changed words per hunk, off the loop
        self._bars_at = 0.0  # when the scrollbars were last told (monotonic)
        self._bars_timer: Timer | None = None
        self.reset()

    # ---- state -------------------------------------------------------------------------------

    def reset(self) -> None:
        """Forget the turn: no rows, no marks, follow the tail again."""
        self.rows: Rows = Rows()
        self.partial = ""
        self._text: list[str] = []  # the unfinished text line, in pieces
        self._all: list[str] = []  # every text piece (a rewind keeps a prefix of them)
        self._open = -1  # the op whose lines are arriving (-1: none)
        self._blank = False
        self._in_diff = False  # the text is inside a diff block (not prose)
        self._ended = False  # the reply's text is all in (its last line taken)
        self.file_rows: dict[int, int] = {}
        self.hunk_rows: dict[tuple[int, int], int] = {}
        self.marks: dict[tuple[int, int], HunkMark] = {}
        self.focused: tuple[int, int] | None = None
        self.model = ""  # the model writing the reply: each hunk's header names it
        self._wrap_at = 0  # the width the reply's prose was wrapped at (-1: shown lines)
        self._marks.clear()
        self._width = 0
        self._forget_all()
        if self.is_attached:
            self.anchor()
            self._grow(Size(0, 0))
            self.refresh()

    def on_mount(self) -> None:
        self.anchor()

    def on_unmount(self) -> None:
        self._marks.close()

    def on_resize(self, event: events.Resize) -> None:
        """A reply of prose alone (no diff, no note) wraps again at a new width."""
        width = self.scrollable_content_region.width - 1
        if self._wrap_at in (-1, 0, width) or any(r.kind is not Kind.PROSE for r in self.rows):
            return
        text, model, ended, partial = "".join(self._all), self.model, self._ended, self.partial
        self.reset()
        self.model = model
        self._take_text(text)
        if ended:
            self._end_text()
        self.feed((), partial)

    def on_paste(self, event: events.Paste) -> None:
        pass_typed(self, event)  # a paste goes to the prompt whole

    def on_key(self, event: events.Key) -> None:
        pass_typed(self, event)  # (it takes the focus to scroll: a letter typed goes to the prompt)

    def validate_scroll_y(self, value: float) -> float:
        """While the view follows the tail, its place is the end. A layout that gives the view
        a new height (the review pane appearing or growing takes rows from the diff) sets the
        place again once the height is known: Textual's layout follows the tail with the
        height the view had before, so the last rows would be painted out of view until a
        later layout. A view the person scrolled stays where it is."""
        value = super().validate_scroll_y(value)
        if self.following and value != (end := self.max_scroll_y):
            self.set_reactive(DiffView.scroll_target_y, end)
            return end
        return value

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles.clear()
        self._forget_all()

    # ---- feeding -------------------------------------------------------------------------------

    def feed(self, events: Iterable[SessionEvent], partial_line: str | None = None) -> None:
        """Append one frame's session events; `partial_line` is the diff line being written."""
        before = len(self.rows)
        for event in events:
            self._event(event)
        if partial_line is not None:  # once the reply ended, only a diff line is still due
            self.partial = "" if self._ended and not self._in_diff else partial_line
        height = len(self.rows) + (1 if self.partial else 0)
        size = Size(self._width, height)
        if size != self.virtual_size:
            self._grow(size)
        if self.is_attached and (self.following or self._in_view(before, height)):
            self.refresh()

    def show_lines(self, lines: Iterable[str]) -> None:
        """Plain lines (the earlier turns of a resumed session) until the next turn resets."""
        for line in lines:
            self._add(Row(Kind.PROSE, content_text(line)))
        self._wrap_at = -1  # (not the reply's text: never wrapped again)
        self._grow(Size(self._width, len(self.rows)))
        if self.is_attached:
            self.refresh()

    @property
    def following(self) -> bool:
        """The view follows the tail (the person has not scrolled away from it)."""
        return self.is_anchored and not anchor_released(self)

    def _in_view(self, first: int, end: int) -> bool:
        top = round(self.scroll_y)
        return first < top + self.size.height and end > top

    def _grow(self, size: Size) -> None:
        """A new virtual size, once per batch. `virtual_size` is a layout reactive: setting it
        lays out the whole screen again. While the scrollbars stay as they are only this view
        changes: the size is set quietly and the tail followed here, and the scrollbars are
        told at most BARS_S apart (a repaint of the scrollbar costs as much as the rows)."""
        if not (self.is_attached and bars_for(self, size) == (self.show_horizontal_scrollbar,
                                                              self.show_vertical_scrollbar)):
            self.virtual_size = size
            return
        self.set_reactive(DiffView.virtual_size, size)
        if self.following:  # follow the tail (as layout does)
            end = self.max_scroll_y
            self.set_reactive(DiffView.scroll_target_y, end)
            self.set_reactive(DiffView.scroll_y, end)
        wait = self._bars_at + BARS_S - time.monotonic()
        if wait <= 0:
            self._sync_bars()
        elif self._bars_timer is None:
            self._bars_timer = self.set_timer(wait, self._sync_bars, name="diff scrollbars")

    def _sync_bars(self) -> None:
        """The scrollbars catch up with the virtual size and the scroll position."""
        if self._bars_timer is not None:
            self._bars_timer.stop()
            self._bars_timer = None
        self._bars_at = time.monotonic()
        if not self.is_attached:
            return
        tell_scrollbars(self, self.virtual_size)
        if self.show_vertical_scrollbar:
            self.vertical_scrollbar.position = self.scroll_y

    def _event(self, event: SessionEvent) -> None:
        match event:
            case TextDelta(text=text):
                self._take_text(text)
            case FileStarted(index=i, op_kind=kind, path=path, new_path=new_path):
                self._open = i
                self.file_rows[i] = len(self.rows)
                self._add(Row(Kind.FILE, file_header_text(kind, path, new_path), i))
            case HunkStarted(op_index=i, hunk_index=h, header=hunk):
                self.hunk_rows[(i, h)] = len(self.rows)
                by = f"  · {shown(self.model)}" if self.model else ""
                self._add(Row(Kind.HUNK, hunk_header_text(hunk) + by, i, h))
            case Started(model=model) | ModelChanged(new=model):
                self.model = model
            case LineAdded(op_index=i, hunk_index=h, line=line):
                row_kind = _MARKER_KIND.get(line[:1], Kind.CONTEXT)
                self._add(Row(row_kind, content_text(line), i, h))
            case FileFinished(index=i, op=op):
                self._open = -1
                self._detail(i, op)  # repaints: the file's rows gain their word marks
            case OperationProposed():  # (asked again when its file changed on disk)
                self._open = -1
                self._detail(event.index, event.op)
            case Refused(op=op, reason=reason):
                self._note(f"refused {op.summary()}: {reason}")
            case Stale(path=path):
                self._add(Row(Kind.NOTE, f"stale: {shown(path)} changed on disk"))
            case RepairStarted():
                self._note(repair_rows.started_text(event))
            case RepairFinished(outcome=outcome):
                self._note(repair_rows.finished_text(event))
                for i, op in sorted(outcome.ops.items()):
                    self._repaired(i, op)
            case Completed() | Failed():
                self._end_text()
            case TurnFinished() if not self._ended:  # stopped: the line being written stays
                self._end_text()
            case Rewound(keep=keep):
                # a retry answered differently: the session sends the diff's events again from
                # the start; the kept text's prose is shown again up to where the diff began
                text, model = "".join(self._all)[:keep], self.model
                self.reset()
                self.model = model
                self._take_text(text, intro_only=True)
            case _:
                pass

    def _repaired(self, index: int, op: Modify) -> None:
        """The operation the repair round mended, whole, below its note: its hunks' rows are
        the ones the review points at from now on."""
        self.file_rows[index] = len(self.rows)
        self._add(Row(Kind.FILE, file_header_text("modify", op.path, None), index))
        by = f"  · {shown(self.model)}" if self.model else ""
        for h, hunk in enumerate(op.hunks):
            self.hunk_rows[(index, h)] = len(self.rows)
            self._add(Row(Kind.HUNK, hunk_header_text(hunk) + by, index, h))
            for line in hunk.lines:
                self._add(Row(_MARKER_KIND.get(line[:1], Kind.CONTEXT), content_text(line),
                              index, h))
        for key in [k for k in self.hunk_rows if k[0] == index and k[1] >= len(op.hunks)]:
            del self.hunk_rows[key]

    def _detail(self, index: int, op: Operation) -> None:
        """The file header gains what the finished operation holds (and a delete's warning)."""
        row = self.file_rows.get(index)
        if row is None:
            return
        head = self.rows[row].text.split(" · ", 1)[0]
        detail = op_detail(op)
        self.rows[row] = self.rows[row]._replace(text=f"{head} · {detail}" if detail else head)
        width = cell_len(self.rows[row].text)
        if width > self._width:
            self._width = width
        self._forget_rows(self.rows_of(index))

    def _take_text(self, text: str, intro_only: bool = False) -> None:
        self._all.append(text)
        self._text.append(text)
        if "\n" not in text:
            return
        lines = "".join(self._text).split("\n")
        self._text = [lines.pop()]
        show = True
        for line in lines:
            show = show and not (intro_only and self._in_diff)  # replayed: only the intro
            self._text_line(line.removesuffix("\r"), show)

    def _end_text(self) -> None:
        """The reply ended: its last line, even without a newline, is a line (a diff line among
        it comes from the parser, as every diff line does)."""
        self._ended = True
        last, self._text = "".join(self._text), []
        if last:
            self._text_line(last.removesuffix("\r"))

    def _text_line(self, line: str, show: bool = True) -> None:
        """Prose rows: text lines outside the diff. Told from the text alone (the diff's own
        rows come from the parser's events), so any cut of the stream shows the same rows."""
        if self._in_diff:
            if line.startswith(_FENCES):
                self._in_diff = False
                return
            if not line or line[0] in _DIFF_FIRST or line.startswith(_SYNTAX):
                return
            self._in_diff = False  # the diff ended without a fence
        elif line.startswith(_SYNTAX):
            self._in_diff = line.startswith(_DIFF_START)
            return
        if not line.strip():
            self._blank = True  # shown only between two prose lines
            return
        if not show:
            return
        if self._blank and self.rows and self.rows[-1].kind == Kind.PROSE:
            self._add(Row(Kind.PROSE, ""))
        self._blank = False
        for part in self._wrapped(content_text(line)):
            self._add(Row(Kind.PROSE, part))

    def _wrapped(self, line: str, indent: str = "") -> list[str]:
        """A line as rows no wider than the view (less a scrollbar); as it is while the view
        is too narrow to wrap (then its last column marks the cut)."""
        width = self.scrollable_content_region.width - 1 if self.is_attached else 0
        self._wrap_at = width if self._wrap_at >= 0 else -1
        if width <= 20 or cell_len(line) <= width:
            return [line]
        return textwrap.wrap(line, width, subsequent_indent=indent, break_on_hyphens=False,
                             drop_whitespace=True) or [line]

    def note(self, text: str) -> None:
        """A note under what the diff shows (e.g. how a correction went)."""
        self._note(text)
        self.feed(())

    def _note(self, text: str) -> None:
        """A note's rows: each of its lines wrapped at the view's width (less a scrollbar), so
        a reason is read without scrolling sideways; at most NOTE_ROWS rows."""
        rows: list[str] = []
        for line in text.splitlines() or [""]:
            rows += self._wrapped(content_text(line), "    ")
        if len(rows) > NOTE_ROWS:
            rows = rows[:NOTE_ROWS - 1] + ["    …"]
        for row in rows:
            self._add(Row(Kind.NOTE, row))

    def _add(self, row: Row) -> None:
        self.rows.append(row)
        width = cell_len(row.text)
        if width > self._width:
            self._width = width

    # ---- review --------------------------------------------------------------------------------

    def mark_hunk(self, op_index: int, hunk_index: int, state: HunkMark | str | None) -> None:
        """Show a decision (or none) on a hunk's header."""
        key = (op_index, hunk_index)
        mark = None if state is None else HunkMark(state)
        if self.marks.get(key) is mark:
            return  # the review pane re-marks every hunk on each change: nothing to repaint
        if mark is None:
            del self.marks[key]
        else:
            self.marks[key] = mark
        self._repaint_row(self.hunk_rows.get(key))

    def mark_hunks(self, states: dict[tuple[int, int], HunkMark | None]) -> None:
        """Show decisions (or none) on many hunks' headers, (op, hunk) -> state, with one
        repaint (alt+A decides thousands of hunks at once)."""
        changed = [key for key, state in states.items() if self.marks.get(key) is not state]
        if len(changed) <= 8:
            for key in changed:
                self.mark_hunk(*key, states[key])
            return
        for key in changed:
            state = states[key]
            if state is None:
                del self.marks[key]
            else:
                self.marks[key] = state
        self._forget_all()
        if self.is_attached:
            self.refresh()

    def scroll_to_hunk(self, op_index: int, hunk_index: int | None = None) -> bool:
        """Bring a hunk (or a file header) into view and highlight its header; False if it has
        not arrived. Scrolling releases the tail-follow like the user scrolling would."""
        key = (op_index, hunk_index if hunk_index is not None else -1)
        row = (self.file_rows.get(op_index) if hunk_index is None
               else self.hunk_rows.get(key))
        if row is None:
            return False
        old, self.focused = self.focused, key
        if old != key:
            if old is not None:
                self._repaint_row(self._header_row(old))
            self._repaint_row(row)
        end = self._block_end(row)
        top, height = round(self.scroll_y), self.size.height
        if not (top <= row and end < top + height):
            self.scroll_to(y=max(0, row - 1), animate=False)
        return True

    def rows_of(self, op_index: int, hunk_index: int | None = None) -> range:
        """The rows of an op (or one of its hunks), header included; empty if not arrived."""
        row = (self.file_rows.get(op_index) if hunk_index is None
               else self.hunk_rows.get((op_index, hunk_index)))
        return range(0) if row is None else range(row, self._block_end(row) + 1)

    def _header_row(self, key: tuple[int, int]) -> int | None:
        return self.file_rows.get(key[0]) if key[1] < 0 else self.hunk_rows.get(key)

    def _block_end(self, row: int) -> int:
        """The last row of the file or hunk whose header is `row`."""
        head = self.rows[row]
        end = row
        for i in range(row + 1, len(self.rows)):
            r = self.rows[i]
            if r.op != head.op or (head.kind == Kind.HUNK and r.hunk != head.hunk) \
                    or r.kind == Kind.FILE:
                break
            end = i
        return end

    def _repaint_row(self, row: int | None) -> None:
        if row is not None:
            self._forget_rows(range(row, row + 1))

    def _forget_rows(self, rows: range) -> None:
        """Rows whose look changed: their strips leave the cache (the others stay) and those
        in view are painted again."""
        for cache in (self._cache, self._framed):
            for key in [k for k in cache.keys() if k[0] in rows]:
                cache.discard(key)
        if self.is_attached and rows:
            top = round(self.scroll_y)
            first, last = max(rows.start, top), min(rows.stop, top + self.size.height)
            if first < last:
                self.refresh_lines(first, last - first)  # (rows: virtual coordinates)

    def _forget_all(self) -> None:
        self._cache.clear()
        self._framed.clear()
        self._edges.clear()

    # ---- painting ------------------------------------------------------------------------------

    def _style(self, name: str) -> Style:
        style = self._styles.get(name)
        if style is None:
            style = self.get_component_rich_style(f"diff-view--{name}")
            self._styles[name] = style
        return style

    def _row_style(self, kind: Kind) -> Style:
        style = self._styles.get(kind.name)
        if style is None:
            style = self._style(kind.name.lower())
            if self.app.no_color and kind in _NO_COLOR:
                style += _NO_COLOR[kind]
            self._styles[kind.name] = style
        return style

    def _fill(self, style: Style) -> Style:
        """What pads a row to the full width: the widget's style with the row's background."""
        base = self._styles.get("")
        if base is None:
            base = self._styles[""] = self.rich_style
        return base + Style(bgcolor=style.bgcolor) if style.bgcolor else base

    def _word_spans(self, index: int) -> list[tuple[int, int]] | None:
        """The changed words of a removed or added row, from its hunk's marks (worked out off
        the loop, once per hunk); None while they are worked out (the row is painted plain),
        and while its operation's lines are still arriving (marks of a part of a hunk would
        be kept for good)."""
        row = self.rows[index]
        if row.op == self._open:
            return None
        head = self.hunk_rows.get((row.op, row.hunk))
        if head is None:
            return []
        marks = self._marks.get((row.op, row.hunk), lambda: [
            r.text for r in self.rows[head + 1:self._block_end(head) + 1]])
        return None if marks is None else marks.get(index - head - 1, [])

    def _words_ready(self, key: tuple[int, int]) -> None:
        """A hunk's word marks arrived: its rows are painted again."""
        self._forget_rows(self.rows_of(*key))

    @property
    def words_pending(self) -> bool:
        """Some hunk's word marks are still being worked out."""
        return self._marks.pending

    def _segments(self, row: Row, style: Style, index: int = -1) -> list[Segment]:
        if row.kind in (Kind.ADDED, Kind.REMOVED) and index >= 0 and row.op != self._open:
            spans = self._word_spans(index)
            if spans:
                word, out, at = style + self._style("word"), [], 0
                for a, b in spans:
                    out += [Segment(row.text[at:a], style), Segment(row.text[a:b], word)]
                    at = b
                return out + [Segment(row.text[at:], style)]
        segments = [Segment(row.text, style)]
        if row.kind == Kind.HUNK or row.kind == Kind.FILE:
            key = (row.op, row.hunk)
            mark = self.marks.get(key) if row.kind == Kind.HUNK else None
            if mark is not None:
                segments.append(Segment("  ", style))
                segments.append(Segment(_MARK_TEXT[mark], style + self._style(mark.value)))
            if self.focused == key:
                segments.insert(0, Segment("▶ ", style + self._style("focus")))
        return segments

    def render_line(self, y: int) -> Strip:
        if self._framing_blank:
            return Strip([], 0)
        scroll_x, scroll_y = self.scroll_offset
        index = scroll_y + y
        width = self.scrollable_content_region.width  # less the scrollbar
        if index == len(self.rows) and self.partial:  # the line being written: never cached
            kind = (_MARKER_KIND.get(self.partial[:1], Kind.CONTEXT) if self._open >= 0
                    else Kind.PROSE)
            style = self._row_style(kind) + self._style("partial")
            strip = Strip([Segment(content_text(self.partial), style)])
            return _cut(strip, scroll_x, width, self._fill(style), style)
        if index >= len(self.rows):
            return Strip.blank(width, self._fill(Style()))
        key = (index, scroll_x, width)
        cached = self._cache.get(key)
        if cached is None:
            row = self.rows[index]
            style = self._row_style(row.kind)
            strip = Strip(self._segments(row, style, index))
            if scroll_x == 0 and row.kind in (Kind.ADDED, Kind.REMOVED) and \
                    strip.cell_length > width:
                strip = elide(strip, self._word_spans(index), width, style)
            cached = _cut(strip, scroll_x, width, self._fill(style), style)
            self._cache.set(key, cached)
        return cached
