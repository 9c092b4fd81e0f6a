"""The review pane: every operation of the turn as proposed, with its decision state.

A modify lists its hunks (each accepted / rejected / undecided); create, delete and rename are
one line each, marked with a letter and a word as well as a colour. The pane owns the review
keys; a decision leaves as a `ReviewPane.Decisions` message once an operation is fully decided.

A Line API view: a turn of thousands of hunks costs O(visible rows) a frame. The rows are
(operation, part, line) triples kept in order; a key or a proposal repaints (or appends) only its
operation's rows, and each row becomes a `Strip` when painted, kept in a bounded cache. A part
that says a state or a reason (an operation's line, a refusal, a hunk with a reason) wraps onto
more lines rather than lose its last words at the pane's width. The rows' text is made in
`review_rows` (Textual-free).
"""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual import events
from textual.cache import LRUCache
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ...base.printable import shown
from ...edits.ops import Hunk, OpKind
from ...session.approval import Decision
from .. import bindings
from ..dialogs.confirm import ConfirmScreen
from ..dialogs.reason import ReasonScreen
from ..review_state import Entry, Item, Refusal, Review, Undone
from ..typed import pass_typed
from .review_rows import (
    HEAD,
    PROBLEM,
    REFUSALS,
    entry_line,
    label,
    question,
    row_text,
    wrapped,
    wraps,
)
from .scrollbars import tell_scrollbars

CACHE_ROWS = 256
CURSOR = "▶"  # at the start of the cursor's row: the cursor reads without colour
GUTTER = " "  # (as wide as CURSOR) at the start of every other row



