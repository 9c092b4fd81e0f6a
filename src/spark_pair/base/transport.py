"""The three ways to reach a model: the names settings, the client and the front ends share."""

from __future__ import annotations

from enum import StrEnum


class Transport(StrEnum):
    """The three ways to reach a model (the one transport name list of the code base)."""

    WS = "ws"  # Responses over one persistent WebSocket
    RESPONSES = "responses"  # Responses over HTTP SSE
    CHAT = "chat"  # Chat Completions over HTTP SSE


# the transport setting's values (plain strings): auto tries ws, then responses, then chat
TRANSPORT_CHOICES: tuple[str, ...] = ("auto", *(t.value for t in Transport))
