"""The review pane: every operation of the turn as proposed, with its decision state.

A modify lists its hunks (each accepted / rejected / undecided); create, delete and rename are
one line each, marked with a letter and a word as well as a colour. The pane owns the review
keys; a decision leaves as a `ReviewPane.Decided` message once an operation is fully decided.
"""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.binding import Binding
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from ...approval import Decision
from ...edits.ops import Create, Hunk, Modify, Rename
from ...edits.paths import shown, shown_text
from ..review_state import Entry, Item, Kind, Mark, Refusal, Review
from ..screens.confirm import ConfirmScreen
from ..screens.reason import ReasonScreen

TAGS = {Kind.MODIFY: ("M", "modify"), Kind.CREATE: ("+", "create"),
        Kind.DELETE: ("D", "DELETE"), Kind.RENAME: ("R", "RENAME")}
MARKS = {Mark.UNDECIDED: ("·", "undecided"), Mark.ACCEPTED: ("✓", "accepted"),
         Mark.REJECTED: ("✗", "rejected")}
REFUSALS = {
    Refusal.NEEDS_CONFIRM: "a delete or rename is accepted with d then y (r rejects it)",
    Refusal.BLOCKED: "the file changed on disk: this operation cannot be accepted until the "
                     "session re-checks it (r rejects it, ctrl+r regenerates the turn)",
    Refusal.DECIDED: "already decided",
    Refusal.NOTHING: "nothing to decide yet",
}


