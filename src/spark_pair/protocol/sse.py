"""A small, fast Server-Sent Events parser: each event's data payload (str), in batches."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator, AsyncIterator

from ..base.errors import ModelError
from .limits import MAX_MESSAGE_BYTES, too_large

# how long the stream of a complete reply may take to end (its end is on its way: the server
# sent it with the last event); read to its end, the HTTP connection serves the next request
END_WAIT_S = 0.02


async def iter_sse_batches(chunks: AsyncIterator[bytes], url: str = ""
                           ) -> AsyncIterator[list[str]]:
    """The `data:` payloads of the events each chunk completes, one list per chunk (none for
    a chunk that completes no event); multi-line data is joined with newlines. A line or an
    event over MAX_MESSAGE_BYTES is a TooLarge error (`url` says whose).

    Lines are split once per chunk (not per token); `event:`, `id:` and comments are skipped
    because every payload we read carries its own `type`. Two failures servers send outside
    `data:` are payloads too: an `error:` field (as `{"error": ...}`) and a bare JSON line (as
    is).
    """
    buf = b""  # the unfinished line
    held: list[bytes] = []  # its later pieces, joined once a line ends (never one per piece)
    held_size = 0
    data: list[bytes] = []
    size = 0  # the bytes of `data`
    async for chunk in chunks:
        if b"\n" not in chunk:
            held.append(chunk)
            held_size += len(chunk)
            if len(buf) + held_size > MAX_MESSAGE_BYTES:
                raise too_large(url, "an event line", MAX_MESSAGE_BYTES)
            continue
        if held:
            chunk = b"".join([buf, *held, chunk])
            held, held_size = [], 0
        elif buf:
            chunk = buf + chunk
        lines = chunk.split(b"\n")
        buf = lines.pop()
        if len(buf) > MAX_MESSAGE_BYTES:
            raise too_large(url, "an event line", MAX_MESSAGE_BYTES)
        out = []
        for line in lines:
            if line.endswith(b"\r"):
                line = line[:-1]
            if not line:
                if data:
                    out.append(b"\n".join(data).decode("utf-8", "replace"))
                    data = []
                    size = 0
            elif line.startswith(b"data:"):
                value = line[5:]
                data.append(value[1:] if value.startswith(b" ") else value)
                size += len(value)
                if size > MAX_MESSAGE_BYTES:
                    raise too_large(url, "an event", MAX_MESSAGE_BYTES)
            elif line.startswith(b"error:"):  # llama.cpp's failure field (builds of 2025)
                data.append(_error_payload(line[6:].strip()))
            elif line.startswith(b"{"):  # a bare JSON line (Ollama's failure mid-stream)
                if data:
                    out.append(b"\n".join(data).decode("utf-8", "replace"))
                    data = []
                    size = 0
                out.append(line.decode("utf-8", "replace"))
        if out:
            yield out
    if held:
        buf = b"".join([buf, *held])
    if buf.startswith(b"data:"):
        value = buf[5:].rstrip(b"\r")
        data.append(value[1:] if value.startswith(b" ") else value)
    if data:
        yield [b"\n".join(data).decode("utf-8", "replace")]


async def iter_sse_data(chunks: AsyncIterator[bytes]) -> AsyncIterator[str]:
    """`iter_sse_batches`, one payload at a time."""
    async for batch in iter_sse_batches(chunks):
        for data in batch:
            yield data


def _error_payload(value: bytes) -> bytes:
    """An `error:` field's value as the payload `{"error": value}` (a text value as a string)."""
    if not value.startswith(b"{"):
        value = json.dumps(value.decode("utf-8", "replace")).encode()
    return b'{"error":' + value + b"}"


async def read_to_end(source: AsyncGenerator[object, None], within_s: float = END_WAIT_S
                      ) -> None:
    """Read what is left of a stream whose reply is complete, for `within_s` at most (so that
    its connection can be kept); what comes is dropped, and so is a failure."""
    try:
        async with asyncio.timeout(within_s):
            async for _ in source:
                pass
    except (TimeoutError, ModelError):
        pass
