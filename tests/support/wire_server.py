"""A tiny HTTP server for the run tests, run as its own process on 127.0.0.1: it writes its
port on stdout, logs each request's line and headers (one JSON line each) to the file named by
argv[1], and answers every request the way argv[2] says:

  notfound   404 with a short JSON error body
  slowhead   waits argv[3] seconds, then closes without an answer
  gzip404    404 whose JSON error body is gzip-encoded
  chunked403 403 whose JSON error body is chunked (in two chunks)
  redirect   307 to the same path under /moved on this server (ws:// for a WebSocket upgrade,
             http:// otherwise): a same-origin move a client could follow with the key
and in hostile ways (a broken or malicious server):
  gzipbomb   an event stream, gzip-encoded, that inflates to 128 MiB of zero bytes (one line)
  gziplines  the same, inflating to 128 MiB of SSE comment lines (1 KiB each)
  endlessline  an event stream whose one `data:` line never ends (until the client leaves)
  endless400   a 400 whose body never ends
  wshuge     a WebSocket whose first message is 9 MiB of text (wshugefirst: sent before the
             client's request)
  wsbinary   a WebSocket whose messages are binary frames (JSON inside)
  and breaking the protocol (each after the request is read; a stream of text first, for
  the WebSocket ones, where the name says `mid`):
  badchunk   an event stream whose chunk size is no number (negchunk: a negative one)
  twolengths an event stream with two Content-Length headers that disagree
  nothttp   an answer that is no HTTP at all (an SSH banner)
  wsmasked   a WebSocket frame from the server that is masked
  wsrsv      a WebSocket frame with a reserved bit set (no extension was agreed)
  wsbadutf8  a WebSocket text frame that is not UTF-8
  wsbadclose a WebSocket close frame with a code no endpoint may send (999)
  wsdrop     a WebSocket that closes (no close frame) after the first delta: a real drop
  plainweb   what a plain web server says to a POST: HTTP 501 with an HTML page
  reply      a whole reply on every transport (chat, responses, WebSocket): the text and the
             raw usage JSON come from the JSON file named by argv[5] ({"text", "usage"})
It stops by itself after argv[4] seconds (default 60)."""

from __future__ import annotations

import base64
import contextlib
import gzip
import hashlib
import json
import socket
import sys
import threading
import time
import zlib

LOG, MODE = sys.argv[1], sys.argv[2]
DELAY = float(sys.argv[3]) if len(sys.argv) > 3 else 0.0
LIFETIME = float(sys.argv[4]) if len(sys.argv) > 4 else 60.0
OPTIONS = json.loads(open(sys.argv[5]).read()) if len(sys.argv) > 5 else {}
ERROR = json.dumps({"error": {"message": "no such route here", "type": "not_found"}}).encode()
lock = threading.Lock()


def serve(conn: socket.socket) -> None:
    with conn, contextlib.suppress(OSError):  # a client that leaves ends its answer
        conn.settimeout(LIFETIME)
        buf = b""
        while b"\r\n\r\n" not in buf:
            chunk = conn.recv(65536)
            if not chunk:
                return
            buf += chunk
        head, body = buf.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        length = next((int(h.split(":", 1)[1]) for h in lines[1:]
                       if h.lower().startswith("content-length:")), 0)
        if length > len(body):  # read whole: a socket closed with unread bytes resets its
            read_exact(conn, length - len(body))  # connection (and cuts the answer short)
        with lock, open(LOG, "a") as log:
            log.write(json.dumps({"line": lines[0], "headers": lines[1:], "t": time.time()}) + "\n")
        if MODE in HOSTILE:
            HOSTILE[MODE](conn, lines)
            return
        if MODE == "slowhead":
            time.sleep(DELAY)
            return
        if MODE == "chunked403":
            half = len(ERROR) // 2
            conn.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Type: application/json\r\n"
                         b"Transfer-Encoding: chunked\r\n\r\n"
                         + b"%x\r\n%s\r\n" % (half, ERROR[:half])
                         + b"%x\r\n%s\r\n0\r\n\r\n" % (len(ERROR) - half, ERROR[half:]))
            time.sleep(DELAY)  # the connection stays open: the body's end is the last chunk
            return
        if MODE == "redirect":
            upgrade = any(h.lower().startswith("upgrade:") for h in lines[1:])
            path = lines[0].split(" ")[1]
            host = conn.getsockname()
            location = f"{'ws' if upgrade else 'http'}://{host[0]}:{host[1]}/moved{path}"
            conn.sendall(b"HTTP/1.1 307 Temporary Redirect\r\nLocation: %s\r\n"
                         b"Content-Length: 0\r\nConnection: close\r\n\r\n"
                         % location.encode())
            return
        body, extra = ERROR, b""
        if MODE == "gzip404":
            body, extra = gzip.compress(ERROR), b"Content-Encoding: gzip\r\n"
        conn.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\n" + extra
                     + b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body)


