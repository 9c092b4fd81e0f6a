"""The readers of a request sent ahead (protocol.adopted), fed bytes as a socket delivers them:
split anywhere, several messages in one read. The end-to-end behaviour (real processes, the
simulator) is in test_run_sendfirst.py."""

from __future__ import annotations

import asyncio
import json
import random
import socket

import pytest

from spark_pair.protocol import adopted
from spark_pair.protocol.adopted import AdoptedWs, Closed, Pipe, _answer
from spark_pair.protocol.sendfirst import frame, mask_bytes


class Wire:
    """What the reader writes back (pongs, close frames)."""

    def __init__(self) -> None:
        self.sent: list[bytes] = []
        self.closed = False

    def write(self, data: bytes) -> None:
        self.sent.append(data)

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True


def pipe_of(pieces: list[bytes], *, end: bool = True) -> Pipe:
    pipe = Pipe()
    pipe.connection_made(Wire())  # type: ignore[arg-type]
    for piece in pieces:
        pipe.data_received(piece)
    if end:
        pipe.eof_received()
    return pipe


def split(data: bytes, rng: random.Random) -> list[bytes]:
    cuts = sorted(rng.sample(range(1, len(data)), k=min(len(data) - 1, rng.randint(1, 12))))
    return [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)]


def chunked(body: bytes, sizes: list[int]) -> bytes:
    out, pos = b"", 0
    for size in sizes:
        part = body[pos:pos + size]
        pos += size
        out += f"{len(part):x}\r\n".encode() + part + b"\r\n"
    return out + b"0\r\n\r\n"


async def read_body(pieces: list[bytes]) -> tuple[int, dict[str, str], bytes]:
    pipe = Pipe()
    pipe.connection_made(Wire())  # type: ignore[arg-type]

    async def feed() -> None:
        for piece in pieces:  # one read per piece, as a socket delivers them
            pipe.data_received(piece)
            await asyncio.sleep(0)
        pipe.eof_received()

    feeding = asyncio.create_task(feed())
    status, headers, body = await _answer(pipe, 5.0)
    data = b"".join([chunk async for chunk in body])
    await feeding
    return status, headers, data


