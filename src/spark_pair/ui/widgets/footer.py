"""The key footer: one line of text, repainted (never rebuilt) when the keys it shows change.

Textual's Footer is a row of widgets, one per key, rebuilt whenever the screen's bindings are
refreshed (focus moves, a turn starts or ends): new widgets and a new layout of the whole
screen, tens of milliseconds each, in the middle of a stream. This one is a single line: it is
repainted only when what it shows (key, label, enabled, tooltip) changes. Which keys, in which
order, and how many fit: `ui.footer_keys` (the focused pane's most important keys first; the
help and palette keys always, at the right). A click presses the key under the pointer;
hovering shows the key's tooltip. Under a question or a pane (the check, the keys screen) it
shows the keys of the screen on top: only those act there.
"""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual import events
from textual.screen import Screen
from textual.widget import Widget

from ..footer_keys import Shown, fit, keys_shown
from ..typed import repaint_over

_DIM = Style(dim=True)


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

    def __init__(self, *, name: str | None = None, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.keys: tuple[Shown, ...] = ()  # in order of importance
        self.pinned: tuple[Shown, ...] = ()  # help and the palette, at the right
        self._spans: list[tuple[int, int, Shown]] = []  # painted columns of each key

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self.bindings_changed)
        self.app.screen_change_signal.subscribe(self, self._screen_changed)
        self.bindings_changed(self.screen)

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)
        self.app.screen_change_signal.unsubscribe(self)

    def _screen_changed(self, screen: Screen[object]) -> None:
        """A question or a pane opened over this screen (or closed): the footer shows the keys
        of the screen on top (the keys in effect), once it is mounted."""
        self.call_after_refresh(self._follow)

    def _follow(self) -> None:
        top = self.app.screen
        if top is not self.screen and top.is_running:
            top.bindings_updated_signal.unsubscribe(self)  # (a screen seen again: once)
            top.bindings_updated_signal.subscribe(self, self.bindings_changed)
        self.bindings_changed(top)

    def bindings_changed(self, screen: Screen[object]) -> None:
        if not screen.app.app_focus or screen is not self.app.screen:
            return  # (the terminal lost focus: the keys stay as they are)
        app = self.app
        active = screen.active_bindings
        if screen is not self.screen:  # a question's own keys, and the app's that act over it
            active.update((k, a) for k, a in self.screen.active_bindings.items()
                          if a.node is app and a.binding.priority and k not in active)
        palette = active.get(app.COMMAND_PALETTE_BINDING) if app.ENABLE_COMMAND_PALETTE else None
        keys, pinned = keys_shown(((b, enabled, tooltip) for _, b, enabled, tooltip
                                   in active.values()), app.get_key_display,
                                  palette.binding if palette is not None else None)
        if (tuple(keys), tuple(pinned)) != (self.keys, self.pinned):
            self.keys, self.pinned = tuple(keys), tuple(pinned)
            self.refresh()
            if screen is not self.screen:
                self.call_after_refresh(repaint_over, self.screen)  # (seen through questions)

    # ---- painting ------------------------------------------------------------------------

    def render(self) -> Text:
        key_style = self.get_component_rich_style("app-footer--key")
        description_style = self.get_component_rich_style("app-footer--description")
        width = self.size.width
        keys, gap = fit(self.keys, self.pinned, width)
        text = Text(no_wrap=True, overflow="crop")
        spans: list[tuple[int, int, Shown]] = []
        for key in keys:
            if spans:
                text.append(" " * gap)
            start = text.cell_len + len(key.lead)  # (the modifier alone presses nothing)
            self._append(text, key, key_style, description_style)
            spans.append((start, text.cell_len, key))
        right = Text(no_wrap=True, overflow="crop")
        if self.pinned:
            right.append("▏", self.get_component_rich_style("app-footer--rule"))
        starts = []
        for i, key in enumerate(self.pinned):
            if i:
                right.append(" ")
            starts.append(right.cell_len)
            self._append(right, key, key_style, description_style)
        right.append(" ")
        room = max(0, width - right.cell_len)
        text.truncate(room)
        text.pad_right(room - text.cell_len)
        for start, key in zip(starts, self.pinned, strict=True):
            spans.append((room + start, room + start + key.width, key))
        self._spans = spans
        return text + right

    @staticmethod
    def _append(text: Text, key: Shown, key_style: Style, description_style: Style) -> None:
        dim = _DIM if not key.enabled else Style()
        if key.lead:
            text.append(key.lead, description_style + dim)
        text.append(key.display, key_style + dim)
        text.append(" " + key.label, description_style + dim)  # not by colour alone

    # ---- the mouse -----------------------------------------------------------------------

    def key_at(self, x: int) -> Shown | None:
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
