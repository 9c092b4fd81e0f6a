"""What the person has decided about a turn's operations, and where the review cursor is.

Plain Python (the review pane draws it). The items a cursor moves over: each hunk of a modify,
and each create, delete or rename as a whole. A modify's decision goes to the session once all
its hunks are decided; a delete or rename is accepted only by `confirm` (its own key and a y/n);
an operation whose file changed on disk is blocked until the session asks about it again. What
can not be applied to the files as they are (`mark_unfit`) is left out: rejected with its
reason. A turn the session will refuse whole is `doomed` (only rejecting is left); a turn over
with nothing written is `closed` (nothing is left to decide, no row says accepted).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from enum import StrEnum

from ..edits.ops import Hunk, Modify, Operation, OpKind, op_kind
from ..session.approval import Action, Decision


class Mark(StrEnum):
    UNDECIDED = "undecided"
    ACCEPTED = "accepted"
    REJECTED = "rejected"


class Undone(StrEnum):
    """Why the files an applied turn wrote are back as they were."""

    ROLLED_BACK = "not kept: rolled back"  # alt+t, a check, then alt+n
    UNDONE = "undone"  # /undo (/redo writes it again)


@dataclass
class Entry:
    """One operation of the turn as the person sees it."""

    index: int
    op: Operation
    hunks: list[Mark] = field(default_factory=list)  # a modify's hunks
    mark: Mark = Mark.UNDECIDED  # the whole operation (derived for a modify with hunks)
    stale: bool = False  # its file changed on disk after the request
    blocked: bool = False  # stale and not asked about again: cannot be accepted
    again: bool = False  # asked again after its file changed: it fits the file as it is now
    sent: bool = False  # the decision went to the session
    problem: str = ""  # a refusal or conflict, with its hint
    applied: bool = False
    reasons: dict[int | None, str] = field(default_factory=dict)  # the person's, per item
    amended: dict[int, Hunk] = field(default_factory=dict)  # hunks the person rewrote
    content: str | None = None  # a create's content as the person rewrote it
    unfit: dict[int | None, str] = field(default_factory=dict)  # can not apply: hunk -> why

    @property
    def kind(self) -> OpKind:
        return op_kind(self.op)

    @property
    def per_hunk(self) -> bool:
        return bool(self.hunks)

    @property
    def needs_confirm(self) -> bool:
        return self.kind in (OpKind.DELETE, OpKind.RENAME)

    @property
    def undecided(self) -> bool:
        if self.per_hunk:
            return Mark.UNDECIDED in self.hunks
        return self.mark is Mark.UNDECIDED

    def decision(self) -> Decision | None:
        """The decision once everything in the operation is decided."""
        if self.undecided:
            return None
        unfit = tuple(sorted(self.unfit, key=lambda h: -1 if h is None else h))
        if not self.per_hunk:
            if self.mark is Mark.ACCEPTED:
                return Decision(Action.ACCEPT, content=self.content)
            return Decision(Action.REJECT, self.reasons.get(None, ""), unfit=unfit)
        notes = tuple((i, why) for i, why in sorted(self.reasons.items(), key=_by_hunk)
                      if i is not None and self.hunks[i] is Mark.REJECTED)
        accepted = tuple(i for i, m in enumerate(self.hunks) if m is Mark.ACCEPTED)
        if not accepted:
            return Decision(Action.REJECT, self.reasons.get(None, ""), notes=notes,
                            unfit=unfit)
        whole = len(accepted) == len(self.hunks)
        amended = tuple((i, h) for i, h in sorted(self.amended.items()) if i in accepted)
        return Decision(Action.ACCEPT, "", None if whole else accepted, notes=notes,
                        amended=amended, unfit=unfit)


def _by_hunk(pair: tuple[int | None, str]) -> int:
    return -1 if pair[0] is None else pair[0]


@dataclass(frozen=True, slots=True)
class Item:
    """A place for the cursor: a hunk of a modify, or a whole operation (hunk None)."""

    op: int
    hunk: int | None = None


class Refusal(StrEnum):
    """Why an accept did nothing."""

    NEEDS_CONFIRM = "needs_confirm"
    BLOCKED = "blocked"
    DECIDED = "decided"
    NOTHING = "nothing"
    UNFIT = "unfit"  # it can not be applied to the file as it is
    DOOMED = "doomed"  # the turn can no longer be written: only rejecting is left
    CLOSED = "closed"  # the turn is over and wrote nothing


class Review:
    """The operations of one turn, their marks and the cursor.

    Kept indexed so that a key costs O(log n) on a turn of thousands of hunks: the items in
    order with their positions, and the sorted positions of the items still open (undecided
    and not yet sent). A proposal that arrives last (the usual case while streaming) extends
    them; anything else rebuilds them (O(items), rare)."""

    def __init__(self) -> None:
        self.entries: dict[int, Entry] = {}
        self.cursor: Item | None = None
        self._order: list[int] = []  # operation indices, ascending
        self._items: list[Item] = []
        self._pos: dict[Item, int] = {}  # item -> its position in _items
        self._first: dict[int, int] = {}  # operation index -> position of its first item
        self._open: list[int] = []  # positions of open items, ascending
        self._unsent: set[int] = set()  # operations whose decision is not sent yet
        self.turn_id: str | None = None  # the turn as applied (None: nothing written)
        self.undone: Undone | None = None  # what it wrote is back as it was
        self.doomed = ""  # why this turn can no longer be written (it still waits for R)
        self.closed = ""  # why the turn is over with nothing written: nothing to decide

    # ---- what the session says ---------------------------------------------------------

    def propose(self, index: int, op: Operation, *, stale: bool = False) -> Entry:
        """A proposal (a second one for the same index means the session asks again: the
        operation is no longer blocked, and what was not yet sent is asked again)."""
        old = self.entries.get(index)
        entry = Entry(index, op, [Mark.UNDECIDED] * len(op.hunks) if isinstance(op, Modify)
                      else [], stale=stale or (old is not None and old.stale), again=stale)
        self.entries[index] = entry
        self._unsent.add(index)
        if old is None and (not self._order or _place(entry) > _place(
                self.entries[self._order[-1]])):
            self._order.append(index)
            self._first[index] = len(self._items)
            for item in _items_of(entry):
                self._pos[item] = len(self._items)
                self._open.append(len(self._items))
                self._items.append(item)
        elif old is not None and len(old.hunks) == len(entry.hunks):
            self._settle(entry)
        else:
            self._reindex()
        if self.cursor not in self._pos or not self.is_open(self.cursor):
            self.cursor = self.first_undecided()
        return entry

    def mark_stale(self, index: int) -> None:
        entry = self.entries.get(index)
        if entry is not None and not entry.sent:
            entry.stale = entry.blocked = True
        elif entry is not None:
            entry.stale = True

    def refuse(self, index: int, text: str, op: Operation | None = None, *,
               stale: bool = False) -> None:
        """The session will not write this operation (nothing left to decide about it). One
        refused before it was proposed (its file changed on disk meanwhile) is listed too."""
        entry = self.entries.get(index)
        if entry is None and op is not None:
            entry = self.propose(index, op, stale=stale)
        if entry is not None:
            if stale:  # its file changed on disk: that, not how it fit before, is its row
                entry.stale = entry.blocked = True
                entry.unfit = {}
            entry.problem = text
            self._sent(entry)
            if self.cursor is not None and self.cursor.op == index:
                self._advance()

    def set_applied(self, indices: list[int], turn_id: str | None = None) -> None:
        for i in indices:
            if i in self.entries:
                self.entries[i].applied = True
        if turn_id is not None and indices:
            self.turn_id, self.undone = turn_id, None

    def set_undone(self, turn_id: str, undone: Undone | None) -> bool:
        """The applied turn's files were restored (or written again: None); False when this
        review is not of that turn."""
        if turn_id != self.turn_id:
            return False
        self.undone = undone
        return True

    def mark_unfit(self, index: int, op: Operation, problems: dict[int | None, str]
                   ) -> list[tuple[int, Decision]]:
        """What can not be applied (a hunk, or the operation as a whole: None) is left out: it
        is rejected with the reason, and the rest of the operation can still be decided. Only
        for `op` as proposed now and not yet sent (else nothing changes)."""
        entry = self.entries.get(index)
        if entry is None or entry.op is not op or entry.sent or self.closed:
            return []
        entry.unfit = dict(problems)
        whole = problems.get(None)
        if whole is not None:
            entry.problem = f"can't apply: {whole}"
            entry.mark = Mark.REJECTED
            entry.hunks = [Mark.REJECTED] * len(entry.hunks)
            entry.reasons = {None: f"it can not be applied: {whole}"}
            entry.amended.clear()
            entry.content = None
        for h, why in problems.items():
            if h is not None and h < len(entry.hunks):
                entry.hunks[h] = Mark.REJECTED
                entry.reasons[h] = f"it can not be applied: {why}"
                entry.amended.pop(h, None)
        out = self._ready([entry])
        self._settle(entry)
        if self.cursor is not None and not self.is_open(self.cursor):
            self._advance()
        return out

    def doom(self, reason: str) -> None:
        """The turn can no longer be written (the session refuses it whole): accepting is
        pointless; rejecting what is left ends it."""
        if not self.closed:
            self.doomed = self.doomed or reason

    def close(self, reason: str) -> None:
        """The turn is over and wrote nothing: nothing is left to decide."""
        self.closed = reason
        self.doomed = ""
        for entry in self.entries.values():
            entry.sent = True
        self._unsent.clear()
        self._open = []

    def clear(self) -> None:
        self.entries.clear()
        self.cursor = None
        self.turn_id = self.undone = None
        self.doomed = self.closed = ""
        self._reindex()

    # ---- the indexes -------------------------------------------------------------------

    def _reindex(self) -> None:
        self._order = sorted(self.entries, key=lambda i: _place(self.entries[i]))
        self._items, self._pos, self._first, self._open = [], {}, {}, []
        self._unsent = {i for i, e in self.entries.items() if not e.sent}
        for index in self._order:
            entry = self.entries[index]
            self._first[index] = len(self._items)
            for item in _items_of(entry):
                at = len(self._items)
                self._pos[item] = at
                if self._item_open(entry, item):
                    self._open.append(at)
                self._items.append(item)

    def _reopen(self) -> None:
        """The open positions again, from every item's mark (the items are as they were)."""
        entries = self.entries
        self._open = [at for at, item in enumerate(self._items)
                      if self._item_open(entries[item.op], item)]

    def _settle(self, entry: Entry) -> None:
        """Bring the open positions of one operation up to date (its items are contiguous)."""
        first = self._first[entry.index]
        n = max(1, len(entry.hunks))
        lo, hi = bisect_left(self._open, first), bisect_left(self._open, first + n)
        self._open[lo:hi] = [first + k for k, item in enumerate(_items_of(entry))
                             if self._item_open(entry, item)]

    def _sent(self, entry: Entry) -> None:
        entry.sent = True
        self._unsent.discard(entry.index)
        self._settle(entry)

    @staticmethod
    def _item_open(entry: Entry, item: Item) -> bool:
        if entry.sent:
            return False
        return entry.mark is Mark.UNDECIDED if item.hunk is None else \
            entry.hunks[item.hunk] is Mark.UNDECIDED

    # ---- items and the cursor ----------------------------------------------------------

    def order(self) -> list[int]:
        """The operations in the order they are listed: deletes and renames first (each
        needs a decision of its own), then the rest as proposed."""
        return self._order

    def items(self) -> list[Item]:
        return list(self._items)

    def position(self, item: Item | None) -> int | None:
        """Where an item is in the order of items (None: not an item of this turn)."""
        return None if item is None else self._pos.get(item)

    def is_open(self, item: Item) -> bool:
        """The item still waits for the person (undecided, and its operation not sent)."""
        at = self._pos.get(item)
        if at is None:
            return False
        k = bisect_left(self._open, at)
        return k < len(self._open) and self._open[k] == at

    def item_undecided(self, item: Item) -> bool:
        entry = self.entries[item.op]
        if item.hunk is None:
            return entry.undecided
        return entry.hunks[item.hunk] is Mark.UNDECIDED

    def first_undecided(self) -> Item | None:
        if self._open:
            return self._items[self._open[0]]
        return self._items[0] if self._items else None

    def move(self, step: int) -> None:
        """Next / previous item (j / k)."""
        if not self._items:
            return
        at = self._pos.get(self.cursor) if self.cursor is not None else None
        if at is None:
            self.cursor = self._items[0]
            return
        self.cursor = self._items[max(0, min(len(self._items) - 1, at + step))]

    def move_file(self, step: int) -> None:
        """First item of the next / previous operation (n / p)."""
        if not self._items:
            return
        current = self.cursor.op if self.cursor in self._pos else self._items[0].op
        ops = self._order
        pos = max(0, min(len(ops) - 1, ops.index(current) + step))
        self.cursor = self._items[self._first[ops[pos]]]

    def _advance(self) -> None:
        """To the next open item after the cursor (wrapping); stays when none is left."""
        if not self._open:
            return
        at = self._pos.get(self.cursor) if self.cursor is not None else None
        k = 0 if at is None else bisect_right(self._open, at)
        self.cursor = self._items[self._open[k % len(self._open)]]

    # ---- what the person says ------------------------------------------------------------

    def why_not(self, item: Item | None, accepting: bool = True) -> Refusal | None:
        """Why the item can not be decided now (None: it can)."""
        if self.closed:
            return Refusal.CLOSED
        if item is None:
            return Refusal.NOTHING
        if self.unfit_reason(item):
            return Refusal.UNFIT
        if accepting and self.doomed:
            return Refusal.DOOMED
        return None

    def unfit_reason(self, item: Item | None) -> str:
        """Why the item can not be applied ('' when it can)."""
        entry = self.entries.get(item.op) if item is not None else None
        if item is None or entry is None or not entry.unfit:
            return ""
        return entry.unfit.get(None) or entry.unfit.get(item.hunk, "")

    def accept(self) -> tuple[list[tuple[int, Decision]], Refusal | None]:
        """`a`: accept the focused hunk or create (never a delete or rename)."""
        item = self.cursor
        refusal = self.why_not(item)
        if refusal is not None or item is None:
            return [], refusal
        entry = self.entries[item.op]
        if entry.needs_confirm:
            return [], Refusal.NEEDS_CONFIRM
        return self._set(item, Mark.ACCEPTED)

    def reject(self) -> tuple[list[tuple[int, Decision]], Refusal | None]:
        """`r`: reject the focused hunk or operation."""
        item = self.cursor
        refusal = self.why_not(item, accepting=False)
        if refusal is not None or item is None:
            return [], refusal
        return self._set(item, Mark.REJECTED)

    def reject_with_reason(self, reason: str) -> tuple[list[tuple[int, Decision]],
                                                      Refusal | None]:
        """`c`: reject the focused hunk or operation; the reason reaches the model next turn."""
        item = self.cursor
        refusal = self.why_not(item, accepting=False)
        if refusal is not None or item is None:
            return [], refusal
        entry = self.entries[item.op]
        if entry.sent or not self.item_undecided(item):
            return [], Refusal.DECIDED
        if reason.strip():
            entry.reasons[item.hunk] = " ".join(reason.split())
        return self._set(item, Mark.REJECTED)

    def amend(self, item: Item, hunk: Hunk | None = None, content: str | None = None
              ) -> tuple[list[tuple[int, Decision]], Refusal | None]:
        """`e`: accept the item as the person rewrote it (a hunk, or a create's content)."""
        refusal = self.why_not(item)
        if refusal is not None:
            return [], refusal
        entry = self.entries.get(item.op)
        if entry is None or entry.sent or not self.item_undecided(item):
            return [], Refusal.DECIDED
        if entry.blocked:
            return [], Refusal.BLOCKED
        if item.hunk is not None and hunk is not None:
            entry.amended[item.hunk] = hunk
        elif content is not None:
            entry.content = content
        self.cursor = item
        return self._set(item, Mark.ACCEPTED)

    def confirm(self) -> tuple[list[tuple[int, Decision]], Refusal | None]:
        """alt+d then alt+y: accept the focused delete or rename."""
        item = self.cursor
        refusal = self.why_not(item)
        if refusal is not None or item is None:
            return [], refusal
        if not self.entries[item.op].needs_confirm:
            return [], Refusal.NOTHING
        return self._set(item, Mark.ACCEPTED)

    def _set(self, item: Item, mark: Mark) -> tuple[list[tuple[int, Decision]], Refusal | None]:
        entry = self.entries[item.op]
        if entry.sent or not self.item_undecided(item):
            return [], Refusal.DECIDED
        if mark is Mark.ACCEPTED and entry.blocked:
            return [], Refusal.BLOCKED
        if item.hunk is None:
            entry.mark = mark
        else:
            entry.hunks[item.hunk] = mark
        out = self._ready([entry])
        self._settle(entry)
        self._advance()
        return out, None

    def accept_all(self) -> list[tuple[int, Decision]]:
        """`A`: every undecided modify hunk and create (never a delete, a rename or a blocked
        operation); the cursor goes to the first item still undecided."""
        if self.closed or self.doomed:
            return []
        touched = []
        for entry in self.entries.values():
            if entry.sent or entry.blocked or entry.needs_confirm:
                continue
            if entry.per_hunk:
                entry.hunks = [Mark.ACCEPTED if m is Mark.UNDECIDED else m for m in entry.hunks]
            elif entry.mark is Mark.UNDECIDED:
                entry.mark = Mark.ACCEPTED
            touched.append(entry)
        out = self._ready(touched)
        self._reopen()
        self.cursor = self.first_undecided()
        return out

    def reject_all(self) -> list[tuple[int, Decision]]:
        """`R`: everything still undecided is rejected; accepted hunks stay accepted."""
        touched = []
        for entry in self.entries.values():
            if entry.sent:
                continue
            entry.hunks = [Mark.REJECTED if m is Mark.UNDECIDED else m for m in entry.hunks]
            if entry.mark is Mark.UNDECIDED:
                entry.mark = Mark.REJECTED
            touched.append(entry)
        out = self._ready(touched)
        self._reopen()
        return out

    def _ready(self, entries: list[Entry]) -> list[tuple[int, Decision]]:
        out = []
        for entry in entries:
            decision = entry.decision()
            if decision is not None and not entry.sent:
                entry.sent = True
                self._unsent.discard(entry.index)
                out.append((entry.index, decision))
        return out

    def undecided(self) -> list[Entry]:
        """The operations whose decision is not sent yet, in order."""
        return [self.entries[i] for i in sorted(self._unsent)]

    @property
    def undecided_count(self) -> int:
        return len(self._unsent)


def _place(entry: Entry) -> tuple[bool, int]:
    """Where an operation is listed: deletes and renames before the rest."""
    return not entry.needs_confirm, entry.index


def _items_of(entry: Entry) -> list[Item]:
    if entry.per_hunk:
        return [Item(entry.index, h) for h in range(len(entry.hunks))]
    return [Item(entry.index)]
