"""The first request of a one-shot run, sent over a plain blocking socket.

Importing asyncio, httpx and websockets costs a few hundred milliseconds on a slow machine;
none of it is needed to send one request. `send()` connects, sends the request (an HTTP/1.1
POST, or the WebSocket upgrade and then the `response.create` message) and returns the
connected socket; the client adopts it once it is loaded and reads the reply there
(protocol.adopted), while the server works on the first token.

`send()` returns None, having sent nothing a server could act on, whenever the normal
transport must do it: TLS (https, wss), a proxy set in the environment (HTTP transports),
a name that does not resolve or a refused connection. The normal transport then sends the
request and reports any failure exactly as it always has. A connect (every address of the
name, one soon after the other) or an upgrade that takes longer than the connect timeout is
the first attempt's timeout: the `Sent` it returns carries `timed_out` (the seconds waited)
and no socket, and the client reports it and retries as it would its own. A refused or
redirected upgrade comes back as the `refusal` it is.

Only light modules load here (no asyncio, ssl, hashlib or dataclasses).
"""

from __future__ import annotations

import _socket
import errno
import os
import time
from urllib.parse import quote, urlsplit

from .request import CONNECT_STAGGER_S, user_agent

TYPE_CHECKING = False  # not typing's: only light modules load here
if TYPE_CHECKING:
    from collections.abc import Callable

WS_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"  # RFC 6455
BETA_HEADER = ("openai-beta", "responses_websockets=2026-02-06")
MAX_HEAD = 64 * 1024  # an HTTP head larger than this is not a WebSocket upgrade answer
MAX_REFUSAL_BODY = 64 * 1024
PROXY_VARS = ("http_proxy", "https_proxy", "all_proxy")
# what the HTTP client leaves unescaped in a path and a query (the URL standard's sets)
_HTTP_PATH_SAFE = "".join(chr(i) for i in range(0x21, 0x7F) if chr(i) not in '"#<>?`{}')
_HTTP_QUERY_SAFE = "".join(chr(i) for i in range(0x21, 0x7F) if chr(i) not in '"#<>')
_WS_SAFE = ":/?#[]@!$&'()*+,;="  # the WebSocket client's, for a URL that is not ASCII
_CONNECTING = {errno.EINPROGRESS, errno.EWOULDBLOCK, errno.EAGAIN}  # a non-blocking connect's


