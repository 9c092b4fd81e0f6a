"""The one place the app relies on Textual's private state, where Textual has no public way.
tests/ui/test_textual_private.py fails when a Textual upgrade changes what is used here.

- `_anchor_released`: Textual offers `anchor()`, `release_anchor()` and `is_anchored`, but no
  way to ask whether the anchor is released (the person scrolled away from the tail, and has
  not scrolled back to it). Textual's compositor follows the tail when a widget is anchored
  and not released; the live diff reads the same flag, so it follows exactly when Textual does.
"""

from __future__ import annotations

from textual.widget import Widget


def anchor_released(widget: Widget) -> bool:
    """The widget's anchor is released: it is anchored but the person scrolled away."""
    return widget._anchor_released
