"""Server profiles: what real OpenAI-compatible servers offer, so tests meet them without them.

A profile says which endpoints exist, what a missing one answers (each server's own 404 body),
whether a chat stream sends the usage chunk it was asked for, how a chat stream reports a
failure after it began (the fault `stream_error`), and the server's usual pacing.
"""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass


class Endpoint(enum.Enum):
    MODELS = "models"  # GET /v1/models
    CHAT = "chat"  # POST /v1/chat/completions
    RESPONSES = "responses"  # POST /v1/responses
    WS = "ws"  # GET /v1/responses, upgraded to a WebSocket


@dataclass(frozen=True)
class NotFoundReply:
    """What the server answers for a path it does not serve."""

    status: int
    content_type: str
    body: str


class StreamError(enum.Enum):
    """How a chat stream that has begun reports a failure."""

    DATA = "data"  # `data: {"error": {...}}` then [DONE] (OpenAI style; vLLM: code = status)
    FIELD = "field"  # an `error: {...}` SSE field, then [DONE] (llama.cpp builds of 2025)
    BARE = "bare"  # a bare JSON line `{"error": {...}}` without `data:`, then the end (Ollama)


@dataclass(frozen=True)
class Profile:
    name: str
    endpoints: frozenset[Endpoint]
    not_found: NotFoundReply
    usage_chunk: bool  # a chat stream asked for usage (stream_options) ends with it
    tps: float  # usual pacing (the flags --tps and --ttft-ms override it)
    ttft_ms: float
    about: str
    stream_error: StreamError = StreamError.DATA


_ALL = frozenset(Endpoint)
_FASTAPI_404 = NotFoundReply(404, "application/json", '{"detail":"Not Found"}')  # byte for byte

PROFILES: dict[str, Profile] = {p.name: p for p in (
    Profile("spark", _ALL, NotFoundReply(404, "text/plain", "404: Not Found"), True, 1200.0, 150.0,
            "a Spark-class endpoint: every mode, usage, 1,200 tok/s"),
    Profile("llama.cpp", frozenset({Endpoint.MODELS, Endpoint.CHAT}), _FASTAPI_404, False,
            20.0, 300.0, "llama.cpp's server: chat completions only, no usage chunk, 20 tok/s",
            StreamError.FIELD),
    Profile("vllm", frozenset({Endpoint.MODELS, Endpoint.CHAT, Endpoint.RESPONSES}),
            _FASTAPI_404, True, 90.0, 120.0,
            "vLLM: chat completions and Responses over HTTP, no WebSocket, 90 tok/s"),
    Profile("ollama", frozenset({Endpoint.MODELS, Endpoint.CHAT}),
            NotFoundReply(404, "text/plain", "404 page not found"), True, 40.0, 250.0,
            "Ollama: chat completions only, a plain-text 404, 40 tok/s", StreamError.BARE),
    Profile("gateway", frozenset({Endpoint.MODELS, Endpoint.CHAT, Endpoint.RESPONSES}),
            NotFoundReply(404, "application/json", json.dumps({"error": {
                "message": "Unknown request URL. Please check the URL for typos.",
                "type": "invalid_request_error", "param": None, "code": "unknown_url"}})),
            True, 600.0, 400.0,
            "an API gateway in front of a fast model: HTTP modes only, OpenAI-style 404"),
)}
DEFAULT = "spark"
