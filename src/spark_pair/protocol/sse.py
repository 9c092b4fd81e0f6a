"""A small, fast Server-Sent Events parser: yields each event's data payload (str)."""

from __future__ import annotations

from collections.abc import AsyncIterator


async def iter_sse_data(chunks: AsyncIterator[bytes]) -> AsyncIterator[str]:
    """Yield the `data:` payload of every event; multi-line data is joined with newlines.

    Lines are split once per network chunk (not per token); `event:`, `id:` and comments are
    skipped because every payload we read carries its own `type`.
    """
    buf = b""
    data: list[bytes] = []
    async for chunk in chunks:
        buf = buf + chunk if buf else chunk
        if b"\n" not in buf:
            continue
        lines = buf.split(b"\n")
        buf = lines.pop()
        for line in lines:
            if line.endswith(b"\r"):
                line = line[:-1]
            if not line:
                if data:
                    yield b"\n".join(data).decode("utf-8", "replace")
                    data = []
            elif line.startswith(b"data:"):
                value = line[5:]
                data.append(value[1:] if value.startswith(b" ") else value)
    if buf.startswith(b"data:"):
        value = buf[5:].rstrip(b"\r")
        data.append(value[1:] if value.startswith(b" ") else value)
    if data:
        yield b"\n".join(data).decode("utf-8", "replace")
