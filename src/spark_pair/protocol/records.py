"""The record kept for every request to a model: the client hands one per request to a
Recorder (the request log in store/, a list in tests); stats and bench read them."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol


class RequestStatus(StrEnum):
    """How a request ended (kept as its text in the request log and JSON)."""

    OK = "ok"
    CUT = "cut"  # the server ended the reply early, or without any output: not a whole
    # answer (error_class says why)
    ERROR = "error"
    CANCELLED = "cancelled"


@dataclass(slots=True)
class RequestRecord:
    ts: float  # wall-clock start, seconds since the epoch
    model: str
    transport: str  # "ws" | "responses" | "chat"
    status: RequestStatus
    task: str = "edit"  # edit | smoke | bench | doctor | ...
    base_host: str = ""  # host[:port] only, never a full URL with query or key
    http_status: int | None = None
    error_class: str | None = None  # error kind, e.g. "rate_limit"
    input_tokens: int | None = None
    output_tokens: int | None = None
    usage_estimated: bool = False
    ttft_ms: float | None = None
    duration_ms: float | None = None
    tokens_per_s: float | None = None
    retries: int = 0
    request_id: str | None = None
    response_id: str | None = None
    turn_id: str | None = None  # set by the session for turns that applied edits
    extra: dict[str, object] = field(default_factory=dict)


class Recorder(Protocol):
    """Anything that keeps request records (the SQLite store, a list in tests)."""

    def record(self, rec: RequestRecord) -> None: ...
