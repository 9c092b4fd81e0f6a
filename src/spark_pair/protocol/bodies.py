"""The request bodies of the three transports (one home)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from ..base.errors import scrub_keys
from .request import Message, TurnRequest

if TYPE_CHECKING:
    from typing import Any


def messages_of(request: TurnRequest) -> list[dict[str, str]]:
    return _items([*request.history, *request.new_input])


def _items(messages: list[Message]) -> list[dict[str, str]]:
    """The messages as sent: a known API key in any of them (a file, a check's output, an
    instruction) goes as *** (base.errors.scrub_keys)."""
    return [{"role": m.role, "content": scrub_keys(m.content)} for m in messages]


def json_bytes(body: dict[str, Any]) -> bytes:
    """The request body as UTF-8 JSON. A lone surrogate (an earlier broken reply kept in the
    history) cannot be UTF-8: the body is then sent with \\u escapes instead of failing."""
    text = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(body, separators=(",", ":"), allow_nan=False).encode("ascii")


def chat_body(request: TurnRequest, model: str, max_tokens: int | None,
              temperature: float | None) -> dict[str, Any]:
    messages = ([{"role": "system", "content": scrub_keys(request.instructions)}]
                if request.instructions else [])
    body: dict[str, Any] = {"model": model, "messages": messages + messages_of(request),
                            "stream": True, "stream_options": {"include_usage": True}}
    if max_tokens is not None:
        body["max_tokens"] = max_tokens
    if temperature is not None:
        body["temperature"] = temperature
    return body


def responses_body(request: TurnRequest, model: str, max_tokens: int | None,
                   temperature: float | None, *, full: bool = True) -> dict[str, Any]:
    """The create body (without `stream`). full=False sends only the new input (for
    previous_response_id)."""
    items = messages_of(request) if full else _items(list(request.new_input))
    body: dict[str, Any] = {"model": model, "input": items}
    if request.instructions:
        body["instructions"] = scrub_keys(request.instructions)
    if max_tokens is not None:
        body["max_output_tokens"] = max_tokens
    if temperature is not None:
        body["temperature"] = temperature
    return body


def sse_body(body: dict[str, Any]) -> dict[str, Any]:
    """A Responses create body as POSTed for server-sent events."""
    return {**body, "stream": True}


def ws_create(body: dict[str, Any]) -> str:
    """A Responses create body as the WebSocket mode's `response.create` message."""
    return json.dumps({"type": "response.create", **body})
