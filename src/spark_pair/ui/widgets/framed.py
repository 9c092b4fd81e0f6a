"""Rows framed as Textual frames them, kept while the frame looks the same (the live diff's
border and line filters, without Textual framing each row of each frame again)."""

from __future__ import annotations

from collections.abc import Sized

from rich.segment import Segment
from textual.cache import LRUCache
from textual.geometry import Region
from textual.scroll_view import ScrollView
from textual.strip import Strip

CACHE_ROWS = 512  # strips kept; a rebuilt row costs tens of microseconds


class FramedRows(ScrollView):
    """A ScrollView whose `rows` (and an unfinished last row, `partial`) are painted by
    `render_line` and framed here."""

    rows: Sized
    partial: str

    def __init__(self, *, name: str | None = None, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        # painted rows by (row, scroll x, width), framed (border, filters)
        self._framed: LRUCache[tuple[int, int, int], Strip] = LRUCache(CACHE_ROWS)
        self._framing: tuple[object, ...] | None = None  # what the framed rows were made with
        self._edges: dict[tuple[int, object, object], Strip] = {}  # border rows by (y, titles)
        # a framed row's left and right edge and its padding, as Textual frames a blank row
        self._sides: tuple[Segment, Segment, Segment] | None = None
        self._framing_blank = False  # render_line paints nothing (Textual frames a blank row)

    def render_lines(self, crop: Region) -> list[Strip]:
        """The rows in `crop`, framed as Textual frames them (border, the app's line filters).
        A row framed once is kept (by row, scroll x and width) while the frame looks the same:
        when the tail scrolls, only the rows new to the view are framed, and the screen's own
        caches of a kept strip (its cuts, its rendering) are reused. Where the frame is a
        plain border, a row is framed here with the edges and padding of a blank row Textual
        framed; else by Textual. The border's top and bottom rows are Textual's, kept by
        their titles."""
        styles = self.styles
        size = self.region.size
        base_background, background = self.background_colors
        app = self.app
        filters = tuple(self.get_line_filters())
        opacity = self.opacity
        # (not the view's height: rows framed before the review pane took some of it stay)
        framing = (size.width, self.content_region.size.width, base_background, background,
                   styles.border, styles.outline, styles.padding, styles.tint,
                   styles.text_opacity, opacity, app.ansi_theme, app.native_ansi_color, filters,
                   styles.hatch if styles.has_rule("hatch") else None)
        gutter = styles.gutter
        top, bottom = gutter.top, size.height - gutter.bottom
        frame = super().render_lines
        if framing != self._framing:
            self._framed.clear()
            self._edges.clear()
            self._framing = framing
            self._sides = None
            plain = (not any(styles.padding) and not any(e for e, _ in styles.outline)
                     and not styles.tint.a and styles.text_opacity == opacity == 1.0
                     and framing[-1] is None and top < bottom)
            if plain:  # a row is [left edge, the row, padding, right edge]: take the edges
                self._framing_blank = True  # and the padding from Textual's frame of a blank row
                try:
                    framed = list(frame(Region(0, top, size.width, 1))[0])
                finally:
                    self._framing_blank = False
                self.refresh(Region(0, 0, size.width, 1))  # (Textual keeps that row framed)
                if len(framed) == 3 and framed[0].text and framed[2].text:
                    self._sides = (framed[0], framed[2], framed[1])
        sides = self._sides
        inner = self.content_region.size.width
        scroll_x, scroll_y = self.scroll_offset
        width = self.scrollable_content_region.width
        end = len(self.rows)
        strips: list[Strip] = []
        for y in crop.line_range:
            if not top <= y < bottom:  # border (or padding) rows
                edge = (y, self.border_title, self.border_subtitle)
                strip = self._edges.get(edge)
                if strip is None:
                    strip = self._edges[edge] = frame(Region(0, y, size.width, 1))[0]
                strips.append(strip)
                continue
            index = scroll_y + y - top
            key = (index if index < end else -1, scroll_x, width)  # (-1: a blank row)
            strip = None if index == end and self.partial else self._framed.get(key)
            if strip is None:
                if sides is None:
                    strip = frame(Region(0, y, size.width, 1))[0]
                else:  # the edges and padding have Textual's filters already: the row gets them
                    row = self.render_line(y - top)
                    if row.cell_length > inner:
                        row = row.crop(0, inner)
                    for line_filter in filters:
                        row = row.apply_filter(line_filter, background)
                    segments = [sides[0], *row]
                    if row.cell_length < inner:
                        segments.append(Segment(" " * (inner - row.cell_length), sides[2].style))
                    segments.append(sides[1])
                    strip = Strip(segments, size.width)
                if not (index == end and self.partial):
                    self._framed.set(key, strip)
            strips.append(strip)
        if crop.column_span != (0, size.width):
            x1, x2 = crop.column_span
            strips = [strip.crop(x1, x2) for strip in strips]
        return strips
