"""A hostile HTTP server for the run tests, run as its own process on 127.0.0.1: it writes its
port on stdout and answers every request (a WebSocket upgrade too) with HTTP argv[1] and an
HTML error page whose body is argv[2] times the piece argv[3] (`<!--` by default: comments
that never close, which a backtracking tag stripper takes quadratic time over). It stops by
itself after argv[4] seconds (default 60)."""

from __future__ import annotations

import socket
import sys

STATUS = int(sys.argv[1])
BODY = (b"<!DOCTYPE html><html><head><title>Bad gateway</title></head><body>"
        + (sys.argv[3] if len(sys.argv) > 3 else "<!--").encode() * int(sys.argv[2]))
LIFETIME = float(sys.argv[4]) if len(sys.argv) > 4 else 60.0


def serve(conn: socket.socket) -> None:
    with conn:
        conn.settimeout(LIFETIME)
        buf = b""
        while b"\r\n\r\n" not in buf:
            chunk = conn.recv(65536)
            if not chunk:
                return
            buf += chunk
        try:
            conn.sendall(b"HTTP/1.1 %d Error\r\nContent-Type: text/html\r\n"
                         b"Content-Length: %d\r\nConnection: close\r\n\r\n%s"
                         % (STATUS, len(BODY), BODY))
        except OSError:
            return  # the client hung up before the whole page was out


def main() -> None:
    from accept_loop import serve_forever  # (beside this file: run as a script)

    serve_forever(serve, LIFETIME)


if __name__ == "__main__":
    main()
