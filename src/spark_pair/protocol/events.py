"""The one event stream every transport yields. Plain frozen values; no UI types.

The events are NamedTuples, not frozen dataclasses: as immutable, and a class costs a fifth of
one to define (a cold `run` defines them before its request goes out).
"""

from __future__ import annotations

from typing import NamedTuple

from ..base.errors import IncompleteReply, ModelError
from ..base.transport import Transport as Transport
from .request import Message as Message  # re-exported: the request's home is .request
from .request import TurnRequest as TurnRequest
from .steer import Steered as Steered  # a correction's answer (steering a running response)


class Started(NamedTuple):
    request_id: str
    transport: Transport
    model: str
    url: str


class TextDelta(NamedTuple):
    text: str


class FirstToken(NamedTuple):
    """An attempt's first text arrived, `ttft_s` after its request went out: the TTFT its
    reply's Metrics will carry if this attempt answers (so a live meter shows that one)."""

    ttft_s: float
    attempt: int = 1


class Usage(NamedTuple):
    input_tokens: int
    output_tokens: int
    estimated: bool = False  # True when the server sent no usage and we counted ourselves


def count(value: object) -> int | None:
    """A token count as a server sent it: a whole number from 0 up (a JSON number, or ASCII
    digits as text); None for anything else (NaN, infinity, a fraction, a negative number,
    other digits, too many of them)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, float):
        return int(value) if value.is_integer() and value >= 0 else None
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 18:
        return int(value)
    return None


def usage_of(u: object, input_name: str, output_name: str) -> Usage | None:
    """A server's usage object as Usage; None when it has none, or numbers that are none (the
    reply is then counted here: a broken count never costs a whole reply)."""
    if not isinstance(u, dict) or not u:
        return None
    tokens_in, tokens_out = count(u.get(input_name) or 0), count(u.get(output_name) or 0)
    if tokens_in is None or tokens_out is None:
        return None
    return Usage(tokens_in, tokens_out)


class Metrics(NamedTuple):
    """Timing of one response, computed once by protocol.metrics from the events."""

    ttft_s: float | None  # of the attempt that was timed, from when its request went out
    duration_s: float  # the whole request's, every attempt and the waits between included
    output_tokens: int
    tokens_per_s: float | None  # the server's pace on the attempt that was timed
    partial: bool = False  # stopped before its end (timeout, Ctrl-C, cancel): what arrived
    attempt: int = 1  # the attempt timed (1, 2, ...): the one that answered, or was stopped
    # that attempt's set-up before its request went out (connecting, TLS, a WebSocket
    # upgrade; ~0 on an open connection); None when not known
    connect_s: float | None = None


class Completed(NamedTuple):
    """The response ended. `cut` is set when the server ended it early (the output limit or a
    content filter): the text is not the whole reply, so an edit turn must not apply it."""

    response_id: str | None
    text: str
    usage: Usage | None
    metrics: Metrics
    retries: int = 0
    cut: ModelError | None = None
    notes: tuple[str, ...] = ()  # worth a person's knowing (the history was sent again)

    def shortfall(self) -> ModelError | None:
        """Why this is not a whole reply: the server's cut, or no output at all (a server that
        ended the request without an answer); None for a whole reply."""
        if self.cut is not None:
            return self.cut
        if not self.text:
            return IncompleteReply("the server ended the reply without any output",
                                   hint="the server gave up on the request (overloaded, "
                                        "restarted, or its context window is full): try again, "
                                        "or send less context")
        return None


class Retrying(NamedTuple):
    attempt: int
    delay_s: float
    reason: str  # error kind, e.g. "rate_limit", "dropped"
    transport: Transport | None = None  # the transport of the attempt that failed (None: not known)


class Rewound(NamedTuple):
    """A retried response differs from the text already yielded: keep only the first `keep`
    characters (consumers drop what came after and re-parse); new deltas follow."""

    keep: int
    reason: str


class TransportChanged(NamedTuple):
    old: Transport
    new: Transport
    reason: str


class ModelChanged(NamedTuple):
    """The configured model was not found; moved to the next one in the fallback list."""

    old: str
    new: str
    reason: str


class Failed(NamedTuple):
    error: ModelError
    retries: int = 0
    transport: Transport | None = None  # the transport of the last attempt (None: not known)


Event = (Started | TextDelta | FirstToken | Usage | Completed | Retrying | Rewound
         | TransportChanged | ModelChanged | Failed | Steered)
