"""Responses API over SSE: POST {base}/v1/responses with stream=true, typed events."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

from ..base.errors import ModelError
from . import errors_map
from .bodies import responses_body as responses_body  # its home is .bodies
from .events import usage_of
from .fastjson import loads
from .items import Deltas, Finished, Item, Opened, ResponseId
from .sse import read_to_end

DELTA = "response.output_text.delta"  # the event type of the text as it streams


def handle_event(event: dict[str, Any], url: str, model: str, api_key: str | None
                 ) -> Deltas | ResponseId | Finished | None:
    """One typed Responses event -> an item, None to skip; raises on errors."""
    kind = event.get("type")
    if kind == DELTA:
        return Deltas([delta_text(event.get("delta"), url)])
    if kind == "response.created":
        return ResponseId(_field(_object(event.get("response"), url), "id", url))
    if kind in ("response.completed", "response.incomplete"):
        resp = _object(event.get("response"), url)
        usage = usage_of(resp.get("usage"), "input_tokens", "output_tokens")
        cut = None  # a server may say so in the event type or only in the status
        if kind == "response.incomplete" or resp.get("status") == "incomplete":
            cut = _incomplete(resp, url)
        return Finished(_field(resp, "id", url), usage, cut)
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
        err = _object(event.get("response"), url).get("error")
        err = errors_map.error_object(err) if err else {"message": kind, "type": "server_error"}
        raise errors_map.error_from_event(err, url, model=model, api_key=api_key)
    return None


def delta_text(delta: object, url: str) -> str:
    """A delta's text (none: ""); a delta that is not text is a ProtocolError."""
    if type(delta) is str:
        return delta
    if delta is None:
        return ""
    raise errors_map.odd_event(url, repr(delta)[:200], "a text delta")


def _object(value: object, url: str) -> dict[str, Any]:
    """An event's object field (none: {}); anything else is a ProtocolError."""
    if isinstance(value, dict):
        return value
    if value is None:
        return {}
    raise errors_map.odd_event(url, repr(value)[:200], "an event field")


def _field(obj: dict[str, Any], name: str, url: str) -> str | None:
    """A text field of an event's object (an id): text or None."""
    value = obj.get(name)
    if value is None or isinstance(value, str):
        return value
    raise errors_map.odd_event(url, repr(value)[:200], f"a {name!r}")


def _incomplete(resp: dict[str, Any], url: str) -> ModelError:
    details = resp.get("incomplete_details")
    reason = details.get("reason") if isinstance(details, dict) else None
    return errors_map.incomplete(url, reason, resp.get("max_output_tokens"))


async def stream_responses(source: AsyncGenerator[list[str] | None, None], url: str, *,
                           api_key: str | None, model: str
                           ) -> AsyncGenerator[Item, None]:
    """Read the answer to a create body (bodies.sse_body) from `source` (http_common.post_sse):
    yield Opened, Deltas, then Finished (its `cut` set after `response.incomplete`: the output
    limit, a content filter). A stream without `response.completed` / `response.incomplete`
    is a StreamDropped. A delta per server message; the deltas of one read come together, in
    order. After the completion the stream is read to its end (sse.read_to_end), so that its
    connection can serve the next request."""
    async for batch in source:
        if batch is None:  # the server took the request: Opened first
            yield Opened(url)
            continue
        texts: list[str] = []  # the deltas of this read so far
        for data in batch:
            try:
                event = loads(data)
                kind = event.get("type")
            except (ValueError, AttributeError):  # not JSON, or not an object
                if texts:
                    yield Deltas(texts)
                raise errors_map.odd_event(url, data) from None
            if kind == DELTA:  # the hot path: a delta per server message
                delta = event.get("delta")
                if type(delta) is not str:
                    if texts:  # the text before it goes first
                        yield Deltas(texts)
                        texts = []
                    delta = delta_text(delta, url)
                texts.append(delta)
                continue
            if texts:  # the text before this event goes first
                yield Deltas(texts)
                texts = []
            item = handle_event(event, url, model, api_key)
            if type(item) is Finished:
                await read_to_end(source)
                yield item
                return
        if texts:
            yield Deltas(texts)
    raise errors_map.dropped(url, "the stream ended before response.completed")

