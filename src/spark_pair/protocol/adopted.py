"""Reading the reply to a request sent ahead (protocol.sendfirst) on the socket it went out on.

The event loop adopts the connected socket; the reply is read in batches: each wake-up takes
everything that has arrived. `sse()` reads an HTTP/1.1 answer (status, headers, then a
chunked, Content-Length or close-delimited body) and keeps `http_common.post_sse`'s contract;
`AdoptedWs` reads WebSocket frames (no extensions) for `responses_ws.WsSession`. Failures map
to the same errors as the normal transports.
"""

from __future__ import annotations

import asyncio
import socket
import zlib
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from enum import Enum
from typing import Any

from ..errors import ModelError
from . import errors_map
from .sendfirst import Sent, content_decoder, frame, parse_head
from .sse import iter_sse_batches

MAX_HEAD = 64 * 1024
READ_SIZE = 256 * 1024  # the reused read buffer (a fresh bytes object per read costs ~20 us)
# a reply is read as it comes for its first messages (the first text is timed exactly, a short
# reply ends without delay); after that at most once per period, so what arrives in between is
# read in one wake-up (at 1,200 tok/s a wake-up per token costs more than the token). The
# period is READ_PERIOD_S at most and PACE_SHARE of the reply's time so far, so a read held a
# period back moves the reply's rate by 2 % at most however fast it is.
UNPACED_MESSAGES = 200
PACE_SHARE = 0.02
READ_PERIOD_S = 0.010
# a receive this large found the reader far behind the stream (at 10,000 tok/s some 30 ms;
# a paced read is 10 ms at most): its text came earlier than it is timed, and the server may
# have held more back for want of room in the receive window
BEHIND_BYTES = 64 * 1024


class Closed(Exception):
    """The connection ended (the message says how, in the HTTP client's words)."""


