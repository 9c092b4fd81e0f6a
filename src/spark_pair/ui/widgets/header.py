"""The top line: repository, model, transport and its state, and where the keys are."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from ...base.printable import shown
from ...session.runtime import ConnectionState, ConnectionStatus

# state -> (marker, words); the marker is never the only signal
STATES = {
    ConnectionStatus.IDLE: ("○", "ready"),
    ConnectionStatus.CONNECTING: ("◌", "connecting"),
    ConnectionStatus.CONNECTED: ("●", "connected"),
    ConnectionStatus.RECONNECTING: ("↻", "reconnecting"),
    ConnectionStatus.FELL_BACK: ("▲", "fell back"),
    ConnectionStatus.FAILED: ("✗", "failed"),
    ConnectionStatus.ANSWERED_ERROR: ("✗", "error"),  # the words say which error
    "opening": ("◌", "opening"),
    "not open": ("✗", "not set up"),  # the runtime could not open (the notice says why)
}


@dataclass(frozen=True, slots=True)
class Connection:
    """A snapshot of the connection state, as the header shows it."""

    transport: str
    state: ConnectionStatus | str  # a ConnectionStatus, or "opening" / "not open" (no runtime)
    attempt: int = 0
    attempts: int = 0
    detail: str = ""

    @classmethod
    def of(cls, state: ConnectionState) -> Connection:
        return cls(str(state.transport), state.state, state.attempt, state.attempts,
                   state.reason)


class AppHeader(Widget):
    """`spark-pair  repo  model  ws ● connected   f1 keys`"""

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
        marker, words = STATES.get(c.state, ("?", str(c.state)))
        transport = {"responses": "http-sse"}.get(c.transport, c.transport)
        if c.state == ConnectionStatus.RECONNECTING:
            words = f"reconnecting {c.attempt}/{c.attempts}" if c.attempts else "reconnecting"
        elif c.state == ConnectionStatus.FELL_BACK:
            words = "fell back to HTTP" if c.transport != "ws" else "fell back"
        elif c.state == ConnectionStatus.ANSWERED_ERROR and c.detail:
            words = c.detail  # key refused, model not found: the link itself works
        state = f" {transport} {marker} {words}"
        note = f"  {self.note}" if self.note else ""
        right = " f1 keys "
        # the repository name gives way first, then the model: the state and f1 stay
        room = max(0, self.size.width - len(" spark-pair ") - len(state) - len(note)
                   - len(right) - 4)
        model = shown(self.model)
        repo = shown(self.repo)
        if len(repo) + len(model) > room:
            repo = _cut(repo, max(6, room - len(model)))
        if len(repo) + len(model) > room:
            model = _cut(model, max(6, room - len(repo)))
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(" spark-pair ", style="bold")
        text.append(f" {repo} ")
        if model:
            text.append(f" {model} ", style="bold")
        text.append(state)
        if note:
            text.append(note, style="italic")
        width = self.size.width - len(right)
        if text.cell_len > width:
            text.truncate(max(0, width))
        text.append(" " * max(0, width - text.cell_len))
        text.append(right, style="bold")
        return text


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(1, width - 1)] + "…"
