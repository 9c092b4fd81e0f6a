"""Reading a reply in batches (protocol.batches): what has arrived is taken in one wake-up, the
message a wait ends with is handed on at once, and past the unpaced start the reads are at
most one per period. The HTTP pump is fed by a source that waits as a socket does; the
WebSocket reader runs against a real websockets server on 127.0.0.1."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from spark_pair.protocol import batches
from spark_pair.protocol.batches import Pacer, Pump, ws_reader


async def bursts(plan: list[list[bytes]], gap_s: float, log: list[str]) -> AsyncIterator[bytes]:
    """Each inner list is one burst: its chunks come without a wait, the bursts `gap_s` apart."""
    try:
        for burst in plan:
            await asyncio.sleep(gap_s)
            for chunk in burst:
                yield chunk
    finally:
        log.append("closed")


async def test_what_arrived_together_is_read_in_one_piece() -> None:
    log: list[str] = []
    pump = Pump(bursts([[b"a", b"b", b"c"], [b"d"], [b"e", b"f"]], 0.01, log), Pacer())
    got = [chunk async for chunk in pump.chunks()]
    assert got == [b"abc", b"d", b"ef"]  # a wake-up per burst, not per chunk
    assert log == ["closed"]


async def test_a_short_reply_is_read_as_it_comes() -> None:
    """Before UNPACED_MESSAGES messages nothing is held: each chunk is handed on as it comes
    (the first text is timed exactly; a short reply ends when its last message arrives)."""
    loop = asyncio.get_running_loop()
    pacer = Pacer()
    arrived: list[float] = []
    handed: list[float] = []

    async def source() -> AsyncIterator[bytes]:
        for _ in range(20):
            await asyncio.sleep(0.003)  # less than a period apart
            arrived.append(loop.time())
            yield b"x"

    async for _ in Pump(source(), pacer).chunks():
        handed.append(loop.time())
        pacer.counted(1)
    assert len(handed) == 20 and pacer.period == 0
    assert max(h - a for h, a in zip(handed, arrived, strict=True)) < batches.READ_PERIOD_S / 2


async def test_a_chunk_that_ends_a_wait_past_its_period_is_handed_on_at_once() -> None:
    pacer = paced()
    loop = asyncio.get_running_loop()
    arrived: list[float] = []

    async def source() -> AsyncIterator[bytes]:
        for _ in range(5):
            await asyncio.sleep(0.05)  # far longer than a period: each chunk ends a wait
            arrived.append(loop.time())
            yield b"x"

    handed = []
    async for _ in Pump(source(), pacer).chunks():
        handed.append(loop.time())
    assert len(handed) == 5
    assert max(h - a for h, a in zip(handed, arrived, strict=True)) < batches.READ_PERIOD_S


def paced() -> Pacer:
    """A pacer past its unpaced start, on a reply a second old (the full period)."""
    pacer = Pacer()
    pacer.counted(batches.UNPACED_MESSAGES)
    pacer.first -= 1.0
    pacer.counted(1)
    assert pacer.period == batches.READ_PERIOD_S
    return pacer


async def socket_like(count: int, every_s: float) -> AsyncIterator[bytes]:
    """`count` chunks arriving every `every_s` on their own (as a socket's do), read as a
    client reads them: what has arrived without a wait, else after one."""
    arrived: list[bytes] = []
    more = asyncio.Event()

    async def sender() -> None:
        for _ in range(count):
            await asyncio.sleep(every_s)
            arrived.append(b"t")
            more.set()

    task = asyncio.create_task(sender())
    try:
        for _ in range(count):
            while not arrived:
                more.clear()
                await more.wait()
            yield arrived.pop(0)
    finally:
        task.cancel()


async def test_paced_reads_are_a_period_apart_and_take_everything() -> None:
    loop = asyncio.get_running_loop()
    start = loop.time()
    got = [chunk async for chunk in Pump(socket_like(300, 0.001), paced()).chunks()]
    took = loop.time() - start
    assert b"".join(got) == b"t" * 300
    assert len(got) <= took / batches.READ_PERIOD_S + 2, (len(got), took)  # one a period


async def test_a_backlog_is_read_at_once_not_a_period_a_read() -> None:
    """A read of BEHIND_BYTES or more found the reader behind the stream: the next goes at
    once (a backlog at the pace of the periods would take 50 periods here)."""

    async def backlog() -> AsyncIterator[bytes]:
        for _ in range(50):
            await asyncio.sleep(0)  # each read waits (for the loop to take the next piece)
            yield b"b" * batches.BEHIND_BYTES

    loop = asyncio.get_running_loop()
    start = loop.time()
    got = [chunk async for chunk in Pump(backlog(), paced()).chunks()]
    assert sum(map(len, got)) == 50 * batches.BEHIND_BYTES
    assert loop.time() - start < 10 * batches.READ_PERIOD_S


async def test_a_failure_comes_after_the_data_before_it() -> None:
    async def source() -> AsyncIterator[bytes]:
        yield b"kept"
        await asyncio.sleep(0)
        raise ConnectionResetError("gone")

    got = []
    with pytest.raises(ConnectionResetError, match="gone"):
        async for chunk in Pump(source(), Pacer()).chunks():
            got.append(chunk)
    assert got == [b"kept"]


async def test_a_reader_that_stops_stops_the_pump(monkeypatch: pytest.MonkeyPatch) -> None:
    log: list[str] = []

    async def endless() -> AsyncIterator[bytes]:
        try:
            while True:
                await asyncio.sleep(0.001)
                yield b"x" * 1000
        finally:
            log.append("closed")

    monkeypatch.setattr(batches, "PENDING_BYTES", 10_000)
    pump = Pump(endless(), Pacer())
    reader = pump.chunks()
    first = await anext(reader)
    await asyncio.sleep(0.2)  # the reader is busy: the pump reads ahead, but only so far
    assert len(first) == 1000 and pump._size <= 10_000 + 1000
    await reader.aclose()
    assert log == ["closed"]


async def test_the_websocket_reader_drains_what_is_queued_in_one_call() -> None:
    from websockets.asyncio.client import connect
    from websockets.asyncio.server import serve

    async def handler(ws) -> None:  # noqa: ANN001
        for i in range(50):
            await ws.send(f"m{i}")
        await ws.wait_closed()

    async with serve(handler, "127.0.0.1", 0) as server:
        port = server.sockets[0].getsockname()[1]
        async with connect(f"ws://127.0.0.1:{port}") as ws:
            await asyncio.sleep(0.2)  # all fifty have arrived (the client queues some of them)
            queued = len(ws.recv_messages.frames.queue)
            recv = ws_reader(ws, Pacer())
            batch = await recv()
            rest = [m for _ in range(50 - len(batch)) for m in [await ws.recv()]]
    assert queued > 1 and len(batch) == queued  # what was queued, in one call
    assert batch + rest == [f"m{i}" for i in range(50)]


async def test_the_websocket_reader_reads_a_period_apart_once_paced() -> None:
    from websockets.asyncio.client import connect
    from websockets.asyncio.server import serve

    count = batches.UNPACED_MESSAGES + 300

    async def handler(ws) -> None:  # noqa: ANN001
        for i in range(count):
            await ws.send(f"m{i}")
            await asyncio.sleep(0.001)
        await ws.wait_closed()

    async with serve(handler, "127.0.0.1", 0) as server:
        port = server.sockets[0].getsockname()[1]
        async with connect(f"ws://127.0.0.1:{port}") as ws:
            recv = ws_reader(ws, Pacer())
            got: list[list] = []
            while sum(map(len, got)) < count:
                got.append(await recv())
    assert [m for batch in got for m in batch] == [f"m{i}" for i in range(count)]
    unpaced = next(i for i in range(len(got)) if sum(map(len, got[:i + 1]))
                   >= batches.UNPACED_MESSAGES)
    paced = got[unpaced + 1:]
    assert len(paced) < 300 / 3, len(paced)  # several messages a read, not one
