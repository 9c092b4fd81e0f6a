"""Chat Completions over SSE: POST {base}/v1/chat/completions with stream=true."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import Any

from . import errors_map
from .bodies import chat_body as chat_body  # its home is .bodies
from .events import Usage, usage_of
from .fastjson import loads
from .items import Deltas, Finished, Item, Opened
from .metrics import estimate_tokens
from .sse import read_to_end

# finish reasons of a reply that was cut short: the output limit (a gateway may pass on
# "max_tokens"), a content filter, a request the server aborted (vLLM) or failed
CUT_REASONS = ("length", "max_tokens", "content_filter", "abort", "error")
# A reply is complete at its finish reason. A usage chunk that was asked for (stream_options)
# may come after it; some servers send none and never end the stream (no [DONE], the
# connection kept open), so it is awaited this long after the finish, then counted here.
USAGE_GRACE_S = 0.25


async def stream_chat(source: AsyncGenerator[list[str] | None, None], url: str,
                      body: dict[str, Any], *, api_key: str | None, model: str
                      ) -> AsyncGenerator[Item, None]:
    """Read the answer to `body` from `source` (http_common.post_sse): yield Opened, Deltas,
    then Finished (its `cut` set when the output limit or a content filter ended the reply).
    The reply ends at its finish reason (with the usage, or USAGE_GRACE_S later without it);
    a stream that ends before it, [DONE] included, is a StreamDropped (llama.cpp's server ends
    a reply it gave up with [DONE] alone). A delta per server message (`--json --deltas` shows
    each); the deltas of one read come together, in order. After [DONE] the stream is read to
    its end (sse.read_to_end), so that its connection can serve the next request."""
    wants_usage = bool((body.get("stream_options") or {}).get("include_usage"))
    response_id = None
    usage = None
    counted = False  # a usage came (a broken one counts as none: the reply is counted here)
    cut = None
    chars = pieces = 0  # the text's length and its pieces (for a count without usage)
    finished = ended = False
    grace_end = 0.0  # loop time: the end of the wait for the usage after the finish
    async with aclosing(source):
        while True:
            if finished and (counted or not wants_usage):
                break
            try:
                if finished:
                    async with asyncio.timeout_at(grace_end):
                        batch = await anext(source)
                else:
                    batch = await anext(source)
            except StopAsyncIteration:
                break
            except TimeoutError:
                if not finished:
                    raise
                break  # no usage came: counted here
            if batch is None:  # the server took the request: Opened first
                yield Opened(url)
                continue
            texts: list[str] = []  # the deltas of this read so far
            ended = False
            for data in batch:
                if data == "[DONE]":  # the stream's end; the reply's is its finish reason
                    ended = True
                    break
                try:
                    chunk = loads(data)
                    err = chunk.get("error")
                except ValueError:
                    bare = data.strip()
                    if not bare:
                        continue  # an empty `data:` line (a proxy's keep-alive)
                    if bare == "[DONE]":  # padded with spaces
                        ended = True
                        break
                    err = chunk = None
                except AttributeError:  # JSON, but not an object
                    err = chunk = None
                if chunk is None or err or chunk.get("object") == "error":
                    if texts:
                        yield Deltas(texts)
                    if chunk is None:
                        raise errors_map.odd_event(url, data, "a stream chunk")
                    # older vLLM sends the error object itself as the chunk
                    raise errors_map.error_from_event(errors_map.error_object(err or chunk), url,
                                                      model=model, api_key=api_key)
                if response_id is None and type(chunk.get("id")) is str:
                    response_id = chunk["id"]
                try:
                    for choice in chunk.get("choices") or ():
                        text = (choice.get("delta") or {}).get("content")
                        if text:
                            if type(text) is not str:
                                raise TypeError
                            chars += len(text)
                            pieces += 1
                            texts.append(text)
                        reason = choice.get("finish_reason")
                        if reason:
                            if reason in CUT_REASONS:
                                cut = errors_map.incomplete(url, reason, body.get("max_tokens"))
                            if not finished:
                                finished = True
                                grace_end = asyncio.get_running_loop().time() + USAGE_GRACE_S
                except (AttributeError, TypeError):  # a choice or a delta of another shape
                    if texts:
                        yield Deltas(texts)
                    raise errors_map.odd_event(url, data, "a stream chunk") from None
                u = chunk.get("usage")
                if u:
                    counted = True
                    usage = usage_of(u, "prompt_tokens", "completion_tokens")
            if texts:
                yield Deltas(texts)
            if ended:
                await read_to_end(source)
                break
    if not finished:
        why = ("the stream ended ([DONE]) with no finish reason: the server stopped the reply "
               "early" if ended else "the stream ended before the reply finished")
        raise errors_map.dropped(url, why)
    if usage is None:
        sent = "".join(m["content"] for m in body["messages"])
        # a server sends a token per piece (llama.cpp, vLLM, Ollama) or a few: the pieces
        # count them, or the length does (about 4 characters a token) if it is more
        usage = Usage(estimate_tokens(sent), max(pieces, (chars + 3) // 4), estimated=True)
    yield Finished(response_id, usage, cut)

