"""The record kept for every request to a model. Written by protocol, read by stats/bench."""

from __future__ import annotations

from typing import Protocol

from ..values import Value


class RequestRecord(Value):
    __slots__ = ("ts", "model", "transport", "status", "task", "base_host", "http_status",
                 "error_class", "input_tokens", "output_tokens", "usage_estimated", "ttft_ms",
                 "duration_ms", "tokens_per_s", "retries", "request_id", "response_id", "turn_id",
                 "extra")
    ts: float  # wall-clock start, seconds since the epoch
    model: str
    transport: str  # "ws" | "responses" | "chat"
    # "ok" | "cut" (the server ended the reply early, or without any output: not a whole
    # answer; error_class says why) | "error" | "cancelled"
    status: str
    task: str  # edit | smoke | bench | doctor | ...
    base_host: str  # host[:port] only, never a full URL with query or key
    http_status: int | None
    error_class: str | None  # error kind, e.g. "rate_limit"
    input_tokens: int | None
    output_tokens: int | None
    usage_estimated: bool
    ttft_ms: float | None
    duration_ms: float | None
    tokens_per_s: float | None
    retries: int
    request_id: str | None
    response_id: str | None
    turn_id: str | None  # set by the session for turns that applied edits
    extra: dict[str, object]

    def __init__(self, ts: float, model: str, transport: str, status: str, task: str = "edit",
                 base_host: str = "", http_status: int | None = None,
                 error_class: str | None = None, input_tokens: int | None = None,
                 output_tokens: int | None = None, usage_estimated: bool = False,
                 ttft_ms: float | None = None, duration_ms: float | None = None,
                 tokens_per_s: float | None = None, retries: int = 0,
                 request_id: str | None = None, response_id: str | None = None,
                 turn_id: str | None = None, extra: dict[str, object] | None = None) -> None:
        self.ts = ts
        self.model = model
        self.transport = transport
        self.status = status
        self.task = task
        self.base_host = base_host
        self.http_status = http_status
        self.error_class = error_class
        self.input_tokens = input_tokens
        self.output_tokens = output_tokens
        self.usage_estimated = usage_estimated
        self.ttft_ms = ttft_ms
        self.duration_ms = duration_ms
        self.tokens_per_s = tokens_per_s
        self.retries = retries
        self.request_id = request_id
        self.response_id = response_id
        self.turn_id = turn_id
        self.extra = {} if extra is None else extra

    def as_dict(self) -> dict[str, object]:
        """Every field, copied (nothing in it is shared with the record)."""
        import copy

        return {name: copy.deepcopy(getattr(self, name)) for name in self.__match_args__}


class Recorder(Protocol):
    """Anything that keeps request records (the SQLite store, a list in tests)."""

    def record(self, rec: RequestRecord) -> None: ...