class Pipe(asyncio.BufferedProtocol):
    """The adopted socket's bytes: `read()` returns everything that arrived since the last
    read, b"" once the connection has ended. The socket is read into one reused buffer; once
    paced (`pace()`), at most once per period, straight from the socket. `reads` is told of
    each read whether the reader is behind the stream: from a receive of BEHIND_BYTES or more
    until it next has to wait (or out a paced period): the reads in between catch up."""

    def __init__(self, first: bytes = b"", sock: socket.socket | None = None,
                 reads: Callable[[bool], None] | None = None) -> None:
        self.chunks: list[bytes] = [first] if first else []
        self.reads = reads
        self._most = 0  # the most one receive took since the last read
        self._behind = False  # see `reads`
        self.ended = False
        self.error: BaseException | None = None
        self.transport: asyncio.Transport | None = None
        self.sock = sock
        self._waiter: asyncio.Future[None] | None = None
        self._buffer = memoryview(bytearray(READ_SIZE))
        self.period = 0.0  # see pace()
        self._last = 0.0  # loop time of the last paced read
        self._unpaced = UNPACED_MESSAGES  # messages before the reads may be paced
        self._first = 0.0  # loop time of the first message

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def get_buffer(self, sizehint: int) -> memoryview:
        return self._buffer

    def buffer_updated(self, nbytes: int) -> None:
        self._most = max(self._most, nbytes)
        self.data_received(self._buffer[:nbytes].tobytes())

    def data_received(self, data: bytes) -> None:
        self.chunks.append(data)
        self._wake()

    def eof_received(self) -> bool:
        self.ended = True
        self._wake()
        return False

    def connection_lost(self, exc: BaseException | None) -> None:
        self.ended = True
        self.error = exc
        self._wake()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def read(self, timeout_s: float | None = None) -> bytes:
        """The bytes that arrived (waits for some); b"" at the end; TimeoutError after
        `timeout_s` with nothing."""
        paced = self.period > 0
        if paced and not self.chunks and not self.ended:
            loop = asyncio.get_running_loop()
            wait = self._last + self.period - loop.time()
            if wait > 0:
                self._behind = False  # caught up: it reads ahead of the period
                await asyncio.sleep(wait)
            self._take()
        if not self.chunks and not self.ended:
            loop = asyncio.get_running_loop()
            self._waiter = waiter = loop.create_future()
            timer = None if timeout_s is None else loop.call_later(timeout_s, _expire, waiter)
            self._behind = False  # caught up: it waits for the stream
            if paced:  # nothing came during the period: the first byte ends the wait
                self._reading(True)
            try:
                await waiter
            finally:
                self._waiter = None
                if timer is not None:
                    timer.cancel()
                if paced:
                    self._reading(False)
        chunks = self.chunks
        if not chunks:
            return b""
        data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
        chunks.clear()
        if self.reads is not None:
            self._behind = self._behind or self._most >= BEHIND_BYTES
            self.reads(self._behind)
            self._most = 0
        if paced:
            self._last = asyncio.get_running_loop().time()
        return data

    def counted(self, messages: int) -> None:
        """`messages` more were read: past the first UNPACED_MESSAGES the reads are paced, the
        period growing with the reply's time (PACE_SHARE of it, READ_PERIOD_S at most)."""
        if self.period >= READ_PERIOD_S or not messages or self.sock is None:
            return
        now = asyncio.get_running_loop().time()
        if self._unpaced == UNPACED_MESSAGES:
            self._first = now
        self._unpaced -= messages
        if self._unpaced <= 0:
            period = min(READ_PERIOD_S, PACE_SHARE * (now - self._first))
            if self.period:
                self.period = period
            elif period > 0:
                self.pace(period)

    def pace(self, period_s: float) -> None:
        """From now on read at most once per `period_s`, straight from the socket: the kernel
        holds what arrives meanwhile (no wake-up per message); a byte waits `period_s` at
        most. Nothing changes without a socket of its own."""
        if self.sock is not None and self.transport is not None and not self.period:
            self.period = period_s
            self._last = asyncio.get_running_loop().time()
            self._reading(False)

    def _reading(self, on: bool) -> None:
        transport = self.transport
        if transport is not None and not transport.is_closing():
            if on:
                transport.resume_reading()
            else:
                transport.pause_reading()

    def _take(self) -> None:
        """Read what the socket holds now (the event loop does not read it while paced)."""
        sock, buf = self.sock, self._buffer
        assert sock is not None
        while True:
            try:
                n = sock.recv_into(buf)
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:
                self.ended, self.error = True, exc
                return
            if not n:
                self.ended = True
                return
            self._most = max(self._most, n)
            self.chunks.append(buf[:n].tobytes())
            if n < len(buf):
                return

    def write(self, data: bytes) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(data)

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()


