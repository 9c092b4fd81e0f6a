"""Responses API over SSE: POST {base}/v1/responses with stream=true, typed events."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

from ..errors import ModelError, ProtocolError
from . import errors_map
from .bodies import responses_body as responses_body  # its home is .bodies
from .events import Usage
from .fastjson import loads
from .sse import read_to_end

DELTA = "response.output_text.delta"  # the event type of the text as it streams


def handle_event(event: dict[str, Any], url: str, model: str, api_key: str | None
                 ) -> tuple[str, Any] | None:
    """One typed Responses event -> an internal item, None to skip; raises on errors."""
    kind = event.get("type")
    if kind == DELTA:
        return "delta", event.get("delta") or ""
    if kind == "response.created":
        return "id", (event.get("response") or {}).get("id")
    if kind in ("response.completed", "response.incomplete"):
        resp = event.get("response") or {}
        u = resp.get("usage")
        usage = Usage(int(u.get("input_tokens") or 0), int(u.get("output_tokens") or 0)) \
            if u else None
        cut = None  # a server may say so in the event type or only in the status
        if kind == "response.incomplete" or resp.get("status") == "incomplete":
            cut = _incomplete(resp, url)
        return "completed", (resp.get("id"), usage, cut)
    if kind == "error":
        err = event.get("error")
        if not isinstance(err, dict):
            err = event
        raise errors_map.error_from_event(err, url, status=event.get("status"), model=model,
                                          api_key=api_key)
    if kind is None and event.get("error"):  # vLLM, Ollama: an error object without a type
        raise errors_map.error_from_event(errors_map.error_object(event["error"]), url,
                                          model=model, api_key=api_key)
    if kind == "response.failed":
        resp = event.get("response") or {}
        err = resp.get("error") or {"message": kind, "type": "server_error"}
        raise errors_map.error_from_event(err, url, model=model, api_key=api_key)
    return None


def _incomplete(resp: dict[str, Any], url: str) -> ModelError:
    details = resp.get("incomplete_details")
    reason = details.get("reason") if isinstance(details, dict) else None
    return errors_map.incomplete(url, reason, resp.get("max_output_tokens"))


async def stream_responses(source: AsyncGenerator[list[str] | None, None], url: str, *,
                           api_key: str | None, model: str
                           ) -> AsyncGenerator[tuple[str, Any], None]:
    """Read the answer to a create body (bodies.sse_body) from `source` (http_common.post_sse):
    yield ("id", rid), ("deltas", [str, ...]), ("cut", IncompleteReply) after
    `response.incomplete` (the output limit, a content filter), ("usage", Usage|None), ("done",
    rid). A stream without `response.completed` / `response.incomplete` is a StreamDropped. A
    delta per server message; the deltas of one read come together, in order. After the
    completion the stream is read to its end (sse.read_to_end), so that its connection can
    serve the next request."""
    async for batch in source:
        if batch is None:  # the server took the request: ("open", url) first
            yield "open", url
            continue
        texts: list[str] = []  # the deltas of this read so far
        for data in batch:
            try:
                event = loads(data)
            except ValueError:
                if texts:
                    yield "deltas", texts
                raise ProtocolError(f"{url} sent an event that is not JSON: {data[:200]}",
                                    url=url, body=data) from None
            if event.get("type") == DELTA:  # the hot path: a delta per server message
                texts.append(event.get("delta") or "")
                continue
            if texts:  # the text before this event goes first
                yield "deltas", texts
                texts = []
            item = handle_event(event, url, model, api_key)
            if item is None:
                continue
            if item[0] == "completed":
                await read_to_end(source)
                rid, usage, cut = item[1]
                if cut is not None:
                    yield "cut", cut
                yield "usage", usage
                yield "done", rid
                return
            yield item
        if texts:
            yield "deltas", texts
    raise errors_map.dropped(url, "the stream ended before response.completed")

