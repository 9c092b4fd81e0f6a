"""What a transport yields for one attempt; the client turns them into the events of
protocol.events (a retry, a rewind, the record). Plain frozen values (NamedTuples, as the
events are)."""

from __future__ import annotations

from enum import StrEnum
from typing import NamedTuple

from ..base.errors import ModelError
from .events import Usage
from .steer import Steered


class Opened(NamedTuple):
    """The server took the request (its answer's headers are in, or the WebSocket message
    went out on an open socket)."""

    url: str


class Deltas(NamedTuple):
    """The text deltas of the messages of one read, in order (one per server message)."""

    texts: list[str]


class ResponseId(NamedTuple):
    """The server named its response (Responses API: response.created)."""

    response_id: str | None


class Finished(NamedTuple):
    """The reply is complete: its id, its usage (None: the server sent none that counts) and
    `cut` when the server ended it early (the output limit, a content filter)."""

    response_id: str | None
    usage: Usage | None
    cut: ModelError | None = None


class ReopenReason(StrEnum):
    """Why a WebSocket turn is sent again on a new socket, before any of its reply came."""

    CLOSED = "closed"  # the server closed the socket
    LIMIT = "limit"  # websocket_connection_limit_reached
    CHAIN_LOST = "chain_lost"  # previous_response_not_found: sent again unchained


class Reopen(NamedTuple):
    reason: ReopenReason


class Steer(NamedTuple):
    """The server's answer to a correction sent to the running response."""

    answer: Steered


class Note(NamedTuple):
    """What the transport says of the request (a lost chain, sent again whole)."""

    text: str


# what a transport's attempt yields to the client
Item = Opened | Deltas | Finished | Steer | Note
