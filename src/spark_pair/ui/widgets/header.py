"""The top line: repository, model, transport and its state, and where the keys are."""

from __future__ import annotations

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from ...edits.paths import shown
from ..driver import Connection

# state -> (marker, words); the marker is never the only signal
STATES = {
    "idle": ("○", "ready"),
    "connecting": ("◌", "connecting"),
    "connected": ("●", "connected"),
    "reconnecting": ("↻", "reconnecting"),
    "fell back": ("▲", "fell back to HTTP"),
    "failed": ("✗", "not connected"),
    "opening": ("◌", "opening"),
}


class AppHeader(Widget):
    """`spark-pair  repo  model  ws ● connected   ? keys`"""

    DEFAULT_CSS = """
    AppHeader {
        height: 1;
        background: $panel;
        color: $text;
    }
    """

    repo: reactive[str] = reactive("")
    """The repository's folder name."""
    model: reactive[str] = reactive("")
    """The model id requests go to."""
    connection: reactive[Connection] = reactive(Connection("auto", "opening"))
    """Transport and its state."""
    note: reactive[str] = reactive("")
    """A short status (simulator starting, turn running)."""

    def render(self) -> Text:
        c = self.connection
        marker, words = STATES.get(c.state, ("?", c.state))
        if c.state == "reconnecting" and c.attempts:
            words = f"reconnecting {c.attempt}/{c.attempts}"
        elif c.state == "reconnecting" and c.attempt:
            words = f"retrying ({c.attempt})"
        transport = {"responses": "http-sse", "chat": "chat"}.get(c.transport, c.transport)
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(" spark-pair ", style="bold")
        text.append(f" {shown(self.repo)} ")
        if self.model:
            text.append(f" {shown(self.model)} ", style="bold")
        text.append(f" {transport} {marker} {words}")
        if self.note:
            text.append(f"  {self.note}", style="italic")
        right = " ? keys "
        room = self.size.width - len(right)
        if text.cell_len > room:
            text.truncate(max(0, room - 1))
            text.append("…")
        text.append(" " * max(0, room - text.cell_len))
        text.append(right, style="bold")
        return text
