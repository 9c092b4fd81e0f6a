"""Chat Completions over SSE: POST {base}/v1/chat/completions with stream=true."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Any

from ..errors import ProtocolError
from . import errors_map
from .events import TurnRequest, Usage
from .http_common import messages_of, post_sse
from .metrics import estimate_tokens

if TYPE_CHECKING:
    import httpx

CUT_REASONS = ("length", "content_filter")  # finish reasons of a reply that was cut short


def chat_body(request: TurnRequest, model: str, max_tokens: int | None,
              temperature: float | None) -> dict[str, Any]:
    messages = [{"role": "system", "content": request.instructions}] if request.instructions else []
    body: dict[str, Any] = {"model": model, "messages": messages + messages_of(request),
                            "stream": True, "stream_options": {"include_usage": True}}
    if max_tokens is not None:
        body["max_tokens"] = max_tokens
    if temperature is not None:
        body["temperature"] = temperature
    return body


async def stream_chat(http: httpx.AsyncClient, url: str, body: dict[str, Any], *,
                      api_key: str | None, model: str, read_timeout_s: float
                      ) -> AsyncGenerator[tuple[str, Any], None]:
    """Yield ("delta", str), ("cut", IncompleteReply) when the output limit or a content filter
    ended the reply, ("usage", Usage), ("done", response_id). A stream that ends without a
    finish reason or [DONE] is a StreamDropped."""
    response_id = None
    usage = None
    cut = None
    chars = 0
    finished = False
    loads = json.loads
    async for data in post_sse(http, url, body, api_key=api_key, model=model,
                               read_timeout_s=read_timeout_s):
        if data is None:  # the server took the request: ("open", url) first
            yield "open", url
            continue
        if data == "[DONE]":
            finished = True
            break
        try:
            chunk = loads(data)
        except ValueError:
            raise ProtocolError(f"{url} sent a stream chunk that is not JSON: {data[:200]}",
                                url=url, body=data) from None
        if "error" in chunk and isinstance(chunk["error"], dict):
            raise errors_map.error_from_event(chunk["error"], url, model=model, api_key=api_key)
        response_id = response_id or chunk.get("id")
        for choice in chunk.get("choices") or ():
            text = (choice.get("delta") or {}).get("content")
            if text:
                chars += len(text)
                yield "delta", text
            reason = choice.get("finish_reason")
            if reason:
                if reason in CUT_REASONS:
                    cut = errors_map.incomplete(url, reason, body.get("max_tokens"))
                finished = True
        u = chunk.get("usage")
        if u:
            usage = Usage(int(u.get("prompt_tokens") or 0), int(u.get("completion_tokens") or 0))
    if not finished:
        raise errors_map.dropped(url, "the stream ended before the reply finished")
    if usage is None:
        sent = "".join(m["content"] for m in body["messages"])
        usage = Usage(estimate_tokens(sent), (chars + 3) // 4, estimated=True)
    if cut is not None:
        yield "cut", cut
    yield "usage", usage
    yield "done", response_id

