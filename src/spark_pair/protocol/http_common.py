"""One streaming POST over httpx: status/body checks and error mapping, yielding SSE data."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

from ..base.errors import ModelError, ProtocolError
from . import errors_map
from .batches import Pacer, Pump
from .bodies import json_bytes
from .bodies import messages_of as messages_of  # its home is .bodies
from .limits import MAX_ERROR_BODY_BYTES, MAX_REPLY_BYTES, Inflater, read_body
from .sse import iter_sse_batches

if TYPE_CHECKING:  # httpx loads with the first HTTP client (never on the WS path)
    import httpx


def sent_trace(call: Callable[[], None]) -> dict[str, Any]:
    """httpx request extensions that call `call()` as the request starts going out on an open
    connection (after connecting and TLS; before its first byte is written, so the server's
    clock never starts before ours)."""

    async def trace(name: str, info: dict[str, Any]) -> None:
        if name.endswith("send_request_headers.started"):  # http11. or http2.
            call()

    return {"trace": trace}


def raw_chunks(resp: httpx.Response) -> AsyncIterator[bytes]:
    """A response's body as it comes, not decoded (protocol.limits decodes it); a body that
    was read already (a test's transport hands one over read) as its bytes."""
    if resp.is_stream_consumed:
        return _once(resp.content)
    return resp.aiter_raw()


async def _once(data: bytes) -> AsyncIterator[bytes]:
    yield data


async def error_body(resp: httpx.Response, url: str, limit: int = MAX_ERROR_BODY_BYTES) -> str:
    """The first `limit` bytes of an answer's body, decoded, as text (for its message; the
    rest is not read)."""
    try:
        inflater = Inflater(resp.headers.get("content-encoding", ""), url, limit, "an answer",
                            cut=True)
    except ProtocolError:  # an encoding it cannot read: the bytes as they came
        inflater = Inflater("", url, limit, "an answer", cut=True)
    try:
        raw = await read_body(raw_chunks(resp), inflater)
    except ProtocolError:  # broken compression: say what the status says
        raw = b""
    return raw.decode("utf-8", "replace")


async def post_sse(http: httpx.AsyncClient, url: str, body: dict[str, Any], *,
                   api_key: str | None, model: str, read_timeout_s: float,
                   on_sent: Callable[[], None] | None = None
                   ) -> AsyncGenerator[list[str] | None, None]:
    """POST `body` as JSON and yield None once the server has taken the request (its answer's
    headers are in), then the SSE data payloads of each read (a batch: what arrived per
    wake-up, protocol.batches); raise a ModelError on failure. `on_sent()` is called as the
    request starts going out on an open connection.

    A `read_timeout_s` below the client's own read timeout caps this request's (a retry near
    the retry deadline)."""
    import httpx

    headers = {"Accept": "text/event-stream", "Content-Type": "application/json",
               "Accept-Encoding": "identity"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    timeout = http.timeout
    capped = timeout.read is not None and read_timeout_s < timeout.read
    if capped:
        timeout = httpx.Timeout(connect=timeout.connect, read=read_timeout_s,
                                write=timeout.write, pool=timeout.pool)
    try:
        async with http.stream("POST", url, content=json_bytes(body), headers=headers,
                               timeout=timeout,
                               extensions=None if on_sent is None else sent_trace(on_sent)
                               ) as resp:
            ctype = resp.headers.get("content-type", "")
            if resp.status_code != 200:
                raw = await error_body(resp, url)
                raise errors_map.error_from_response(resp.status_code, raw, url, api_key=api_key,
                                                     headers=resp.headers, model=model,
                                                     content_type=ctype)
            if "text/event-stream" not in ctype:
                raise errors_map.not_openai_body(url, await error_body(resp, url), ctype)
            inflater = Inflater(resp.headers.get("content-encoding", ""), url, MAX_REPLY_BYTES,
                                "a streamed reply")
            yield None
            pacer = Pacer()
            pump = Pump(raw_chunks(resp), pacer)
            try:
                async for batch in iter_sse_batches(inflater.decode(pump.chunks()), url):
                    pacer.counted(len(batch))
                    yield batch
            finally:
                await pump.close()  # before the answer closes (a reader that stops early)
    except ModelError:
        raise
    except httpx.TimeoutException as exc:
        if isinstance(exc, (httpx.ConnectTimeout, httpx.PoolTimeout)):
            raise errors_map.connect_timeout(url, timeout.connect or 0) from None
        raise errors_map.timeout(url, read_timeout_s, capped) from None
    except httpx.ConnectError as exc:
        raise errors_map.connection_failed(exc, url) from None
    except httpx.RemoteProtocolError as exc:
        raise errors_map.http_broken(exc, url) from None
    except (httpx.ReadError, httpx.WriteError) as exc:
        said = f": {exc}" if str(exc) else ""
        raise errors_map.dropped(url, f"the connection closed mid-response{said}") from None
    except httpx.HTTPError as exc:
        raise errors_map.connection_failed(exc, url) from None
