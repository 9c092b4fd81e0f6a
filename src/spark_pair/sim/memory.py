"""The simulator's small conversation memory: "remember N" / "what number ...?" answered from
the conversation a request really carries (its own input plus its previous_response_id chain)."""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Sequence

Item = tuple[str, str]  # (role, text)

REMEMBER = re.compile(r"\bremember\b[^.?!\d]{0,40}?(-?\d+)", re.IGNORECASE)
RECALL = re.compile(r"\b(?:what|which|recall)\b[^.?!]*\bnumbers?\b"
                    r"|\bnumbers?\b[^.?!]*\brecall\b", re.IGNORECASE)
UNKNOWN = "I don't know."


def remembered_number(text: str) -> str | None:
    """The last number the text asks to remember ("remember [the number] N")."""
    found = REMEMBER.findall(text)
    return found[-1] if found else None


def memory_reply(last_user_text: str, conversation: Sequence[Item]) -> str | None:
    """The reply when the last user input asks to recall or to remember a number, else None."""
    if RECALL.search(last_user_text):
        for role, text in reversed(conversation):
            number = remembered_number(text) if role == "user" else None
            if number is not None:
                return number
        return UNKNOWN
    number = remembered_number(last_user_text)
    if number is not None:
        return f"OK, I will remember {number}."
    return None


class ResponseStore:
    """Stored responses by id: (previous id, input + output items); the oldest are dropped."""

    def __init__(self, limit: int = 1000) -> None:
        self.limit = limit
        self._items: OrderedDict[str, tuple[str | None, list[Item]]] = OrderedDict()

    def __contains__(self, response_id: object) -> bool:
        return response_id in self._items

    def __len__(self) -> int:
        return len(self._items)

    def put(self, response_id: str, previous: str | None, items: list[Item]) -> None:
        self._items[response_id] = (previous, items)
        while len(self._items) > self.limit:
            self._items.popitem(last=False)

    def history(self, response_id: str | None) -> list[Item]:
        """The conversation up to and including `response_id`, oldest first (a chain cut by an
        evicted link ends there)."""
        parts: list[list[Item]] = []
        seen: set[str] = set()
        for _ in range(self.limit):  # bounded; ids never repeat but be safe
            if response_id is None or response_id in seen or response_id not in self._items:
                break
            seen.add(response_id)
            response_id, items = self._items[response_id]
            parts.append(items)
        return [item for items in reversed(parts) for item in items]

    def clear(self) -> None:
        self._items.clear()
