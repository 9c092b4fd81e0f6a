"""What a turn asks of the model: the endpoint of each transport, the messages, the request."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..base.transport import Transport

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


@dataclass(frozen=True, slots=True)
class Message:
    """One conversation item sent to the model."""

    role: str  # "system" | "user" | "assistant"
    content: str


@dataclass(slots=True)
class TurnRequest:
    """What the session asks of the model for one turn.

    `history` + `new_input` is the full conversation. On a live WS connection with a previous
    response, only `new_input` is sent together with `previous_response_id`; every other path
    (HTTP transports, a reconnect, a fallback model) sends `instructions` + history + new_input.
    `task` is a free label recorded in the store (edit, smoke, bench, ...).
    """

    instructions: str
    new_input: list[Message]
    history: list[Message] = field(default_factory=list)
    max_tokens: int | None = None
    temperature: float | None = None
    task: str = "edit"
