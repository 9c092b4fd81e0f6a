"""The one event stream every transport yields. Plain frozen values; no UI types."""

from __future__ import annotations

from ..errors import IncompleteReply, ModelError
from ..values import Frozen, set_field
from .request import Message as Message  # re-exported: the request's home is .request
from .request import Transport as Transport
from .request import TurnRequest as TurnRequest


class Started(Frozen):
    __slots__ = ("request_id", "transport", "model", "url")
    request_id: str
    transport: Transport
    model: str
    url: str

    def __init__(self, request_id: str, transport: Transport, model: str, url: str) -> None:
        set_field(self, "request_id", request_id)
        set_field(self, "transport", transport)
        set_field(self, "model", model)
        set_field(self, "url", url)


class TextDelta(Frozen):
    __slots__ = ("text",)
    text: str

    def __init__(self, text: str) -> None:
        set_field(self, "text", text)


class FirstToken(Frozen):
    """An attempt's first text arrived, `ttft_s` after its request went out: the TTFT its
    reply's Metrics will carry if this attempt answers (so a live meter shows that one)."""

    __slots__ = ("ttft_s", "attempt")
    ttft_s: float
    attempt: int

    def __init__(self, ttft_s: float, attempt: int = 1) -> None:
        set_field(self, "ttft_s", ttft_s)
        set_field(self, "attempt", attempt)


class Usage(Frozen):
    __slots__ = ("input_tokens", "output_tokens", "estimated")
    input_tokens: int
    output_tokens: int
    estimated: bool  # True when the server sent no usage and we counted ourselves

    def __init__(self, input_tokens: int, output_tokens: int, estimated: bool = False) -> None:
        set_field(self, "input_tokens", input_tokens)
        set_field(self, "output_tokens", output_tokens)
        set_field(self, "estimated", estimated)


class Metrics(Frozen):
    """Timing of one response, computed once by protocol.metrics from the events."""

    __slots__ = ("ttft_s", "duration_s", "output_tokens", "tokens_per_s", "partial", "attempt",
                 "connect_s")
    ttft_s: float | None  # of the attempt that was timed, from when its request went out
    duration_s: float  # the whole request's, every attempt and the waits between included
    output_tokens: int
    tokens_per_s: float | None  # the server's pace on the attempt that was timed
    partial: bool  # stopped before its end (timeout, Ctrl-C, cancel): what arrived
    attempt: int  # the attempt timed (1, 2, ...): the one that answered, or was stopped
    connect_s: float | None  # that attempt's set-up before its request went out (connecting,
    # TLS, a WebSocket upgrade; ~0 on an open connection); None when not known

    def __init__(self, ttft_s: float | None, duration_s: float, output_tokens: int,
                 tokens_per_s: float | None, partial: bool = False, attempt: int = 1,
                 connect_s: float | None = None) -> None:
        set_field(self, "ttft_s", ttft_s)
        set_field(self, "duration_s", duration_s)
        set_field(self, "output_tokens", output_tokens)
        set_field(self, "tokens_per_s", tokens_per_s)
        set_field(self, "partial", partial)
        set_field(self, "attempt", attempt)
        set_field(self, "connect_s", connect_s)


class Completed(Frozen):
    """The response ended. `cut` is set when the server ended it early (the output limit or a
    content filter): the text is not the whole reply, so an edit turn must not apply it."""

    __slots__ = ("response_id", "text", "usage", "metrics", "retries", "cut")
    response_id: str | None
    text: str
    usage: Usage | None
    metrics: Metrics
    retries: int
    cut: ModelError | None

    def __init__(self, response_id: str | None, text: str, usage: Usage | None,
                 metrics: Metrics, retries: int = 0, cut: ModelError | None = None) -> None:
        set_field(self, "response_id", response_id)
        set_field(self, "text", text)
        set_field(self, "usage", usage)
        set_field(self, "metrics", metrics)
        set_field(self, "retries", retries)
        set_field(self, "cut", cut)

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


class Retrying(Frozen):
    __slots__ = ("attempt", "delay_s", "reason", "transport")
    attempt: int
    delay_s: float
    reason: str  # error kind, e.g. "rate_limit", "dropped"
    transport: Transport | None  # the transport of the attempt that failed (None: not known)

    def __init__(self, attempt: int, delay_s: float, reason: str,
                 transport: Transport | None = None) -> None:
        set_field(self, "attempt", attempt)
        set_field(self, "delay_s", delay_s)
        set_field(self, "reason", reason)
        set_field(self, "transport", transport)


class Rewound(Frozen):
    """A retried response differs from the text already yielded: keep only the first `keep`
    characters (consumers drop what came after and re-parse); new deltas follow."""

    __slots__ = ("keep", "reason")
    keep: int
    reason: str

    def __init__(self, keep: int, reason: str) -> None:
        set_field(self, "keep", keep)
        set_field(self, "reason", reason)


class TransportChanged(Frozen):
    __slots__ = ("old", "new", "reason")
    old: Transport
    new: Transport
    reason: str

    def __init__(self, old: Transport, new: Transport, reason: str) -> None:
        set_field(self, "old", old)
        set_field(self, "new", new)
        set_field(self, "reason", reason)


class ModelChanged(Frozen):
    """The configured model was not found; moved to the next one in the fallback list."""

    __slots__ = ("old", "new", "reason")
    old: str
    new: str
    reason: str

    def __init__(self, old: str, new: str, reason: str) -> None:
        set_field(self, "old", old)
        set_field(self, "new", new)
        set_field(self, "reason", reason)


class Failed(Frozen):
    __slots__ = ("error", "retries", "transport")
    error: ModelError
    retries: int
    transport: Transport | None  # the transport of the last attempt (None: not known)

    def __init__(self, error: ModelError, retries: int = 0,
                 transport: Transport | None = None) -> None:
        set_field(self, "error", error)
        set_field(self, "retries", retries)
        set_field(self, "transport", transport)


Event = (Started | TextDelta | FirstToken | Usage | Completed | Retrying | Rewound
         | TransportChanged | ModelChanged | Failed)
