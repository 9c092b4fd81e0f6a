"""The key footer, rebuilt only when the keys it shows change.

Textual's Footer rebuilds all its key widgets whenever the screen's bindings are refreshed
(focus moves, a turn starts or ends): tens of milliseconds each on a loaded machine, in the
middle of a stream. This one rebuilds at most once per screen refresh, and only when what it
shows (key, label, action, enabled, tooltip) differs from what is on screen.
"""

from __future__ import annotations

from typing import Any

from textual.screen import Screen
from textual.widgets import Footer


class AppFooter(Footer):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._shown: tuple[Any, ...] | None = None
        self._pending = False

    def bindings_changed(self, screen: Screen[Any]) -> None:
        self._bindings_ready = True
        if not screen.app.app_focus:
            return
        if self.is_attached and screen is self.screen and not self._pending:
            self._pending = True
            self.call_after_refresh(self._rebuild)

    async def _rebuild(self) -> None:
        self._pending = False
        shown = self._keys_shown()
        if shown != self._shown:
            self._shown = shown
            await self.recompose()

    def _keys_shown(self) -> tuple[Any, ...]:
        app = self.app
        return tuple((b.key, app.get_key_display(b), b.description, b.action, b.group, b.show,
                      enabled, tooltip)
                     for _, b, enabled, tooltip in self.screen.active_bindings.values())
