"""The main screen's notice line, and what more than one part of the screen says in it."""

from __future__ import annotations

from typing import Protocol

from textual.dom import DOMNode
from textual.widgets import Static

from ..base.printable import shown
from ..edits.ops import Operation, Rename
from .host import Panes

# (true before the first token too: while it connects, or reconnects)
STREAMING = "the turn is under way: escape stops it; nothing is written until you decide"


def op_label(op: Operation) -> str:
    """An operation as the notice names it: its path (a rename: both)."""
    return f"{shown(op.src)} → {shown(op.dst)}" if isinstance(op, Rename) else shown(op.path)


def first_line(text: str) -> str:
    return text.partition("\n")[0]


def displayed(widget: DOMNode) -> bool:
    """Whether the widget and every container it is in are displayed."""
    return all(node.display for node in widget.ancestors_with_self if hasattr(node, "display"))


class NoticeHost(Panes, Protocol):
    """What the notice line uses of the main screen: its widget, and `say` (which clears the
    screen first for a turn that is starting)."""

    def say(self, text: str, op: int | None = None) -> None: ...


class Notice:
    """The notice line: one text at a time, a problem drawn as one, and the operation it is
    about (it gives way when that operation's state changes)."""

    def __init__(self, screen: NoticeHost) -> None:
        self.screen = screen
        self.op: int | None = None  # the operation the notice is about

    def _line(self) -> Static:
        line: Static = self.screen.query_one("#notice", Static)
        return line

    def say(self, text: str, op: int | None = None) -> None:
        self.op = op
        notice = self._line()
        if str(notice.content) == text and not notice.has_class("-error"):
            return  # an update lays out the whole screen again
        notice.update(text)
        notice.set_class(not text, "-empty")
        notice.remove_class("-error")

    def alert(self, text: str) -> None:
        self.op = None
        notice = self._line()
        notice.update(text)
        notice.remove_class("-empty")
        notice.add_class("-error")

    def give_way(self, op: int | None) -> None:
        """The notice about `op` goes: that operation's state changed (its row says how)."""
        if op is not None and op == self.op:
            self.screen.say("")

    def shown(self) -> bool:
        return not self._line().has_class("-empty")

    def says(self, text: str) -> bool:
        notice = self._line()
        return str(notice.content) == text and not notice.has_class("-error")