class ReviewPane(OptionList):
    """The operations of the current turn; keys decide on them."""

    BINDINGS = [
        Binding("a", "accept", "accept", id="review.accept",
                tooltip="Accept the focused hunk or create and move to the next undecided one"),
        Binding("r", "reject", "reject", id="review.reject",
                tooltip="Reject the focused hunk or operation"),
        Binding("A", "accept_all", "all", id="review.accept_all",
                tooltip="Accept every undecided modify and create (never a delete or rename)"),
        Binding("R", "reject_all", "reject rest", id="review.reject_all",
                tooltip="Reject everything still undecided; accepted hunks stay accepted"),
        Binding("d", "confirm", "del/rename", id="review.confirm",
                tooltip="Accept the focused delete or rename (asks y/n)"),
        Binding("c", "reject_with_reason", "reject+why", id="review.reason",
                tooltip="Reject the focused hunk or operation with a reason the model hears "
                        "next turn"),
        Binding("e", "amend", "edit", id="review.amend",
                tooltip="Edit the focused hunk's result (or a created file) in $VISUAL/$EDITOR; "
                        "what you save is accepted"),
        Binding("t", "try_check", "try", id="review.try",
                tooltip="Accept like A, apply, run the configured check (review.check), then "
                        "keep (y) or roll back (n)"),
        Binding("o", "open_pager", "pager", id="review.pager",
                tooltip="Open the turn's diff in your pager (review.pager, $PAGER, less -R)"),
        Binding("j", "next_item", "next", id="review.next", show=False),
        Binding("k", "previous_item", "previous", id="review.previous", show=False),
        Binding("n", "next_file", "next file", id="review.next_file", show=False),
        Binding("p", "previous_file", "previous file", id="review.previous_file", show=False),
    ]

    DEFAULT_CSS = """
    ReviewPane {
        height: auto;
        max-height: 10;
        border: round $secondary;
        border-title-align: left;
        padding: 0 1;
    }
    ReviewPane:focus {
        border: round $accent;
    }
    ReviewPane.-empty {
        display: none;
    }
    """

    class Decided(Message):
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
        the cursor or decided (the diff then scrolls to the hunk under the cursor)."""

        def __init__(self, moved: bool) -> None:
            super().__init__()
            self.moved = moved

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.review = Review()
        self._shown: dict[int, int] = {}  # operation index -> its lines in the list
        self.border_title = "Review"
        self.add_class("-empty")

    # ---- what the session says -----------------------------------------------------------

    def propose(self, index: int, op: object, *, stale: bool = False) -> None:
        self.review.propose(index, op, stale=stale)  # type: ignore[arg-type]
        self.refresh_items(only=index)

    def mark_stale(self, index: int) -> None:
        self.review.mark_stale(index)
        self.refresh_items(only=index)

    def refuse(self, index: int, text: str) -> None:
        self.review.refuse(index, text)
        self.refresh_items()

    def set_applied(self, indices: list[int]) -> None:
        self.review.set_applied(indices)
        self.refresh_items()

    def clear(self) -> None:
        self.review.clear()
        self.refresh_items()

    @property
    def has_undecided(self) -> bool:
        return bool(self.review.undecided())

    # ---- drawing ---------------------------------------------------------------------------

    def refresh_items(self, moved: bool = False, only: int | None = None) -> None:
        """Redraw the list; `only`: just that operation changed (its lines are patched in
        place, or appended when it is new and last), so a key costs O(its hunks), not O(all)."""
        review = self.review
        entry = review.entries.get(only) if only is not None else None
        fresh = [] if entry is None else _options(entry)
        if entry is not None and self._shown.get(entry.index) == len(fresh):
            for option in fresh:
                if option.id is not None:
                    self.replace_option_prompt(option.id, option.prompt)
        elif (entry is not None and entry.index not in self._shown
              and all(i < entry.index for i in self._shown)):
            self.add_options(fresh)
            self._shown[entry.index] = len(fresh)
        else:
            options: list[Option] = []
            self._shown = {}
            for index in sorted(review.entries):
                mine = _options(review.entries[index])
                self._shown[index] = len(mine)
                options += mine
            self.clear_options()
            self.add_options(options)
        self.set_class(not self._shown, "-empty")
        self._sync_cursor(moved)
        undecided = len(review.undecided())
        self.border_title = f"Review · {undecided} undecided" if undecided else "Review"

    def _sync_cursor(self, moved: bool = True) -> None:
        self.post_message(self.Changed(moved))
        item = self.review.cursor
        if item is None:
            return
        key = f"{item.op}" if item.hunk is None else f"{item.op}:{item.hunk}"
        try:
            self.highlighted = self.get_option_index(key)
        except Exception:  # noqa: BLE001 - the option list is being rebuilt
            pass

    @on(OptionList.OptionHighlighted)
    def _follow_highlight(self, event: OptionList.OptionHighlighted) -> None:
        key = event.option.id or ""
        op, _, hunk = key.partition(":")
        item = Item(int(op), int(hunk) if hunk else None) if op.isdigit() else None
        if item is not None and item != self.review.cursor:  # arrow keys or the mouse
            self.review.cursor = item
            self.post_message(self.Changed(True))

    # ---- keys ------------------------------------------------------------------------------

    def _after(self, decisions: list[tuple[int, Decision]], refusal: Refusal | None,
               only: int | None = None) -> None:
        if refusal is not None and refusal is not Refusal.DECIDED:
            self.notify(REFUSALS[refusal], severity="warning", timeout=4)
        self.refresh_items(moved=True, only=only)
        if decisions:
            self.post_message(self.Decided(decisions))

    def _focused_op(self) -> int | None:
        return None if self.review.cursor is None else self.review.cursor.op

    def action_accept(self) -> None:
        op = self._focused_op()
        self._after(*self.review.accept(), only=op)

    def action_reject(self) -> None:
        op = self._focused_op()
        self._after(*self.review.reject(), only=op)

    def action_accept_all(self) -> None:
        self._after(self.review.accept_all(), None)

    def action_reject_all(self) -> None:
        self._after(self.review.reject_all(), None)

    def _undecided_focus(self) -> Item | None:
        """The focused item when it can still be decided; otherwise say why and return None."""
        item = self.review.cursor
        if item is None:
            self._after([], Refusal.NOTHING)
            return None
        if self.review.entries[item.op].sent or not self.review.item_undecided(item):
            self.notify(REFUSALS[Refusal.DECIDED], timeout=3)
            return None
        return item

    def action_reject_with_reason(self) -> None:
        item = self._undecided_focus()
        if item is None:
            return
        entry = self.review.entries[item.op]
        what = (f"hunk {item.hunk + 1} of {shown(entry.op.path)}" if item.hunk is not None
                else _label(entry))

        def answered(reason: str | None) -> None:
            if reason is not None and self.review.cursor == item:
                self._after(*self.review.reject_with_reason(reason), only=item.op)

        self.app.push_screen(ReasonScreen(what), answered)

    def action_amend(self) -> None:
        item = self._undecided_focus()
        if item is None:
            return
        if item.hunk is None and self.review.entries[item.op].kind is not Kind.CREATE:
            self.notify("e rewrites a hunk or a created file; a delete or rename has no text",
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
        if item is None:
            return
        entry = self.review.entries[item.op]
        if not entry.needs_confirm:
            self.notify("d then y accepts a delete or a rename; a accepts this one",
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

        self.app.push_screen(ConfirmScreen(_question(entry)), answered)

    def action_next_item(self) -> None:
        self.review.move(1)
        self._sync_cursor()

    def action_previous_item(self) -> None:
        self.review.move(-1)
        self._sync_cursor()

    def action_next_file(self) -> None:
        self.review.move_file(1)
        self._sync_cursor()

    def action_previous_file(self) -> None:
        self.review.move_file(-1)
        self._sync_cursor()


def _question(entry: Entry) -> str:
    op = entry.op
    if isinstance(op, Rename):
        return f"Rename {shown(op.src)} to {shown(op.dst)}?"
    warn = " It has uncommitted changes!" if getattr(op, "uncommitted", False) else ""
    return f"Delete {shown(op.path)}?{warn}"


def _options(entry: Entry) -> list[Option]:
    """The list lines of one operation: its line, its hunks, its problem."""
    out = [Option(_entry_line(entry), id=f"{entry.index}", disabled=entry.per_hunk)]
    if entry.per_hunk:
        assert isinstance(entry.op, Modify)
        for h, (hunk, mark) in enumerate(zip(entry.op.hunks, entry.hunks, strict=False)):
            out.append(Option(_hunk_line(hunk, mark, entry.reasons.get(h, ""),
                                         h in entry.amended), id=f"{entry.index}:{h}"))
    if entry.problem:
        out.append(Option(Text("    ! " + entry.problem, style="bold"), disabled=True))
    return out


def _label(entry: Entry) -> str:
    op = entry.op
    if isinstance(op, Rename):
        return f"the rename of {shown(op.src)}"
    return f"the {entry.kind} of {shown(op.path)}"


def _entry_line(entry: Entry) -> Text:
    op = entry.op
    letter, word = TAGS[entry.kind]
    style = {Kind.MODIFY: "", Kind.CREATE: "bold", Kind.DELETE: "bold reverse",
             Kind.RENAME: "bold underline"}[entry.kind]
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
    if entry.per_hunk:
        accepted = entry.hunks.count(Mark.ACCEPTED)
        text.append(f" · {accepted}/{len(entry.hunks)} hunk(s) accepted")
    else:
        marker, words = MARKS[entry.mark]
        if entry.mark is Mark.UNDECIDED and entry.needs_confirm:
            words = "needs d then y"
        if entry.content is not None:
            words = "edited"
        text.append(f"  {marker} {words}")
        if entry.reasons.get(None):
            text.append(f"  why: {shown_text(entry.reasons[None])}", style="italic")
    if entry.stale:
        text.append("  STALE: changed on disk" + (" (blocked)" if entry.blocked else ""),
                    style="bold")
    if entry.applied:
        text.append("  written", style="bold")
    if getattr(op, "uncommitted", False):
        text.append("  has uncommitted changes!", style="bold")
    return text


def _hunk_line(hunk: Hunk, mark: Mark, reason: str = "", amended: bool = False) -> Text:
    marker, words = MARKS[mark]
    if amended:
        words = "edited"
    head = "@@"
    if hunk.old_start is not None:
        head = f"@@ -{hunk.old_start},{hunk.old_len} +{hunk.new_start},{hunk.new_len} @@"
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(f"    {marker} {words:<9} ")
    text.append(f"{head} +{hunk.added} -{hunk.removed}")
    if hunk.section:
        text.append(f"  {shown_text(hunk.section)}", style="italic")
    if reason:
        text.append(f"  why: {shown_text(reason)}", style="italic")
    return text
