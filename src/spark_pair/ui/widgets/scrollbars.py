"""Scrollbars told of a virtual size set quietly (`set_reactive`), with Textual's public API."""

from __future__ import annotations

from textual.geometry import Size
from textual.widget import Widget


def tell_scrollbars(view: Widget, size: Size) -> None:
    """The scrollbars the view shows take its new virtual size, and its scroll place is kept
    within it, without a layout of the screen (the view's own repaint is the caller's). Which
    scrollbars show must not change: a layout decides that."""
    width, height = view.container_size
    if view.show_vertical_scrollbar and view.styles.scrollbar_size_vertical:
        bar = view.vertical_scrollbar
        bar.window_virtual_size = size.height
        bar.window_size = height - view.scrollbar_size_horizontal
    if view.show_horizontal_scrollbar and view.styles.scrollbar_size_horizontal:
        bar = view.horizontal_scrollbar
        bar.window_virtual_size = size.width
        bar.window_size = width - view.scrollbar_size_vertical
    view.scroll_x = view.scroll_x  # (each setting validates: within the new size)
    view.scroll_y = view.scroll_y
