"""Doctor's streaming probe: a short streamed reply, timed delta by delta, read within the
wire's limits (a line or event up to MAX_MESSAGE_BYTES, the reply up to MAX_REPLY_BYTES, an
error's first MAX_ERROR_BODY_BYTES)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from ...base import errors as E
from ...protocol.chat import USAGE_GRACE_S
from ...protocol.http_common import error_body, raw_chunks
from ...protocol.limits import MAX_REPLY_BYTES, Inflater
from ...protocol.sse import iter_sse_batches
from .probe import HttpProbe
from .wire import api_url, parse_event, request_body

STREAM_PROMPT = "Count from 1 to 40, separated by spaces."


async def stream_stats(probe: HttpProbe, api: str) -> dict[str, Any]:
    """Stream a short reply; read at most `stream_tokens` deltas. Slow is not stalled:
    reading stops at the check timeout while deltas still arrive (the rate is measured);
    only no data at all for the check timeout is a stall."""
    cfg = probe.cfg
    messages = [{"role": "user", "content": STREAM_PROMPT}]
    path = "/v1/chat/completions" if api == "chat" else "/v1/responses"
    body = request_body(api, cfg.model or "", messages, cfg.stream_tokens, stream=True)
    url = api_url(probe.base, path)
    limit = cfg.check_timeout_s
    start = time.perf_counter()
    times: list[float] = []
    usage: dict[str, Any] | None = None
    reads = 0  # the network reads that carried deltas (a buffered stream needs few)
    ended = "end"  # end | tokens (read enough) | limit (slow: still arriving at the limit)
    async with probe.http.stream("POST", url, json=body, headers=probe.headers()) as resp:
        ctype = resp.headers.get("content-type", "")
        if resp.status_code != 200 or "text/event-stream" not in ctype:
            raw = await error_body(resp, url)
            if resp.status_code == 200 and "json" in ctype:
                raise E.ProtocolError("asked for a stream, got one JSON body: the server or "
                                      "a proxy ignores stream=true", url=url, body=raw)
            raise probe.status_error(resp.status_code, raw, url, resp.headers)
        inflater = Inflater(resp.headers.get("content-encoding", ""), url, MAX_REPLY_BYTES,
                            "a streamed reply")
        batches = aiter(iter_sse_batches(inflater.decode(raw_chunks(resp)), url))
        last = start  # when data last arrived
        finished = None  # when a chat reply's finish reason came
        done = False
        while not done:
            now = time.perf_counter()
            if times and now - start >= limit:
                ended = "limit"
                break
            wait = limit - (now - last)
            if finished is not None:  # only its usage is awaited (see USAGE_GRACE_S)
                wait = min(wait, finished + USAGE_GRACE_S - now)
            try:
                batch = await asyncio.wait_for(anext(batches), wait)
            except StopAsyncIteration:
                break
            except TimeoutError:
                if finished is not None:
                    break  # the reply ended; its stream was left open
                got = f"{len(times)} deltas arrived, then nothing" if times else "nothing"
                raise E.StreamTimeout(
                    f"the stream stalled: {got} for {limit:g} s",
                    hint=f"no data within doctor's --check-timeout ({limit:g} s): a stalled "
                         "server, or a proxy that buffers; a server that needs longer "
                         "before its first token: raise --check-timeout") from None
            last = time.perf_counter()
            before = len(times)
            for data in batch:  # the events one network read completed
                if not data or data.isspace():
                    continue  # an empty `data:` line (a proxy's keep-alive)
                event = parse_event(data, url)
                if event is None:
                    done = True
                    break
                if "error" in event and event.get("type") is None:
                    raise probe.event_error(event, url)
                if api == "chat":
                    choices = event.get("choices") or []
                    if choices and (choices[0].get("delta") or {}).get("content"):
                        times.append(last - start)
                    if event.get("usage"):
                        usage = event["usage"]
                    if finished is None and any(c.get("finish_reason") for c in choices):
                        finished = last
                    done = finished is not None and bool(usage)
                else:
                    kind = event.get("type")
                    if kind == "response.output_text.delta":
                        times.append(last - start)
                    elif kind in ("error", "response.failed"):
                        raise probe.event_error(event, url)
                    elif kind in ("response.completed", "response.incomplete"):
                        usage = (event.get("response") or {}).get("usage")
                        done = True
                if len(times) > cfg.stream_tokens:
                    ended = "tokens"  # the server ignores the token limit: enough was read
                    done = True
                if done:
                    break
            reads += len(times) > before
    return {"times": times, "reads": reads, "usage": usage,
            "total_s": time.perf_counter() - start, "ended": ended, "limit_s": limit}
