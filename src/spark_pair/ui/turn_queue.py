"""The turns waiting for the running one (tab from the prompt, saved `AI!` comments): the chip
on the prompt's border that shows them."""

from __future__ import annotations

from collections.abc import Sequence

from textual.markup import escape

from ..base.printable import shown_text

CHIP_WORDS = 32  # characters of the next turn's prompt the chip shows


def chip(queued: Sequence[tuple[str, Sequence[str]]]) -> str:
    """`⧗ 2 queued: make it async…` (empty with nothing queued)."""
    if not queued:
        return ""
    first = " ".join(queued[0][0].split())
    if len(first) > CHIP_WORDS:
        first = first[:CHIP_WORDS - 1].rstrip() + "…"
    return escape(f"⧗ {len(queued)} queued: {shown_text(first)}")