class Refusal:
    """A WebSocket upgrade answered with something other than 101 (read whole)."""

    __slots__ = ("status", "headers", "body")

    def __init__(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.status, self.headers, self.body = status, headers, body


class Sent:
    """A request on the wire: the socket (blocking; the reader makes it non-blocking), what was
    sent, when (time.perf_counter), and for the WebSocket mode the bytes that came after the
    upgrade answer (`rest`) or the refused upgrade (`refusal`, the socket then closed)."""

    __slots__ = ("sock", "transport", "model", "url", "at", "rest", "refusal", "request",
                 "timed_out", "reads")

    def __init__(self, sock: _socket.socket | None, transport: str, model: str, url: str,
                 at: float, rest: bytes = b"", refusal: Refusal | None = None,
                 timed_out: float | None = None) -> None:
        self.sock, self.transport, self.model, self.url = sock, transport, model, url
        self.at, self.rest, self.refusal, self.timed_out = at, rest, refusal, timed_out
        self.request: object = None  # the TurnRequest it carries (set by the caller)
        # told of each read of the reply whether it found the reader behind the stream (set
        # by the caller: protocol.metrics.Stopwatch.read)
        self.reads: Callable[[bool], None] | None = None

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None


def proxied(env: dict[str, str] | os._Environ[str]) -> bool:
    """Whether a proxy is set for HTTP requests (the HTTP client honours these variables)."""
    return any(env.get(name) or env.get(name.upper()) for name in PROXY_VARS)


def send_http(url: str, transport: str, model: str, body: bytes, api_key: str | None,
              connect_timeout_s: float) -> Sent | None:
    """POST `body` (JSON) to `url` (chat or responses, streamed as server-sent events)."""
    if proxied(os.environ):
        return None
    target = _target(url)
    if target is None:
        return None
    host_header, path = target[2:]
    sock, early, _ = _dial(url, target, transport, model, connect_timeout_s)
    if sock is None:
        return early
    head = [f"POST {path} HTTP/1.1", f"Host: {host_header}", "Accept: text/event-stream",
            "Accept-Encoding: identity", "Content-Type: application/json",
            f"Content-Length: {len(body)}", f"User-Agent: {user_agent()}"]
    if api_key:
        head.append(f"Authorization: Bearer {api_key}")
    data = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body
    try:
        sock.sendall(data)
    except OSError:
        sock.close()
        return None  # nothing complete arrived: the normal transport sends it
    return Sent(sock, transport, model, url, time.perf_counter())


def send_ws(url: str, model: str, message: str, api_key: str | None,
            connect_timeout_s: float) -> Sent | None:
    """Open a WebSocket to `url` (ws://) and send `message` as one text message."""
    target = _target(url, secure_scheme="wss", plain_scheme="ws", ws=True)
    if target is None:
        return None
    host_header, path = target[2:]
    sock, early, started = _dial(url, target, "ws", model, connect_timeout_s)
    if sock is None:
        return early
    import binascii

    key = binascii.b2a_base64(os.urandom(16), newline=False)
    head = [f"GET {path} HTTP/1.1", f"Host: {host_header}", "Upgrade: websocket",
            "Connection: Upgrade", f"Sec-WebSocket-Key: {key.decode()}",
            "Sec-WebSocket-Version: 13", f"{BETA_HEADER[0]}: {BETA_HEADER[1]}",
            f"User-Agent: {user_agent()}"]
    if api_key:
        head.append(f"Authorization: Bearer {api_key}")
    try:
        sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
        sock.settimeout(max(0.001, connect_timeout_s - (time.perf_counter() - started)))
        try:
            status, headers, rest = _read_head(sock)
        except TimeoutError:  # the upgrade took the whole connect timeout: the first attempt's
            sock.close()
            return Sent(None, "ws", model, url, started, timed_out=connect_timeout_s)
        if status != 101:  # a refusal, or a redirect (never followed): reported as it came
            body = _read_refusal_body(sock, headers, rest)
            sock.close()
            return Sent(None, "ws", model, url, time.perf_counter(),
                        refusal=Refusal(status, headers, body))
        if not _upgraded(headers, key):
            raise OSError("not a WebSocket upgrade answer")
        sock.sendall(frame(0x1, message.encode("utf-8")))
    except OSError:
        sock.close()
        return None  # nothing a server acts on was sent: the normal transport opens its own
    return Sent(sock, "ws", model, url, time.perf_counter(), rest=rest)


def _dial(url: str, target: tuple[str, int, str, str], transport: str, model: str,
          timeout_s: float) -> tuple[_socket.socket | None, Sent | None, float]:
    """Connect to `target`: (the socket, None, when the connect began), or (None, what to
    return: a first attempt that timed out, or None for the normal transport, that time)."""
    started = time.perf_counter()
    try:
        sock = _connect(target[0], target[1], timeout_s)
    except TimeoutError:
        return None, Sent(None, transport, model, url, started, timed_out=timeout_s), started
    return sock, None, started


def frame(opcode: int, payload: bytes) -> bytes:
    """One final client frame (RFC 6455: a client masks every frame it sends)."""
    n = len(payload)
    if n < 126:
        head = bytes((0x80 | opcode, 0x80 | n))
    elif n < 1 << 16:
        head = bytes((0x80 | opcode, 0x80 | 126)) + n.to_bytes(2, "big")
    else:
        head = bytes((0x80 | opcode, 0x80 | 127)) + n.to_bytes(8, "big")
    mask = os.urandom(4)
    return head + mask + mask_bytes(payload, mask)


def mask_bytes(payload: bytes, mask: bytes) -> bytes:
    """XOR `payload` with the repeated 4-byte `mask` (one big-integer XOR, not a byte loop)."""
    n = len(payload)
    if not n:
        return b""
    key = (mask * (n // 4 + 1))[:n]
    return (int.from_bytes(payload, "big") ^ int.from_bytes(key, "big")).to_bytes(n, "big")


def _target(url: str, secure_scheme: str = "https", plain_scheme: str = "http", ws: bool = False
            ) -> tuple[str, int, str, str] | None:
    """(host, port, Host header, request target) of a plain (not TLS) URL, the target escaped
    as the normal transport escapes it; None for anything else (that transport sends it)."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    if parts.scheme != plain_scheme or not parts.hostname or not parts.hostname.isascii():
        return None  # TLS (https, wss), or a name to convert (IDNA): the normal transport
    host = parts.hostname
    shown = f"[{host}]" if ":" in host else host
    header = shown if port is None else f"{shown}:{port}"
    path, query = parts.path or "/", parts.query
    if ws:
        if not url.isascii():
            path, query = quote(path, safe=_WS_SAFE), quote(query, safe=_WS_SAFE)
    elif "%" in path + query or "/." in path:
        return None  # escapes to keep or dot segments to drop: the HTTP client's rules
    else:
        path, query = quote(path, safe=_HTTP_PATH_SAFE), quote(query, safe=_HTTP_QUERY_SAFE)
    return host, port or 80, header, path + (f"?{query}" if query else "")


def _connect(host: str, port: int, timeout_s: float) -> _socket.socket | None:
    """A socket connected to `host`; None when it cannot be; TimeoutError when no address
    answered within `timeout_s`. The name's addresses are tried in turn, the next as soon as
    one fails or CONNECT_STAGGER_S after it began while it still waits (RFC 8305); the first
    to connect wins, all within the one `timeout_s`."""
    try:  # an ASCII name as bytes: no IDNA codec to load
        name = host.encode("ascii") if host.isascii() else host
        infos = _socket.getaddrinfo(name, port, 0, _socket.SOCK_STREAM)
    except OSError:
        return None
    deadline = time.perf_counter() + timeout_s
    pending: list[_socket.socket] = []  # connecting
    won = None
    try:
        for i, (family, kind, proto, _, address) in enumerate(infos):
            if time.perf_counter() >= deadline:
                break
            sock = _socket.socket(family, kind, proto)
            pending.append(sock)
            sock.setblocking(False)
            sock.setsockopt(_socket.IPPROTO_TCP, _socket.TCP_NODELAY, 1)
            err = sock.connect_ex(address)
            if err == 0:  # connected at once
                won = sock
                break
            if err not in _CONNECTING:  # refused or unreachable at once: the next address
                pending.remove(sock)
                sock.close()
                continue
            last = i == len(infos) - 1
            won = _first_connected(pending, deadline if last else
                                   min(deadline, time.perf_counter() + CONNECT_STAGGER_S))
            if won is not None:
                break
        else:
            won = _first_connected(pending, deadline)
    finally:
        for sock in pending:
            if sock is not won:
                sock.close()
    if won is not None:
        won.settimeout(timeout_s)
        return won
    if pending:
        raise TimeoutError(f"connecting to {host}:{port} took over {timeout_s:g} s")
    return None


def _first_connected(pending: list[_socket.socket], until: float) -> _socket.socket | None:
    """The first of `pending` to connect before `until` (perf_counter); those that fail are
    closed and dropped from `pending`, so an empty list means every one failed."""
    import select

    while pending:
        left = until - time.perf_counter()
        if left <= 0:
            return None
        _, done, failed = select.select([], pending, pending, left)
        for sock in dict.fromkeys(done + failed):
            pending.remove(sock)
            if sock.getsockopt(_socket.SOL_SOCKET, _socket.SO_ERROR) == 0:
                return sock
            sock.close()
    return None


def _read_head(sock: _socket.socket) -> tuple[int, dict[str, str], bytes]:
    """The status, headers (lower-case names) and any bytes after the head of an answer."""
    buf = b""
    while b"\r\n\r\n" not in buf:
        if len(buf) > MAX_HEAD:
            raise OSError("the answer's head is too large")
        chunk = sock.recv(65536)
        if not chunk:
            raise OSError("the connection closed during the upgrade")
        buf += chunk
    head, rest = buf.split(b"\r\n\r\n", 1)
    status, headers = parse_head(head)
    return status, headers, rest


def parse_head(head: bytes) -> tuple[int, dict[str, str]]:
    """Status and headers (lower-case names; repeated ones joined with ", ") of an HTTP/1.x
    answer's head (without the blank line). Raises OSError when it is not one."""
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
        raise OSError(f"not an HTTP/1.1 answer: {lines[0][:80]!r}")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if not sep:
            continue
        name, value = name.strip().lower(), value.strip()
        headers[name] = f"{headers[name]}, {value}" if name in headers else value
    return int(parts[1]), headers


def _upgraded(headers: dict[str, str], key: bytes) -> bool:
    import binascii

    try:
        from _sha1 import sha1  # CPython's own: hashlib would load OpenSSL (~5 ms) for it
    except ImportError:
        from hashlib import sha1
    accept = binascii.b2a_base64(sha1(key + WS_GUID).digest(), newline=False).decode()
    return (headers.get("upgrade", "").lower() == "websocket"
            and "upgrade" in headers.get("connection", "").lower()
            and headers.get("sec-websocket-accept", "") == accept
            and not headers.get("sec-websocket-extensions"))


def _read_refusal_body(sock: _socket.socket, headers: dict[str, str], rest: bytes) -> bytes:
    """The body of a refused upgrade (Content-Length, chunked or up to the close; capped),
    de-chunked and decoded."""
    want = headers.get("content-length", "")
    chunked = "chunked" in headers.get("transfer-encoding", "").lower()
    limit = min(int(want), MAX_REFUSAL_BODY) if want.isdigit() and not chunked \
        else MAX_REFUSAL_BODY
    body = rest
    try:
        while len(body) < limit and not (chunked and _chunks_end(body)):
            chunk = sock.recv(65536)
            if not chunk:
                break
            body += chunk
    except OSError:
        pass
    if chunked:
        body = dechunk(body)
    return decoded(body[:limit], headers.get("content-encoding", ""))


def _chunks_end(body: bytes) -> bool:
    return body.startswith(b"0\r\n") or b"\r\n0\r\n" in body


def dechunk(data: bytes) -> bytes:
    """The payload of a whole (or cut) chunked body."""
    out, pos = [], 0
    while True:
        end = data.find(b"\r\n", pos)
        if end < 0:
            break
        try:
            size = int(data[pos:end].split(b";", 1)[0], 16)
        except ValueError:
            break
        if size == 0:
            break
        out.append(data[end + 2:end + 2 + size])
        pos = end + 2 + size + 2
    return b"".join(out)


def decoded(body: bytes, encoding: str) -> bytes:
    """A whole body in its Content-Encoding decoded (gzip, deflate); as it is otherwise."""
    decoder = content_decoder(encoding)
    if decoder is None:
        return body
    try:
        return decoder.decompress(body) + decoder.flush()
    except Exception:  # noqa: BLE001 - zlib.error: shown as it came
        return body


def content_decoder(encoding: str):  # noqa: ANN201 - a zlib decompress object or None
    """A decoder for a Content-Encoding of gzip or deflate (None for identity or another)."""
    name = encoding.strip().lower()
    if name not in ("gzip", "x-gzip", "deflate"):
        return None
    import zlib

    return zlib.decompressobj(zlib.MAX_WBITS | 32)  # gzip or zlib header, told apart
