"""What a turn asks of the model: the transport names, the messages, the request."""

from __future__ import annotations

from enum import StrEnum


class Transport(StrEnum):
    """The three ways to reach a model (the one transport name list of the code base)."""

    WS = "ws"  # Responses over one persistent WebSocket
    RESPONSES = "responses"  # Responses over HTTP SSE
    CHAT = "chat"  # Chat Completions over HTTP SSE


CONNECT_TIMEOUT_S = 10.0  # the default time to open a connection
# a name's next address is tried when one fails, or this long after it began (RFC 8305's
# connection attempt delay), all within the one connect timeout
CONNECT_STAGGER_S = 0.25
# the header that asks for the Responses API's WebSocket mode
BETA_HEADER = ("openai-beta", "responses_websockets=2026-02-06")


def user_agent() -> str:
    """The User-Agent of every request to a model, whichever way it goes out."""
    from .. import __version__

    return f"spark-pair/{__version__}"


def endpoint_url(base_url: str, transport: Transport) -> str:
    """The URL a transport sends a turn to: the API root plus /v1/chat/completions or
    /v1/responses (ws:// or wss:// for the WebSocket mode)."""
    base = base_url.rstrip("/")
    if transport == Transport.CHAT:
        return base + "/v1/chat/completions"
    if transport == Transport.WS:
        if base.startswith("https://"):
            base = "wss://" + base[len("https://"):]
        elif base.startswith("http://"):
            base = "ws://" + base[len("http://"):]
    return base + "/v1/responses"


class Message:
    """One conversation item sent to the model (immutable)."""

    __slots__ = ("role", "content")
    __match_args__ = ("role", "content")
    role: str  # "system" | "user" | "assistant"
    content: str

    def __init__(self, role: str, content: str) -> None:
        object.__setattr__(self, "role", role)
        object.__setattr__(self, "content", content)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Message is immutable (cannot set {name!r})")

    def __eq__(self, other: object) -> bool:
        if type(other) is not Message:
            return NotImplemented
        return (self.role, self.content) == (other.role, other.content)

    def __hash__(self) -> int:
        return hash((self.role, self.content))

    def __repr__(self) -> str:
        return f"Message(role={self.role!r}, content={self.content!r})"


class TurnRequest:
    """What the session asks of the model for one turn.

    `history` + `new_input` is the full conversation. On a live WS connection with a previous
    response, only `new_input` is sent together with `previous_response_id`; every other path
    (HTTP transports, a reconnect, a fallback model) sends `instructions` + history + new_input.
    `task` is a free label recorded in the store (edit, smoke, bench, ...).
    """

    __slots__ = ("instructions", "new_input", "history", "max_tokens", "temperature", "task")
    __match_args__ = ("instructions", "new_input", "history", "max_tokens", "temperature",
                      "task")

    def __init__(self, instructions: str, new_input: list[Message],
                 history: list[Message] | None = None, max_tokens: int | None = None,
                 temperature: float | None = None, task: str = "edit") -> None:
        self.instructions = instructions
        self.new_input = new_input
        self.history = [] if history is None else history
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.task = task

    def _key(self) -> tuple:
        return tuple(getattr(self, name) for name in self.__match_args__)

    def __eq__(self, other: object) -> bool:
        if type(other) is not TurnRequest:
            return NotImplemented
        return self._key() == other._key()

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__match_args__)
        return f"TurnRequest({inner})"