def _expire(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_exception(TimeoutError())


async def adopt(sent: Sent, first: bytes = b"") -> Pipe:
    """The event loop takes over the socket `sent` went out on."""
    raw = sent.sock
    assert raw is not None
    sent.sock = None
    sock = socket.socket(raw.family, raw.type, raw.proto, fileno=raw.detach())
    pipe = Pipe(first, sock, sent.reads)
    await asyncio.get_running_loop().create_connection(lambda: pipe, sock=sock)
    return pipe


# ---- HTTP ------------------------------------------------------------------------------

async def sse(sent: Sent, url: str, *, api_key: str | None, model: str, read_timeout_s: float
              ) -> AsyncGenerator[list[str] | None, None]:
    """`post_sse` for a request sent ahead: None once the answer's head is in, then the SSE
    data payloads of each read; a ModelError on failure (the same as the HTTP client's)."""
    if sent.timed_out is not None:  # the connect took its whole time: this attempt's timeout
        raise errors_map.connect_timeout(url, sent.timed_out)
    pipe = await adopt(sent)
    try:
        try:
            status, headers, body = await _answer(pipe, read_timeout_s)
            decoder = content_decoder(headers.get("content-encoding", ""))
            if decoder is not None:
                body = _decoding(body, decoder)
            ctype = headers.get("content-type", "")
            if status != 200:
                raw = (await _whole(body)).decode("utf-8", "replace")
                raise errors_map.error_from_response(status, raw, url, api_key=api_key,
                                                     headers=headers, model=model,
                                                     content_type=ctype)
            if "text/event-stream" not in ctype:
                raw = (await _whole(body)).decode("utf-8", "replace")
                raise errors_map.not_openai_body(url, raw, ctype)
            yield None
            async for batch in iter_sse_batches(body):
                pipe.counted(len(batch))
                yield batch
        except ModelError:
            raise
        except TimeoutError:
            raise errors_map.timeout(url, read_timeout_s) from None
        except (Closed, OSError) as exc:
            raise errors_map.dropped(url, f"the connection closed mid-response: {exc}") from None
    finally:
        pipe.close()


async def _answer(pipe: Pipe, timeout_s: float
                  ) -> tuple[int, dict[str, str], AsyncIterator[bytes]]:
    buf = b""
    while True:
        while b"\r\n\r\n" not in buf:
            if len(buf) > MAX_HEAD:
                raise Closed("the answer's head is too large")
            data = await pipe.read(timeout_s)
            if not data:
                raise _ended(pipe, "Server disconnected without sending a response.")
            buf += data
        head, buf = buf.split(b"\r\n\r\n", 1)
        try:
            status, headers = parse_head(head)
        except OSError as exc:
            raise Closed(str(exc)) from None
        if not 100 <= status < 200:
            break  # an interim answer (100 Continue) is followed by the real one
    if "chunked" in headers.get("transfer-encoding", "").lower():
        return status, headers, _chunked(pipe, buf, timeout_s)
    length = headers.get("content-length", "")
    if length.isdigit():
        return status, headers, _sized(pipe, buf, int(length), timeout_s)
    return status, headers, _to_close(pipe, buf, timeout_s)


def _ended(pipe: Pipe, why: str) -> Closed:
    return Closed(str(pipe.error) if pipe.error is not None else why)


async def _whole(body: AsyncIterator[bytes]) -> bytes:
    return b"".join([chunk async for chunk in body])


async def _decoding(body: AsyncIterator[bytes], decoder: Any) -> AsyncIterator[bytes]:
    """A compressed body's bytes, decoded as they come (a decoding error is a broken reply)."""
    try:
        async for chunk in body:
            data = decoder.decompress(chunk)
            if data:
                yield data
        rest = decoder.flush()
    except zlib.error as exc:
        raise Closed(f"the compressed answer is broken: {exc}") from None
    if rest:
        yield rest


async def _sized(pipe: Pipe, buf: bytes, length: int, timeout_s: float
                 ) -> AsyncIterator[bytes]:
    got = 0
    while True:
        if buf:
            buf = buf[:length - got]
            got += len(buf)
            yield buf
        if got >= length:
            return
        buf = await pipe.read(timeout_s)
        if not buf:
            raise _ended(pipe, f"peer closed connection without sending complete message body "
                               f"(received {got} bytes, expected {length})")


async def _to_close(pipe: Pipe, buf: bytes, timeout_s: float) -> AsyncIterator[bytes]:
    while True:
        if buf:
            yield buf
        buf = await pipe.read(timeout_s)
        if not buf:
            if pipe.error is not None:
                raise Closed(str(pipe.error))
            return


async def _chunked(pipe: Pipe, first: bytes, timeout_s: float) -> AsyncIterator[bytes]:
    """A chunked body, decoded; one yield per batch of arrived bytes."""
    buf = bytearray(first)
    left = -1  # bytes left of the current chunk, its closing CRLF included; -1: a size line
    while True:
        out: list[bytes] = []
        pos, n = 0, len(buf)
        while True:
            if left < 0:
                end = buf.find(b"\r\n", pos)
                if end < 0:
                    break
                size_text = bytes(buf[pos:end]).split(b";", 1)[0].strip()
                try:
                    size = int(size_text, 16)
                except ValueError:
                    raise Closed(f"a malformed chunk size {size_text[:20]!r}") from None
                pos = end + 2
                if size == 0:  # the last chunk (trailers are not read)
                    if out:
                        yield b"".join(out)
                    return
                left = size + 2
            take = min(left, n - pos)
            if take <= 0:
                break
            data = min(take, left - 2)  # the part of `take` before the closing CRLF
            if data > 0:
                out.append(bytes(buf[pos:pos + data]))
            pos += take
            left -= take
            if left:
                break
            left = -1
        del buf[:pos]
        if out:
            yield b"".join(out)
        more = await pipe.read(timeout_s)
        if not more:
            raise _ended(pipe, "peer closed connection without sending complete message body "
                               "(incomplete chunked read)")
        buf += more


# ---- WebSocket ---------------------------------------------------------------------------

class WsState(Enum):
    OPEN = "open"
    CLOSED = "closed"


class AdoptedWs:
    """A WebSocket whose upgrade and first message went out ahead: what `WsSession` needs of
    a connection (`recv_batch`, `send`, `close`, `close_code`, `state`). Pings are answered,
    a close is answered and ends it; no extension was negotiated."""

    def __init__(self, pipe: Pipe) -> None:
        self.pipe = pipe
        self.buf = bytearray()
        self.parts: list[bytes] = []  # a fragmented message so far
        self.close_code: int | None = None
        self.state = WsState.OPEN

    @classmethod
    async def of(cls, sent: Sent) -> AdoptedWs:
        return cls(await adopt(sent, sent.rest))

    async def recv_batch(self) -> list[str]:
        """The text messages that have arrived (waits for one at least); raises Closed when
        the connection ends."""
        while True:
            if self.state is WsState.CLOSED:
                raise Closed(f"the WebSocket closed (code {self.close_code})")
            data = await self.pipe.read()
            if not data:
                self._ended(1006)
                continue
            self.buf += data
            messages = self._frames()
            if messages:
                self.pipe.counted(len(messages))
                return messages

    def _frames(self) -> list[str]:
        buf = self.buf
        out: list[str] = []
        pos, n = 0, len(buf)
        while n - pos >= 2:
            b0, b1 = buf[pos], buf[pos + 1]
            size, at = b1 & 0x7F, pos + 2
            if size == 126:
                if n - at < 2:
                    break
                size, at = buf[at] << 8 | buf[at + 1], at + 2
            elif size == 127:
                if n - at < 8:
                    break
                size, at = int.from_bytes(buf[at:at + 8], "big"), at + 8
            if b1 & 0x80:  # a server never masks its frames
                self._fail(1002)
                break
            if n - at < size:
                break
            pos = at + size
            if b0 == 0x81 and not self.parts:  # a whole text message in one frame: the usual
                try:
                    out.append(buf[at:pos].decode("utf-8"))
                except UnicodeDecodeError:
                    self._fail(1007)
                    break
                continue
            payload = bytes(buf[at:pos])
            opcode = b0 & 0x0F
            if opcode in (0x0, 0x1, 0x2):
                self.parts.append(payload)
                if b0 & 0x80:
                    whole = b"".join(self.parts)
                    self.parts.clear()
                    try:
                        out.append(whole.decode("utf-8"))
                    except UnicodeDecodeError:
                        self._fail(1007)
                        break
            elif opcode == 0x9:  # ping
                self.pipe.write(frame(0xA, payload))
            elif opcode == 0x8:  # close: answer it; the connection ends
                code = int.from_bytes(payload[:2], "big") if len(payload) >= 2 else 1005
                self.pipe.write(frame(0x8, payload[:2]))
                self._ended(code)
                break
        del buf[:pos]
        return out

    def _fail(self, code: int) -> None:
        self.pipe.write(frame(0x8, code.to_bytes(2, "big")))
        self._ended(code)

    def _ended(self, code: int) -> None:
        self.close_code = code
        self.state = WsState.CLOSED
        self.buf.clear()
        self.pipe.close()

    async def send(self, text: str) -> None:
        if self.state is WsState.CLOSED:
            raise Closed(f"the WebSocket closed (code {self.close_code})")
        self.pipe.write(frame(0x1, text.encode("utf-8")))

    async def close(self) -> None:
        if self.state is WsState.OPEN:
            self.pipe.write(frame(0x8, (1000).to_bytes(2, "big")))
            self._ended(1000)