def inflating(piece: bytes, size: int) -> bytes:
    """A gzip body that inflates to `piece` repeated up to `size` bytes."""
    z = zlib.compressobj(6, zlib.DEFLATED, 31)
    out = [z.compress(piece * (size // len(piece) // 64)) for _ in range(64)]
    return b"".join([*out, z.flush()])


SSE_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n"


def gzip_stream(piece: bytes):  # noqa: ANN201 - a mode's answer
    def answer(conn: socket.socket, lines: list[str]) -> None:
        conn.sendall(SSE_HEAD + b"Content-Encoding: gzip\r\n\r\n"
                     + inflating(piece, 128 << 20))
    return answer


def endless_line(conn: socket.socket, lines: list[str]) -> None:
    conn.sendall(SSE_HEAD + b"\r\ndata: ")
    block = b"a" * 65536
    while True:  # until the client leaves
        conn.sendall(block)


def endless_400(conn: socket.socket, lines: list[str]) -> None:
    conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\n"
                 b"Transfer-Encoding: chunked\r\n\r\n" + b"%x\r\n%s\r\n" % (len(ERROR), ERROR))
    block = b"x" * 65536
    while True:
        conn.sendall(b"%x\r\n%s\r\n" % (len(block), block))


def upgrade(conn: socket.socket, lines: list[str], read: bool = True) -> None:
    """Accept a WebSocket upgrade and (`read`) read the client's first message."""
    key = next(h.split(":", 1)[1].strip() for h in lines[1:]
               if h.lower().startswith("sec-websocket-key:"))
    accept = base64.b64encode(hashlib.sha1(
        (key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest()).decode()
    conn.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                 b"Connection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n" % accept.encode())
    if not read:
        return
    head = read_exact(conn, 2)
    size = head[1] & 0x7F
    if size == 126:
        size = int.from_bytes(read_exact(conn, 2), "big")
    elif size == 127:
        size = int.from_bytes(read_exact(conn, 8), "big")
    read_exact(conn, 4 + size)  # the mask and the payload


def read_exact(conn: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        if not chunk:
            raise OSError("closed")
        data += chunk
    return data


def frame(payload: bytes, opcode: int = 0x1) -> bytes:
    n = len(payload)
    if n < 126:
        head = bytes((0x80 | opcode, n))
    elif n < 1 << 16:
        head = bytes((0x80 | opcode, 126)) + n.to_bytes(2, "big")
    else:
        head = bytes((0x80 | opcode, 127)) + n.to_bytes(8, "big")
    return head + payload


def ws_huge(conn: socket.socket, lines: list[str], first: bool = False) -> None:
    upgrade(conn, lines, read=not first)
    conn.sendall(frame(b"x" * (9 << 20)))
    time.sleep(DELAY)


def ws_binary(conn: socket.socket, lines: list[str]) -> None:
    upgrade(conn, lines)
    for event in responses_events("--- a/x\n", '{"input_tokens": 1, "output_tokens": 1}'):
        conn.sendall(frame(event.encode(), opcode=0x2))
    time.sleep(DELAY)


def responses_events(text: str, usage: str) -> list[str]:
    events = [json.dumps({"type": "response.created", "response": {"id": "resp_1"}})]
    events += [json.dumps({"type": "response.output_text.delta", "delta": line})
               for line in text.splitlines(keepends=True)]
    events.append('{"type": "response.completed", "response": {"id": "resp_1", '
                  f'"status": "completed", "usage": {usage}}}}}')
    return events


def chat_events(text: str, usage: str) -> list[str]:
    chunk = {"id": "c1", "object": "chat.completion.chunk", "choices": []}
    events = [json.dumps({**chunk, "choices": [{"index": 0, "delta": {"content": line}}]})
              for line in text.splitlines(keepends=True)]
    events.append(json.dumps({**chunk, "choices": [{"index": 0, "delta": {},
                                                     "finish_reason": "stop"}]}))
    events.append('{"id": "c1", "object": "chat.completion.chunk", "choices": [], '
                  f'"usage": {usage}}}')
    return events


def reply(conn: socket.socket, lines: list[str]) -> None:
    text, usage = OPTIONS["text"], OPTIONS["usage"]
    if any(h.lower().startswith("upgrade:") for h in lines[1:]):
        upgrade(conn, lines)
        for event in responses_events(text, usage):
            conn.sendall(frame(event.encode()))
        time.sleep(DELAY)
        return
    chat = "/chat/completions" in lines[0]
    events = chat_events(text, usage) if chat else responses_events(text, usage)
    body = "".join(f"data: {e}\n\n" for e in events) + ("data: [DONE]\n\n" if chat else "")
    conn.sendall(SSE_HEAD + b"\r\n" + body.encode())


def broken_http(head: bytes, body: bytes = b"", hold: bool = True):  # noqa: ANN201
    """An answer of `head` and `body`; `hold`: the connection stays open for DELAY s after."""
    def answer(conn: socket.socket, lines: list[str]) -> None:
        conn.sendall(head + b"\r\n" + body)
        if hold:
            time.sleep(DELAY)
    return answer


EVENT = b'data: {"type": "response.created", "response": {"id": "resp_1"}}\n\n'
CHUNKED = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n"
PLAIN_501 = (b"<!DOCTYPE HTML>\n<html><head><title>Error response</title></head><body>"
             b"<h1>Error response</h1><p>Error code: 501</p>"
             b"<p>Message: Unsupported method ('POST').</p></body></html>\n")


def ws_broken(first: bytes):  # noqa: ANN201 - a mode's answer
    """After the upgrade and the client's request: a delta, then `first` (b"": close)."""
    def answer(conn: socket.socket, lines: list[str]) -> None:
        if not any(h.lower().startswith("upgrade:") for h in lines[1:]):
            broken_http(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n"
                        b"Connection: close\r\n", hold=False)(conn, lines)
            return
        upgrade(conn, lines)
        conn.sendall(frame(json.dumps({"type": "response.created",
                                       "response": {"id": "resp_1"}}).encode())
                     + frame(b'{"type": "response.output_text.delta", "delta": "--- a/x"}'))
        if first:
            conn.sendall(first)
            time.sleep(DELAY)
    return answer


BROKEN = {
    "badchunk": broken_http(CHUNKED, b"%x\r\n%s\r\nzz\r\nabc\r\n" % (len(EVENT), EVENT)),
    "negchunk": broken_http(CHUNKED, b"%x\r\n%s\r\n-5\r\nabc\r\n" % (len(EVENT), EVENT)),
    "twolengths": broken_http(SSE_HEAD + b"Content-Length: 10\r\nContent-Length: 20\r\n",
                              EVENT),
    "nothttp": lambda conn, lines: conn.sendall(b"SSH-2.0-OpenSSH_9.6\r\n\r\n"),
    "wsmasked": ws_broken(bytes((0x81, 0x80 | 4)) + b"\0\0\0\0" + b"abcd"),
    "wsrsv": ws_broken(bytes((0x81 | 0x40, 2)) + b"{}"),
    "wsbadutf8": ws_broken(frame(b'{"type": "\xff\xfe"}')),
    "wsbadclose": ws_broken(frame((999).to_bytes(2, "big") + b"bye", opcode=0x8)),
    "wsdrop": ws_broken(b""),
    "plainweb": broken_http(b"HTTP/1.0 501 Unsupported method ('POST')\r\nServer: SimpleHTTP/0.6"
                            b"\r\nContent-Type: text/html;charset=utf-8\r\nContent-Length: %d"
                            b"\r\nConnection: close\r\n" % len(PLAIN_501), PLAIN_501, hold=False),
}

HOSTILE = {**BROKEN, "gzipbomb": gzip_stream(b"\0" * 4096),
           "gziplines": gzip_stream(b": " + b"k" * 1021 + b"\n"),
           "endlessline": endless_line, "endless400": endless_400, "wshuge": ws_huge,
           "wshugefirst": lambda conn, lines: ws_huge(conn, lines, first=True),
           "wsbinary": ws_binary, "reply": reply}


def main() -> None:
    from accept_loop import serve_forever  # (beside this file: run as a script)

    serve_forever(serve, LIFETIME)


if __name__ == "__main__":
    main()
