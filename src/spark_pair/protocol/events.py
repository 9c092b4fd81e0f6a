"""The one event stream every transport yields. Plain dataclasses; no UI types."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ModelError
from .request import Message as Message  # re-exported: the request's home is .request
from .request import Transport as Transport
from .request import TurnRequest as TurnRequest


@dataclass(frozen=True, slots=True)
class Started:
    request_id: str
    transport: Transport
    model: str
    url: str


@dataclass(frozen=True, slots=True)
class TextDelta:
    text: str


@dataclass(frozen=True, slots=True)
class Usage:
    input_tokens: int
    output_tokens: int
    estimated: bool = False  # True when the server sent no usage and we counted ourselves


@dataclass(frozen=True, slots=True)
class Metrics:
    """Timing of one response, computed once by protocol.metrics from the events."""

    ttft_s: float | None
    duration_s: float
    output_tokens: int
    tokens_per_s: float | None  # steady rate: tokens after the first / time after the first
    partial: bool = False  # stopped before its end (timeout, Ctrl-C, cancel): what arrived


@dataclass(frozen=True, slots=True)
class Completed:
    """The response ended. `cut` is set when the server ended it early (the output limit or a
    content filter): the text is not the whole reply, so an edit turn must not apply it."""

    response_id: str | None
    text: str
    usage: Usage | None
    metrics: Metrics
    retries: int = 0
    cut: ModelError | None = None


@dataclass(frozen=True, slots=True)
class Retrying:
    attempt: int
    delay_s: float
    reason: str  # error kind, e.g. "rate_limit", "dropped"


@dataclass(frozen=True, slots=True)
class Rewound:
    """A retried response differs from the text already yielded: keep only the first `keep`
    characters (consumers drop what came after and re-parse); new deltas follow."""

    keep: int
    reason: str


@dataclass(frozen=True, slots=True)
class TransportChanged:
    old: Transport
    new: Transport
    reason: str


@dataclass(frozen=True, slots=True)
class ModelChanged:
    """The configured model was not found; moved to the next one in the fallback list."""

    old: str
    new: str
    reason: str


@dataclass(frozen=True, slots=True)
class Failed:
    error: ModelError
    retries: int = 0


Event = (Started | TextDelta | Usage | Completed | Retrying | Rewound | TransportChanged
         | ModelChanged | Failed)