@pytest.mark.parametrize("seed", range(20))
def test_a_chunked_body_decodes_the_same_however_it_is_split(seed: int) -> None:
    rng = random.Random(seed)
    body = "".join(f"data: {{\"n\": {i}, \"t\": \"é{i}\"}}\n\n" for i in range(40)).encode()
    sizes = [rng.randint(1, 90) for _ in range(len(body))]
    wire = (b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n" + chunked(body, sizes))
    status, headers, data = asyncio.run(read_body(split(wire, rng)))
    assert (status, headers["content-type"], data) == (200, "text/event-stream", body)


def test_sized_and_close_delimited_bodies_and_an_early_close() -> None:
    sized = b"HTTP/1.1 401 Unauthorized\r\nContent-Length: 5\r\n\r\nnope!extra"
    assert asyncio.run(read_body([sized]))[::2] == (401, b"nope!")
    to_close = b"HTTP/1.0 200 OK\r\nContent-Type: text/event-stream\r\n\r\ndata: 1\n\n"
    assert asyncio.run(read_body([to_close[:30], to_close[30:]]))[2] == b"data: 1\n\n"
    cut = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab"
    with pytest.raises(Closed, match="incomplete chunked read"):
        asyncio.run(read_body([cut]))
    with pytest.raises(Closed, match="without sending a response"):
        asyncio.run(read_body([b"HTTP/1.1 200"]))


def server_frame(opcode: int, payload: bytes, fin: bool = True) -> bytes:
    n = len(payload)
    head = bytes([(0x80 if fin else 0) | opcode])
    if n < 126:
        head += bytes([n])
    elif n < 1 << 16:
        head += bytes([126]) + n.to_bytes(2, "big")
    else:
        head += bytes([127]) + n.to_bytes(8, "big")
    return head + payload


def unmask(data: bytes) -> tuple[int, bytes]:
    """(opcode, payload) of one client frame."""
    size, at = data[1] & 0x7F, 2
    if size == 126:
        size, at = int.from_bytes(data[2:4], "big"), 4
    elif size == 127:
        size, at = int.from_bytes(data[2:10], "big"), 10
    assert data[1] & 0x80, "a client frame is masked"
    mask, payload = data[at:at + 4], data[at + 4:at + 4 + size]
    return data[0] & 0x0F, mask_bytes(payload, mask)


@pytest.mark.parametrize("size", [0, 3, 125, 126, 65535, 65536, 200_000])
def test_client_frames_are_masked_and_carry_the_payload(size: int) -> None:
    payload = bytes(random.Random(size).randrange(256) for _ in range(size))
    assert unmask(frame(0x1, payload)) == (0x1, payload)


@pytest.mark.parametrize("seed", range(10))
def test_websocket_messages_arrive_in_batches_however_the_frames_are_split(seed: int) -> None:
    rng = random.Random(seed)
    texts = [json.dumps({"type": "response.output_text.delta", "delta": "x" * rng.randint(0, 300)})
             for _ in range(30)]
    texts.append("é" * 70_000)  # a 64-bit length
    wire = b""
    for i, text in enumerate(texts):
        data = text.encode()
        if i == 5:  # a fragmented message with a ping between its parts
            wire += server_frame(0x1, data[:7], fin=False) + server_frame(0x9, b"hi")
            wire += server_frame(0x0, data[7:])
        else:
            wire += server_frame(0x1, data)
    wire += server_frame(0x8, (1000).to_bytes(2, "big") + b"bye")
    pipe = pipe_of(split(wire, rng), end=False)
    ws = AdoptedWs(pipe)

    async def read_all() -> list[list[str]]:
        batches = []
        while True:
            try:
                batches.append(await ws.recv_batch())
            except Closed:
                return batches

    batches = asyncio.run(read_all())
    assert [m for batch in batches for m in batch] == texts
    assert len(batches) == 1  # everything had arrived: one wake-up, one batch
    wire_back = pipe.transport.sent  # type: ignore[union-attr]
    assert [unmask(w) for w in wire_back] == [(0xA, b"hi"), (0x8, (1000).to_bytes(2, "big"))]
    assert ws.close_code == 1000


def test_a_masked_server_frame_fails_the_connection() -> None:
    bad = bytes([0x81, 0x80 | 2]) + b"abcd" + b"hi"
    ws = AdoptedWs(pipe_of([bad], end=False))
    with pytest.raises(Closed):
        asyncio.run(ws.recv_batch())
    assert ws.close_code == 1002


def test_paced_reads_take_everything_that_arrived_in_one_read_per_period(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(adopted, "READ_SIZE", 4096)  # a reply's end is often more than that

    async def scenario() -> list[tuple[bytes, bool]]:
        ours, theirs = socket.socketpair()
        loop = asyncio.get_running_loop()
        pipe = Pipe(sock=ours)
        await loop.create_connection(lambda: pipe, sock=ours)
        seen = []
        theirs.sendall(b"first")
        seen.append((await pipe.read(5.0), True))
        pipe.pace(0.05)
        started = loop.time()
        for part in (b"a", b"b", b"c"):  # three messages during one period: one read
            theirs.sendall(part)
            await asyncio.sleep(0.005)
        seen.append((await pipe.read(5.0), loop.time() - started >= 0.05))
        big = bytes(range(256)) * 100  # more than one buffer: taken whole, not a period later
        theirs.sendall(big)
        await asyncio.sleep(0.1)
        got = await pipe.read(5.0)
        seen.append((b"big" if got == big else got[:20], True))
        theirs.close()
        seen.append((await pipe.read(5.0), pipe.ended))
        pipe.close()
        return seen

    assert asyncio.run(scenario()) == [(b"first", True), (b"abc", True), (b"big", True),
                                       (b"", True)]


@pytest.mark.parametrize("fragmented", [False, True])
def test_a_text_message_that_is_not_utf8_fails_the_connection(fragmented: bool) -> None:
    good = server_frame(0x1, json.dumps({"type": "x"}).encode())
    bad = b'{"type": "\xff"}'
    wire = good + (server_frame(0x1, bad[:5], fin=False) + server_frame(0x0, bad[5:])
                   if fragmented else server_frame(0x1, bad))
    ws = AdoptedWs(pipe_of([wire], end=False))

    async def read_all() -> list[list[str]]:
        batches = []
        with pytest.raises(Closed):
            while True:
                batches.append(await ws.recv_batch())
        return batches

    assert asyncio.run(read_all()) == [['{"type": "x"}']]  # what came before it is read
    assert ws.close_code == 1007
    assert [unmask(w) for w in ws.pipe.transport.sent] == [  # type: ignore[union-attr]
        (0x8, (1007).to_bytes(2, "big"))]


def test_a_read_that_finds_the_reader_far_behind_says_so_until_it_waits() -> None:
    """The pipe tells its reader of each read whether it is behind the stream: from a receive
    of BEHIND_BYTES or more (a backlog the reader came late to) until it next has to wait;
    such text is no measure of the server's pace."""

    async def go() -> list[bool]:
        ours, theirs = socket.socketpair()
        told: list[bool] = []
        try:
            theirs.sendall(b"x" * (adopted.BEHIND_BYTES + 1000))  # waiting before the first read
            pipe = Pipe(b"", ours, told.append)
            await asyncio.get_running_loop().create_connection(lambda: pipe, sock=ours)
            got = len(await pipe.read(5.0))
            while got < adopted.BEHIND_BYTES + 1000:  # the rest of the backlog, if split
                got += len(await pipe.read(5.0))
            theirs.sendall(b"z" * 100)  # more, there before the reader asks: still catching up
            for _ in range(500):  # the loop takes it in
                if pipe.chunks:
                    break
                await asyncio.sleep(0.01)
            assert await pipe.read(5.0) == b"z" * 100
            theirs.sendall(b"y" * 100)  # then one message, read as it comes (it waited)
            assert await pipe.read(5.0) == b"y" * 100
            pipe.close()
        finally:
            theirs.close()
        return told

    told = asyncio.run(go())
    assert told[0] and told[-2:] == [True, False], told
