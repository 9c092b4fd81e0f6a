"""A hostile HTTP server for doctor's tests, run as its own process on 127.0.0.1: it writes its
port on stdout and answers with a body that does not end (a Content-Length of 8 GiB, written
until the client hangs up). argv[1] says where:
    models      GET /v1/models: 200 application/json, `{"data": [` then spaces
    post-error  every POST (and a WebSocket upgrade): 500 text/plain
    post-json   every POST: 200 application/json
    post-sse    every POST: 200 text/event-stream, one `data:` line that never ends
Elsewhere GET /v1/models lists argv[2] (the model). It stops by itself after 60 s."""

from __future__ import annotations

import json
import socket
import sys

MODE = sys.argv[1]
MODEL = sys.argv[2] if len(sys.argv) > 2 else "m"
LIFETIME = 60.0
ENDLESS = 8 << 30
PIECE = 1 << 20


def answer(conn: socket.socket, status: int, ctype: str, head: bytes, fill: bytes) -> None:
    conn.sendall(b"HTTP/1.1 %d X\r\nContent-Type: %s\r\nContent-Length: %d\r\n"
                 b"Connection: close\r\n\r\n%s" % (status, ctype.encode(), ENDLESS, head))
    chunk = fill * PIECE
    sent = len(head)
    while sent < ENDLESS:
        conn.sendall(chunk)
        sent += len(chunk)


def serve(conn: socket.socket) -> None:
    with conn:
        conn.settimeout(LIFETIME)
        buf = b""
        while b"\r\n\r\n" not in buf:
            chunk = conn.recv(65536)
            if not chunk:
                return
            buf += chunk
        method, path = buf.split(b" ", 2)[:2]
        try:
            if path.endswith(b"/v1/models") and MODE != "models":
                body = json.dumps({"object": "list", "data": [{"id": MODEL}]}).encode()
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                             b"Content-Length: %d\r\nConnection: close\r\n\r\n%s"
                             % (len(body), body))
            elif path.endswith(b"/v1/models"):
                answer(conn, 200, "application/json", b'{"data": [', b" ")
            elif MODE == "post-json" and method == b"POST":
                answer(conn, 200, "application/json", b'{"output": [', b" ")
            elif MODE == "post-sse" and method == b"POST":
                answer(conn, 200, "text/event-stream", b"data: ", b"x")
            else:
                answer(conn, 500, "text/plain", b"", b"x")
        except OSError:
            return  # the client hung up: what it read is all it holds


def main() -> None:
    from accept_loop import serve_forever  # (beside this file: run as a script)

    serve_forever(serve, LIFETIME)


if __name__ == "__main__":
    main()
