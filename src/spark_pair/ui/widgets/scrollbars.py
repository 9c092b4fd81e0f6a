"""Scrollbars told of a virtual size set quietly (`set_reactive`), with Textual's public API."""

from __future__ import annotations

from textual.geometry import Size
from textual.widget import Widget

from .diff_rows import _bar


def bars_for(view: Widget, size: Size) -> tuple[bool, bool]:
    """The scrollbars (horizontal, vertical) a virtual size gets (as Textual decides)."""
    styles = view.styles
    width, height = view.container_size
    horizontal = _bar(styles.overflow_x, size.width > width)
    vertical = _bar(styles.overflow_y, size.height > height)
    if styles.overflow_x == "auto" and vertical and not horizontal:
        horizontal = size.width > width - styles.scrollbar_size_vertical
    if styles.overflow_y == "auto" and horizontal and not vertical:
        vertical = size.height > height - styles.scrollbar_size_horizontal
    return horizontal, vertical


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
