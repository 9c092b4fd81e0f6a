"""What the person has decided about a turn's operations, and where the review cursor is.

Plain Python (the review pane draws it). The items a cursor moves over: each hunk of a modify,
and each create, delete or rename as a whole. A modify's decision goes to the session once all
its hunks are decided; a delete or rename is accepted only by `confirm` (its own key and a y/n);
an operation whose file changed on disk is blocked until the session asks about it again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from ..approval import Action, Decision
from ..edits.ops import Create, Delete, Hunk, Modify, Operation, Rename


class Mark(StrEnum):
    UNDECIDED = "undecided"
    ACCEPTED = "accepted"
    REJECTED = "rejected"


class Kind(StrEnum):
    MODIFY = "modify"
    CREATE = "create"
    DELETE = "delete"
    RENAME = "rename"


def kind_of(op: Operation) -> Kind:
    match op:
        case Modify():
            return Kind.MODIFY
        case Create():
            return Kind.CREATE
        case Delete():
            return Kind.DELETE
        case Rename():
            return Kind.RENAME
    raise TypeError(f"not an operation: {op!r}")


@dataclass
class Entry:
    """One operation of the turn as the person sees it."""

    index: int
    op: Operation
    hunks: list[Mark] = field(default_factory=list)  # a modify's hunks
    mark: Mark = Mark.UNDECIDED  # the whole operation (derived for a modify with hunks)
    stale: bool = False  # its file changed on disk after the request
    blocked: bool = False  # stale and not asked about again: cannot be accepted
    sent: bool = False  # the decision went to the session
    problem: str = ""  # a refusal or conflict, with its hint
    applied: bool = False
    reasons: dict[int | None, str] = field(default_factory=dict)  # the person's, per item
    amended: dict[int, Hunk] = field(default_factory=dict)  # hunks the person rewrote
    content: str | None = None  # a create's content as the person rewrote it

    @property
    def kind(self) -> Kind:
        return kind_of(self.op)

    @property
    def per_hunk(self) -> bool:
        return bool(self.hunks)

    @property
    def needs_confirm(self) -> bool:
        return self.kind in (Kind.DELETE, Kind.RENAME)

    @property
    def undecided(self) -> bool:
        if self.per_hunk:
            return Mark.UNDECIDED in self.hunks
        return self.mark is Mark.UNDECIDED

    def decision(self) -> Decision | None:
        """The decision once everything in the operation is decided."""
        if self.undecided:
            return None
        if not self.per_hunk:
            if self.mark is Mark.ACCEPTED:
                return Decision(Action.ACCEPT, content=self.content)
            return Decision(Action.REJECT, self.reasons.get(None, ""))
        notes = tuple((i, why) for i, why in sorted(self.reasons.items(), key=_by_hunk)
                      if i is not None and self.hunks[i] is Mark.REJECTED)
        accepted = tuple(i for i, m in enumerate(self.hunks) if m is Mark.ACCEPTED)
        if not accepted:
            return Decision(Action.REJECT, self.reasons.get(None, ""), notes=notes)
        whole = len(accepted) == len(self.hunks)
        amended = tuple((i, h) for i, h in sorted(self.amended.items()) if i in accepted)
        return Decision(Action.ACCEPT, "", None if whole else accepted, notes=notes,
                        amended=amended)


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


class Review:
    """The operations of one turn, their marks and the cursor."""

    def __init__(self) -> None:
        self.entries: dict[int, Entry] = {}
        self.cursor: Item | None = None

    # ---- what the session says ---------------------------------------------------------

    def propose(self, index: int, op: Operation, *, stale: bool = False) -> Entry:
        """A proposal (a second one for the same index means the session asks again: the
        operation is no longer blocked, and what was not yet sent is asked again)."""
        old = self.entries.get(index)
        entry = Entry(index, op, [Mark.UNDECIDED] * len(op.hunks) if isinstance(op, Modify)
                      else [], stale=stale or (old is not None and old.stale))
        self.entries[index] = entry
        if self.cursor not in self.items() or not self.item_undecided(self.cursor):
            self.cursor = self.first_undecided()
        return entry

    def mark_stale(self, index: int) -> None:
        entry = self.entries.get(index)
        if entry is not None and not entry.sent:
            entry.stale = entry.blocked = True
        elif entry is not None:
            entry.stale = True

    def refuse(self, index: int, text: str) -> None:
        """The session will not write this operation (nothing left to decide about it)."""
        entry = self.entries.get(index)
        if entry is not None:
            entry.problem = text
            entry.sent = True
            if self.cursor is not None and self.cursor.op == index:
                self._advance()

    def set_applied(self, indices: list[int]) -> None:
        for i in indices:
            if i in self.entries:
                self.entries[i].applied = True

    def clear(self) -> None:
        self.entries.clear()
        self.cursor = None

    # ---- items and the cursor ----------------------------------------------------------

    def items(self) -> list[Item]:
        out: list[Item] = []
        for index in sorted(self.entries):
            entry = self.entries[index]
            if entry.per_hunk:
                out += [Item(index, h) for h in range(len(entry.hunks))]
            else:
                out.append(Item(index))
        return out

    def item_undecided(self, item: Item) -> bool:
        entry = self.entries[item.op]
        if item.hunk is None:
            return entry.undecided
        return entry.hunks[item.hunk] is Mark.UNDECIDED

    def first_undecided(self) -> Item | None:
        items = self.items()
        found = next((it for it in items if self.item_undecided(it)), None)
        return found or (items[0] if items else None)

    def move(self, step: int) -> None:
        """Next / previous item (j / k)."""
        items = self.items()
        if not items:
            return
        if self.cursor not in items:
            self.cursor = items[0]
            return
        pos = items.index(self.cursor) + step
        self.cursor = items[max(0, min(len(items) - 1, pos))]

    def move_file(self, step: int) -> None:
        """First item of the next / previous operation (n / p)."""
        items = self.items()
        if not items:
            return
        current = self.cursor.op if self.cursor in items else items[0].op
        ops = sorted(self.entries)
        pos = max(0, min(len(ops) - 1, ops.index(current) + step))
        self.cursor = next(it for it in items if it.op == ops[pos])

    def _advance(self) -> None:
        """To the next undecided item after the cursor (wrapping); stays when none is left."""
        items = self.items()
        if not items:
            return
        start = items.index(self.cursor) if self.cursor in items else -1
        for k in range(1, len(items) + 1):
            it = items[(start + k) % len(items)]
            if self.item_undecided(it):
                self.cursor = it
                return

    # ---- what the person says ------------------------------------------------------------

    def accept(self) -> tuple[list[tuple[int, Decision]], Refusal | None]:
        """`a`: accept the focused hunk or create (never a delete or rename)."""
        item = self.cursor
        if item is None:
            return [], Refusal.NOTHING
        entry = self.entries[item.op]
        if entry.needs_confirm:
            return [], Refusal.NEEDS_CONFIRM
        return self._set(item, Mark.ACCEPTED)

    def reject(self) -> tuple[list[tuple[int, Decision]], Refusal | None]:
        """`r`: reject the focused hunk or operation."""
        item = self.cursor
        if item is None:
            return [], Refusal.NOTHING
        return self._set(item, Mark.REJECTED)

    def reject_with_reason(self, reason: str) -> tuple[list[tuple[int, Decision]],
                                                      Refusal | None]:
        """`c`: reject the focused hunk or operation; the reason reaches the model next turn."""
        item = self.cursor
        if item is None:
            return [], Refusal.NOTHING
        entry = self.entries[item.op]
        if entry.sent or not self.item_undecided(item):
            return [], Refusal.DECIDED
        if reason.strip():
            entry.reasons[item.hunk] = " ".join(reason.split())
        return self._set(item, Mark.REJECTED)

    def amend(self, item: Item, hunk: Hunk | None = None, content: str | None = None
              ) -> tuple[list[tuple[int, Decision]], Refusal | None]:
        """`e`: accept the item as the person rewrote it (a hunk, or a create's content)."""
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
        """`d` then `y`: accept the focused delete or rename."""
        item = self.cursor
        if item is None:
            return [], Refusal.NOTHING
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
        self._advance()
        return out, None

    def accept_all(self) -> list[tuple[int, Decision]]:
        """`A`: every undecided modify hunk and create (never a delete, a rename or a blocked
        operation); the cursor goes to the first item still undecided."""
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
        return self._ready(touched)

    def _ready(self, entries: list[Entry]) -> list[tuple[int, Decision]]:
        out = []
        for entry in entries:
            decision = entry.decision()
            if decision is not None and not entry.sent:
                entry.sent = True
                out.append((entry.index, decision))
        return out

    def undecided(self) -> list[Entry]:
        return [e for e in self.entries.values() if not e.sent]
