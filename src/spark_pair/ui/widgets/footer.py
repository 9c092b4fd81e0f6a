"""The key footer: one line of text, repainted (never rebuilt) when the keys it shows change.

Textual's Footer is a row of widgets, one per key, rebuilt whenever the screen's bindings are
refreshed (focus moves, a turn starts or ends): new widgets and a new layout of the whole
screen, tens of milliseconds each, in the middle of a stream. This one is a single line: it is
repainted only when what it shows (key, label, enabled, tooltip) changes. A click presses the
key under the pointer; hovering shows the key's tooltip.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from rich.style import Style
from rich.text import Text
from textual import events
from textual.screen import Screen
from textual.widget import Widget

_DIM = Style(dim=True)
_GAP = "  "


class FooterKey(NamedTuple):
    """One key as the footer shows it."""

    key: str
    display: str
    description: str
    enabled: bool
    tooltip: str


class AppFooter(Widget, can_focus=False):
    ALLOW_SELECT = False
    COMPONENT_CLASSES = {"app-footer--key", "app-footer--description", "app-footer--rule"}
    DEFAULT_CSS = """
    AppFooter {
        dock: bottom;
        height: 1;
        color: $footer-foreground;
        background: $footer-background;
        & > .app-footer--key {
            color: $footer-key-foreground;
            background: $footer-key-background;
            text-style: bold;
        }
        & > .app-footer--description {
            color: $footer-description-foreground;
            background: $footer-description-background;
        }
        & > .app-footer--rule { color: $foreground 20%; }
    }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.keys: tuple[FooterKey, ...] = ()  # left to right
        self.palette: FooterKey | None = None  # the command palette's key, at the right
        self._spans: list[tuple[int, int, FooterKey]] = []  # painted columns of each key

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self.bindings_changed)
        self.bindings_changed(self.screen)

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def bindings_changed(self, screen: Screen[Any]) -> None:
        if not screen.app.app_focus or screen is not self.screen:
            return  # (the terminal lost focus: the keys stay as they are)
        keys, palette = self._keys_shown()
        if (keys, palette) != (self.keys, self.palette):
            self.keys, self.palette = keys, palette
            self.refresh()

    def _keys_shown(self) -> tuple[tuple[FooterKey, ...], FooterKey | None]:
        app = self.app
        keys: dict[str, FooterKey] = {}  # one per action: its first binding
        palette = None
        for name, (_, binding, enabled, tooltip) in self.screen.active_bindings.items():
            key = FooterKey(binding.key, app.get_key_display(binding), binding.description,
                            enabled, tooltip or binding.tooltip or binding.description)
            if name == app.COMMAND_PALETTE_BINDING and app.ENABLE_COMMAND_PALETTE:
                palette = key
            elif binding.show:
                keys.setdefault(binding.action, key)
        return tuple(keys.values()), palette

    # ---- painting ------------------------------------------------------------------------

    def render(self) -> Text:
        key_style = self.get_component_rich_style("app-footer--key")
        description_style = self.get_component_rich_style("app-footer--description")
        width = self.size.width
        right = Text()
        if self.palette is not None:
            right.append("▏", self.get_component_rich_style("app-footer--rule"))
            right.append(self.palette.display, key_style)
            right.append(f"{self.palette.description} ", description_style)
        room = max(0, width - right.cell_len)
        text = Text(no_wrap=True, overflow="crop")
        spans = []
        for key in self.keys:
            if text.cell_len >= room:
                break
            start = text.cell_len
            dim = _DIM if not key.enabled else Style()
            text.append(key.display, key_style + dim)
            text.append(key.description, description_style + dim)
            spans.append((start, min(room, text.cell_len), key))
            text.append(_GAP)
        text.truncate(room)
        text.pad_right(room - text.cell_len)
        if self.palette is not None:
            spans.append((room, width, self.palette))
        self._spans = spans
        return text + right

    # ---- the mouse -----------------------------------------------------------------------

    def key_at(self, x: int) -> FooterKey | None:
        for start, end, key in self._spans:
            if start <= x < end:
                return key
        return None

    def on_mouse_down(self, event: events.MouseDown) -> None:
        key = self.key_at(event.x)
        if key is None:
            return
        if key.enabled:
            self.app.simulate_key(key.key)
        else:
            self.app.bell()

    def on_mouse_move(self, event: events.MouseMove) -> None:
        key = self.key_at(event.x)
        self.tooltip = key.tooltip if key is not None else None
