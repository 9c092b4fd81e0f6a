"""Reading a streamed reply in batches: one wake-up takes everything that has arrived.

At 1,000+ tok/s a server sends a message per token, and a wake-up per message costs more than
the message. A reply is read as it comes for its first UNPACED_MESSAGES messages (the first text
is timed exactly, a short reply ends at once); after that at most once per period, so what
arrives in between is read in one wake-up. The period is READ_PERIOD_S at most and PACE_SHARE
of the reply's time so far, so a read held a period back moves the reply's rate by 2 % at most.
Text is never held longer than that: a message that ends a wait past its period is handed on
at once.

`Pump` does it for an HTTP body (httpx's byte stream); `ws_reader` for a WebSocket (the
client's message queue is drained in one go, and the socket is not read during a period).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

UNPACED_MESSAGES = 200
PACE_SHARE = 0.02
READ_PERIOD_S = 0.010
PENDING_BYTES = 1 << 20  # a body's bytes read ahead of its reader at most (then TCP waits)
# a read this large found the reader behind the stream (a backlog: the socket has more): the
# next read goes at once, not a period later (a paced read at 10,000 tok/s is some 20 KiB)
BEHIND_BYTES = 64 << 10


class Pacer:
    """When the next read may be: `wait_s()` now, `counted(n)` after n more messages."""

    def __init__(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.period = 0.0  # 0: unpaced
        self.left = UNPACED_MESSAGES
        self.first = 0.0  # loop time of the first message
        self.last = 0.0  # loop time of the last read that waited

    def counted(self, messages: int) -> None:
        if not messages or self.period >= READ_PERIOD_S:
            return
        now = self.loop.time()
        if self.left == UNPACED_MESSAGES:
            self.first = now
        self.left -= messages
        if self.left <= 0:
            self.period = min(READ_PERIOD_S, PACE_SHARE * (now - self.first))

    def wait_s(self) -> float:
        """How long to let messages gather before the next read (0: read now); the read
        counts from now."""
        if not self.period:
            return 0.0
        now = self.loop.time()
        wait = self.last + self.period - now
        self.last = now + max(0.0, wait)
        return wait


class Pump:
    """The chunks of `source` (an HTTP body), read in a task of its own: `chunks()` yields
    everything that arrived per wake-up, joined. Past the unpaced start, a chunk that ends a
    wait before its read's period is over is held to the period's end, while the socket
    gathers more (the HTTP client does not read it while nobody waits on it); a chunk that
    ends a wait past it, or after BEHIND_BYTES came without one, is handed on at once. At
    most PENDING_BYTES are read ahead of the reader."""

    def __init__(self, source: AsyncIterator[bytes], pacer: Pacer) -> None:
        self.pacer = pacer
        self._loop = pacer.loop
        self._parts: list[bytes] = []
        self._size = 0
        self._ended = False
        self._error: BaseException | None = None
        self._waiter: asyncio.Future[None] | None = None  # the reader, for data
        self._room: asyncio.Future[None] | None = None  # the pump, for the reader
        self._ticked = False
        self._tick_due = False
        self._task = asyncio.create_task(self._run(source))

    def _tick(self) -> None:
        self._ticked, self._tick_due = True, False

    async def _run(self, source: AsyncIterator[bytes]) -> None:
        loop, pacer = self._loop, self.pacer
        it = aiter(source)
        burst = 0  # the bytes since the last wait
        try:
            while True:
                if not self._tick_due:  # runs unless the loop turns: did the next read wait?
                    self._ticked, self._tick_due = False, True
                    loop.call_soon(self._tick)
                try:
                    chunk = await anext(it)
                except StopAsyncIteration:
                    break
                self._parts.append(chunk)
                self._size += len(chunk)
                if self._ticked:  # it waited: before its period is over, what arrives next
                    wait = pacer.wait_s()  # gathers with it (a period late at most)
                    if wait > 0 and burst < BEHIND_BYTES:  # (behind: catch up)
                        await asyncio.sleep(wait)
                    burst = 0
                burst += len(chunk)
                _wake(self._waiter)
                while self._size > PENDING_BYTES:
                    self._room = loop.create_future()
                    await self._room
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # noqa: BLE001 - handed to the reader, raised there
            self._error = exc
        finally:
            self._ended = True
            _wake(self._waiter)
            close = getattr(it, "aclose", None)
            if close is not None:
                await close()

    async def chunks(self) -> AsyncIterator[bytes]:
        try:
            while True:
                parts = self._parts
                if parts:
                    data = parts[0] if len(parts) == 1 else b"".join(parts)
                    parts.clear()
                    self._size = 0
                    _wake(self._room)
                    yield data
                    continue
                if self._ended:
                    if self._error is not None:
                        raise self._error
                    return
                self._waiter = self._loop.create_future()
                try:
                    await self._waiter
                finally:
                    self._waiter = None
        finally:
            await self.close()

    async def close(self) -> None:
        if not self._task.done():
            self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)


def _wake(future: asyncio.Future[None] | None) -> None:
    if future is not None and not future.done():
        future.set_result(None)


def ws_reader(ws: Any, pacer: Pacer) -> Callable[[], Awaitable[list[str | bytes]]]:
    """`recv_batch()` for a websockets connection: the messages that have arrived (waits for
    one at least). Past the unpaced start, a read due before its period is over waits for it
    with the socket unread, so what arrives meanwhile comes in one read; the messages already
    queued are taken without waiting."""
    recv = ws.recv
    frames = getattr(getattr(ws, "recv_messages", None), "frames", None)
    queue = getattr(frames, "queue", None)  # the client's frames, received and not yet read
    transport = getattr(ws, "transport", None)
    if queue is None or transport is None:  # (not websockets' asyncio client): one at a time
        async def one() -> list[str | bytes]:
            return [await recv()]

        return one

    behind = False  # the last read was large: the socket has more (see BEHIND_BYTES)

    async def batch() -> list[str | bytes]:
        nonlocal behind
        if not queue:
            wait = pacer.wait_s()
            if wait > 0 and not behind:
                transport.pause_reading()
                try:
                    await asyncio.sleep(wait)
                finally:
                    if not transport.is_closing():
                        transport.resume_reading()
        out = [await recv()]
        while queue and any(frame.fin for frame in queue):  # whole messages, already here
            out.append(await recv())
        pacer.counted(len(out))
        behind = sum(map(len, out)) >= BEHIND_BYTES
        return out

    return batch
