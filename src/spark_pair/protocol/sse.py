"""A small, fast Server-Sent Events parser: each event's data payload (str), in batches."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator, AsyncIterator

from ..errors import ModelError

# how long the stream of a complete reply may take to end (its end is on its way: the server
# sent it with the last event); read to its end, the HTTP connection serves the next request
END_WAIT_S = 0.02


async def iter_sse_batches(chunks: AsyncIterator[bytes]) -> AsyncIterator[list[str]]:
    """The `data:` payloads of the events each network chunk completes, one list per chunk
    (none for a chunk that completes no event); multi-line data is joined with newlines.

    Lines are split once per network chunk (not per token); `event:`, `id:` and comments are
    skipped because every payload we read carries its own `type`. Two failures servers send
    outside `data:` are payloads too: an `error:` field (as `{"error": ...}`) and a bare JSON
    line (as is).
    """
    buf = b""
    data: list[bytes] = []
    async for chunk in chunks:
        buf = buf + chunk if buf else chunk
        if b"\n" not in buf:
            continue
        lines = buf.split(b"\n")
        buf = lines.pop()
        out = []
        for line in lines:
            if line.endswith(b"\r"):
                line = line[:-1]
            if not line:
                if data:
                    out.append(b"\n".join(data).decode("utf-8", "replace"))
                    data = []
            elif line.startswith(b"data:"):
                value = line[5:]
                data.append(value[1:] if value.startswith(b" ") else value)
            elif line.startswith(b"error:"):  # llama.cpp's failure field (builds of 2025)
                data.append(_error_payload(line[6:].strip()))
            elif line.startswith(b"{"):  # a bare JSON line (Ollama's failure mid-stream)
                if data:
                    out.append(b"\n".join(data).decode("utf-8", "replace"))
                    data = []
                out.append(line.decode("utf-8", "replace"))
        if out:
            yield out
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