class ReviewPane(ScrollView, can_focus=True):
    """The operations of the current turn; keys decide on them."""

    PASSES_TYPED = True  # text typed here goes to the prompt (SparkPairApp.on_event)

    BINDINGS = bindings.REVIEW_PANE  # (the decisions are the screen's chords)

    COMPONENT_CLASSES = {"review-pane--cursor", "review-pane--header"}

    DEFAULT_CSS = """
    ReviewPane {
        height: auto;
        max-height: 10;
        color: $foreground;
        background: $surface;
        overflow-x: hidden;
        overflow-y: auto;
        scrollbar-size-vertical: 1;
        border: round $secondary;
        border-title-align: left;
        padding: 0 1 0 0;  /* the left column holds the cursor's glyph */
        & > .review-pane--header { color: $text-disabled; }
        & > .review-pane--cursor {
            color: $foreground;
            background: $block-cursor-blurred-background;
            text-style: $block-cursor-blurred-text-style;
        }
    }
    ReviewPane:focus {
        border: heavy $accent;  /* (heavy: the focus shows without colour too) */
        background-tint: $foreground 5%;
        & > .review-pane--cursor {
            color: $block-cursor-foreground;
            background: $block-cursor-background;
            text-style: $block-cursor-text-style;
        }
    }
    ReviewPane.-empty {
        display: none;
    }
    """

    class Decisions(Message):
        """Operations the person finished deciding: (index, decision) pairs."""

        def __init__(self, decisions: list[tuple[int, Decision]]) -> None:
            super().__init__()
            self.decisions = decisions

    class Amend(Message):
        """The person asked to rewrite this item in their editor (`e`)."""

        def __init__(self, item: Item) -> None:
            super().__init__()
            self.item = item

    class TryCheck(Message):
        """`t`: accept like A, then try the turn against the check before keeping it."""

    class OpenPager(Message):
        """`o`: the turn's diff in the person's pager."""

    class Changed(Message):
        """Marks or the cursor changed (the live diff shows them); `moved`: the person moved
        the cursor or decided (the diff then scrolls to the hunk under the cursor); `ops`: the
        operations whose marks may have changed (None: any of them)."""

        def __init__(self, moved: bool, ops: tuple[int, ...] | None = ()) -> None:
            super().__init__()
            self.moved = moved
            self.ops = ops

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.review = Review()
        self._rows: list[tuple[int, int, int]] = []  # (operation, HEAD / PROBLEM / hunk, line)
        self._first_row: dict[int, int] = {}  # operation index -> its HEAD row
        self._wrap = 0  # the width the parts were wrapped at (0: not laid out, one line each)
        self._cache: LRUCache[tuple[int, int], Strip] = LRUCache(CACHE_ROWS)  # (row, width)
        self._styles: dict[str, Style] = {}
        self._cursor_rows = range(0)  # the rows painted as the cursor (its part's lines)
        self.border_title = "Review"
        self.model = ""  # the model that wrote the turn under review (the title names it)
        self.add_class("-empty")

    def on_paste(self, event: events.Paste) -> None:
        pass_typed(self, event)  # a paste goes to the prompt whole

    def on_key(self, event: events.Key) -> None:
        pass_typed(self, event)  # a letter typed here goes to the prompt, never decides

    # ---- what the session says -----------------------------------------------------------

    def propose(self, index: int, op: object, *, stale: bool = False) -> None:
        self.review.propose(index, op, stale=stale)  # type: ignore[arg-type]
        self.refresh_items(only=index)

    def mark_stale(self, index: int) -> None:
        self.review.mark_stale(index)
        self.refresh_items(only=index)

    def refuse(self, index: int, text: str, op: object = None, *, stale: bool = False) -> None:
        known = index in self.review.entries
        self.review.refuse(index, text, op, stale=stale)  # type: ignore[arg-type]
        self.refresh_items(only=index if known else None)

    def mark_unfit(self, index: int, op: object, problems: dict[int | None, str]) -> bool:
        """Leave out what can not be applied (see Review.mark_unfit); False: nothing changed
        (the operation was asked about again, or already decided)."""
        decisions = self.review.mark_unfit(index, op, problems)  # type: ignore[arg-type]
        if not self.review.entries.get(index) or self.review.entries[index].unfit != problems:
            return False
        self.refresh_items(moved=True, only=index)
        if decisions:
            self.post_message(self.Decisions(decisions))
        return True

    def doom(self, reason: str) -> None:
        """The turn can no longer be written: accepting says why; R still ends it."""
        self.review.doom(reason)
        self.refresh_items()

    def close(self, reason: str) -> None:
        """The turn ended with nothing written: no row says accepted, no key decides."""
        self.review.close(reason)
        self._cache.clear()
        self.refresh_items()

    def set_applied(self, indices: list[int], turn_id: str | None = None) -> None:
        self.review.set_applied(indices, turn_id)
        self.refresh_items()

    def set_undone(self, turn_id: str, undone: Undone | None) -> None:
        """What the turn wrote was restored (`undone`), or written again (None)."""
        if self.review.set_undone(turn_id, undone):
            self._cache.clear()
            self.refresh_items()

    def clear(self) -> None:
        self.review.clear()
        self.refresh_items()

    @property
    def has_undecided(self) -> bool:
        return self.review.undecided_count > 0

    def text_of(self, item: Item) -> str:
        """The plain text of an item's row (its operation's line, or its hunk's)."""
        entry = self.review.entries[item.op]
        closed = bool(self.review.closed)
        if item.hunk is None:
            return entry_line(entry, self.review.undone, closed).plain
        return row_text(entry, item.hunk, closed).plain

    # ---- rows ------------------------------------------------------------------------------

    def refresh_items(self, moved: bool = False, only: int | None = None) -> None:
        """Bring the rows up to date; `only`: just that operation changed (its rows are
        repainted, or appended when it is new and last), so a key costs O(its hunks)."""
        review = self.review
        entry = review.entries.get(only) if only is not None else None
        first = self._first_row.get(only, -1) if only is not None else -1
        rows = [] if entry is None else self._rows_of(entry)
        if entry is not None and first >= 0 and self._rows[first:first + len(rows)] == rows \
                and (first + len(rows) == len(self._rows) or self._rows[first + len(rows)][0]
                     != entry.index):
            for row in range(first, first + len(rows)):
                self._forget(row)
        elif entry is not None and first < 0 and review.order()[-1] == entry.index:
            self._first_row[entry.index] = len(self._rows)
            self._rows += rows
            if self.is_attached:
                self.refresh_lines(self._first_row[entry.index], len(rows))
        else:
            self._rebuild()
        self.set_class(not self._rows, "-empty")
        self._resize(Size(self.size.width, len(self._rows)))
        undecided = review.undecided_count
        self.border_title = ("Review · nothing written" if review.closed else
                             f"Review · {undecided} undecided · can't be written"
                             if undecided and review.doomed else
                             f"Review · {undecided} undecided" if undecided else
                             f"Review · {review.undone}" if review.undone else "Review")
        if self.model and review.entries:
            self.border_title += f" · by {shown(self.model)}"
        self._sync_cursor(moved, (only,) if only is not None else None)

    def _rebuild(self) -> None:
        """Every row anew (each operation's parts wrapped at the pane's width)."""
        self._rows, self._first_row = [], {}
        for index in self.review.order():
            self._first_row[index] = len(self._rows)
            self._rows += self._rows_of(self.review.entries[index])
        self._cache.clear()
        self.refresh()

    def _rows_of(self, entry: Entry) -> list[tuple[int, int, int]]:
        """The rows of one operation: its line, its hunks, its problem (each part as many
        rows as it has lines)."""
        parts = [HEAD, *range(len(entry.hunks))] + ([PROBLEM] if entry.problem else [])
        return [(entry.index, part, line) for part in parts
                for line in range(len(self._lines(entry, part)) if wraps(entry, part) else 1)]

    def _lines(self, entry: Entry, part: int) -> list[Text]:
        """The lines of one part at the wrapping width."""
        closed = bool(self.review.closed)
        text = entry_line(entry, self.review.undone, closed) if part == HEAD else \
            row_text(entry, part, closed)
        if not wraps(entry, part) or not self._wrap:  # (not laid out yet: one line)
            return [text]
        return wrapped(text, self._wrap, 4 if part < 0 else 14, self.app.console)

    def _resize(self, size: Size) -> None:
        """A new virtual size, once per change. `virtual_size` is a layout reactive: setting it
        lays out the whole screen again (tens of ms on a big screen). Once the pane is at its
        maximum height with its scrollbar showing, more rows change only this pane: the size
        is set quietly and the scrollbar told."""
        if size == self.virtual_size:
            return
        height = self.scrollable_content_region.height
        if (self.is_attached and self.show_vertical_scrollbar and height
                and size.width == self.virtual_size.width
                and min(size.height, self.virtual_size.height) > height):
            self.set_reactive(ReviewPane.virtual_size, size)
            tell_scrollbars(self, size)
            self.refresh()
        else:
            self.virtual_size = size

    def _forget(self, row: int) -> None:
        """A row's text changed: paint it again."""
        self._cache.discard((row, self._width))
        if self.is_attached:
            self.refresh_line(row)  # (a row: virtual coordinates)

    def _rows_at(self, item: Item | None) -> range:
        """The rows of an item's part (empty: not listed)."""
        if item is None:
            return range(0)
        return self._part_rows(item.op, HEAD if item.hunk is None else item.hunk)

    def _part_rows(self, op: int, part: int) -> range:
        if op not in self._first_row:
            return range(0)
        rows, row = self._rows, self._first_row[op]
        while row < len(rows) and rows[row][0] == op and rows[row][1] != part:
            row += 1
        end = row
        while end < len(rows) and rows[end][:2] == (op, part):
            end += 1
        return range(row, end)

    def _sync_cursor(self, moved: bool = True, ops: tuple[int, ...] | None = ()) -> None:
        """Paint the cursor where the review has it, keep it in view, tell the screen."""
        self.post_message(self.Changed(moved, ops))
        rows = self._rows_at(self.review.cursor)
        old, self._cursor_rows = self._cursor_rows, rows
        if old != rows:
            for r in (*old, *rows):
                if 0 <= r < len(self._rows):
                    self._forget(r)
        self._keep_in_view()

    def _keep_in_view(self) -> None:
        """Scroll so the cursor's rows show (with its file's line, for a first hunk)."""
        rows, height = self._cursor_rows, self.scrollable_content_region.height
        if not rows or not height:
            return  # not laid out yet: on_resize does it
        cursor = self.review.cursor
        top = rows.start - 1 if cursor is not None and cursor.hunk == 0 else rows.start
        last = rows[-1]
        entry = self.review.entries.get(cursor.op) if cursor is not None else None
        if entry is not None and cursor is not None and entry.problem and \
                cursor.hunk == (len(entry.hunks) - 1 if entry.per_hunk else None):
            last = max([last, *self._part_rows(entry.index, PROBLEM)])  # and why it was refused
        y = round(self.scroll_y)
        if top < y:
            self.scroll_to(y=top, animate=False, force=True, immediate=True)
        elif last >= y + height:
            self.scroll_to(y=min(last - height + 1, top), animate=False, force=True,
                           immediate=True)

    def on_resize(self, event: events.Resize) -> None:
        wrap = self.content_region.width - 1 - len(GUTTER)  # (less a scrollbar, shown or not)
        if wrap != self._wrap:
            self._wrap = wrap
            if self._rows:  # parts wrap at the new width
                self._rebuild()
                self._resize(Size(self.size.width, len(self._rows)))
                self._cursor_rows = self._rows_at(self.review.cursor)
        self._keep_in_view()

    # ---- painting --------------------------------------------------------------------------

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles.clear()
        self._cache.clear()

    def on_focus(self, event: events.Focus) -> None:
        self._styles.clear()  # the cursor row's style follows focus
        for row in self._cursor_rows:
            self._forget(row)

    def on_blur(self, event: events.Blur) -> None:
        self._styles.clear()
        for row in self._cursor_rows:
            self._forget(row)

    @property
    def _width(self) -> int:
        """The columns a row may use: the pane's width less its scrollbar."""
        return self.scrollable_content_region.width

    def _style(self, name: str) -> Style:
        style = self._styles.get(name)
        if style is None:
            style = self.rich_style if not name else self.get_component_rich_style(name)
            self._styles[name] = style
        return style

    def render_line(self, y: int) -> Strip:
        index = round(self.scroll_y) + y
        width = self._width
        if not 0 <= index < len(self._rows):
            return Strip.blank(width, self._style(""))
        if index in self._cursor_rows:
            return self._paint(index, width, self._style("review-pane--cursor"))
        key = (index, width)
        strip = self._cache.get(key)
        if strip is None:
            op, part, _ = self._rows[index]
            entry = self.review.entries[op]
            header = part == HEAD and entry.per_hunk
            strip = self._paint(index, width, self._style("review-pane--header" if header
                                                          else ""))
            self._cache.set(key, strip)
        return strip

    def _paint(self, index: int, width: int, style: Style) -> Strip:
        """A row, after its gutter: the cursor's glyph on the cursor's first row (it reads
        without colour), else blank."""
        op, part, line = self._rows[index]
        lines = self._lines(self.review.entries[op], part)
        text = lines[line] if line < len(lines) else Text()
        gutter = CURSOR if self._cursor_rows and index == self._cursor_rows.start else GUTTER
        text = Text.assemble((gutter, "bold"), text)
        text.truncate(width, overflow="ellipsis")
        strip = Strip(list(text.render(self.app.console))).apply_style(style)
        return strip.extend_cell_length(width, style).apply_meta({"row": index})

    def on_click(self, event: events.Click) -> None:
        row = event.style.meta.get("row")
        if not isinstance(row, int) or not 0 <= row < len(self._rows):
            return
        op, part, _ = self._rows[row]
        entry = self.review.entries[op]
        if part == PROBLEM or (part == HEAD and entry.per_hunk):
            return
        self.review.cursor = Item(op, None if part == HEAD else part)
        self._sync_cursor()

    # ---- keys ------------------------------------------------------------------------------

    def refusal_text(self, refusal: Refusal) -> str:
        """What a key that did nothing says (with this turn's own reason)."""
        review = self.review
        match refusal:
            case Refusal.CLOSED:
                return review.closed
            case Refusal.DOOMED:
                return review.doomed
            case Refusal.UNFIT:
                return f"can't apply: {review.unfit_reason(review.cursor)}; {REFUSALS[refusal]}"
        return REFUSALS[refusal]

    def _after(self, decisions: list[tuple[int, Decision]], refusal: Refusal | None,
               only: int | None = None) -> None:
        if refusal is not None and refusal is not Refusal.DECIDED:
            self.notify(self.refusal_text(refusal), severity="warning", timeout=6, markup=False)
        self.refresh_items(moved=True, only=only)
        if decisions:
            self.post_message(self.Decisions(decisions))

    def _focused_op(self) -> int | None:
        return None if self.review.cursor is None else self.review.cursor.op

    def action_accept(self) -> None:
        op = self._focused_op()
        self._after(*self.review.accept(), only=op)

    def action_reject(self) -> None:
        op = self._focused_op()
        self._after(*self.review.reject(), only=op)

    def action_accept_all(self) -> None:
        review = self.review
        refusal = Refusal.CLOSED if review.closed else Refusal.DOOMED if review.doomed else None
        self._after(review.accept_all(), refusal)

    def action_reject_all(self) -> None:
        self._after(self.review.reject_all(), Refusal.CLOSED if self.review.closed else None)

    def _undecided_focus(self, accepting: bool) -> Item | None:
        """The focused item when it can still be decided; otherwise say why and return None."""
        item = self.review.cursor
        refusal = self.review.why_not(item, accepting=accepting)
        if refusal is not None or item is None:
            self._after([], refusal or Refusal.NOTHING)
            return None
        if self.review.entries[item.op].sent or not self.review.item_undecided(item):
            self.notify(REFUSALS[Refusal.DECIDED], timeout=3)
            return None
        return item

    def action_reject_with_reason(self) -> None:
        item = self._undecided_focus(accepting=False)
        if item is None:
            return
        entry = self.review.entries[item.op]
        what = (f"hunk {item.hunk + 1} of {shown(entry.op.path)}" if item.hunk is not None
                else label(entry))

        def answered(reason: str | None) -> None:
            if reason is not None and self.review.cursor == item:
                self._after(*self.review.reject_with_reason(reason), only=item.op)

        self.app.push_screen(ReasonScreen(what), answered)

    def action_amend(self) -> None:
        item = self._undecided_focus(accepting=True)
        if item is None:
            return
        if item.hunk is None and self.review.entries[item.op].kind is not OpKind.CREATE:
            self.notify("alt+e rewrites a hunk or a created file; a delete or rename has no text",
                        severity="warning", timeout=4)
        else:
            self.post_message(self.Amend(item))

    def amended(self, item: Item, hunk: Hunk | None = None, content: str | None = None) -> None:
        """The person saved their own version: accept it (all-or-nothing with the turn)."""
        self._after(*self.review.amend(item, hunk, content), only=item.op)

    def action_try_check(self) -> None:
        self.post_message(self.TryCheck())

    def action_open_pager(self) -> None:
        self.post_message(self.OpenPager())

    def action_confirm(self) -> None:
        item = self.review.cursor
        refusal = self.review.why_not(item)
        if refusal is not None or item is None:
            self._after([], refusal)
            return
        entry = self.review.entries[item.op]
        if not entry.needs_confirm:
            self.notify("alt+d then alt+y accepts a delete or a rename; alt+a accepts this one",
                        severity="warning", timeout=4)
            return
        if entry.sent:
            return
        if entry.blocked:
            self._after([], Refusal.BLOCKED)
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self._after(*self.review.confirm())

        self.app.push_screen(ConfirmScreen(question(entry)), answered)

    def action_next_item(self) -> None:
        self.review.move(1)
        self._sync_cursor()

    def action_previous_item(self) -> None:
        self.review.move(-1)
        self._sync_cursor()

    def action_page(self, step: int) -> None:
        self.review.move(step * max(1, self.scrollable_content_region.height - 1))
        self._sync_cursor()

    def action_first(self) -> None:
        self.review.move(-len(self._rows))
        self._sync_cursor()

    def action_last(self) -> None:
        self.review.move(len(self._rows))
        self._sync_cursor()

    def action_next_file(self) -> None:
        self.review.move_file(1)
        self._sync_cursor()

    def action_previous_file(self) -> None:
        self.review.move_file(-1)
        self._sync_cursor()
