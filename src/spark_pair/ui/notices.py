"""What the main screen's notice line says that more than one part of the screen says."""

from __future__ import annotations

from typing import Any

from ..base.printable import shown

STREAMING = "the reply is streaming: escape stops it; nothing is written until you decide"


def op_label(op: Any) -> str:
    """An operation as the notice names it: its path (a rename: both)."""
    src = getattr(op, "src", None)
    return f"{shown(src)} → {shown(op.dst)}" if src is not None else shown(op.path)


def first_line(text: str) -> str:
    return text.partition("\n")[0]


def displayed(widget: Any) -> bool:
    """Whether the widget and every container it is in are displayed."""
    return all(node.display for node in widget.ancestors_with_self if hasattr(node, "display"))
