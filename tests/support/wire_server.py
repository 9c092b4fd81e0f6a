"""A tiny HTTP server for the run tests, run as its own process on 127.0.0.1: it writes its
port on stdout, logs each request's line and headers (one JSON line each) to the file named by
argv[1], and answers every request the way argv[2] says:

  notfound   404 with a short JSON error body
  slowhead   waits argv[3] seconds, then closes without an answer
  gzip404    404 whose JSON error body is gzip-encoded
  chunked403 403 whose JSON error body is chunked (in two chunks)
  redirect   307 to the same path under /moved on this server (ws:// for a WebSocket upgrade,
             http:// otherwise): a same-origin move a client could follow with the key
It stops by itself after argv[4] seconds (default 60)."""

from __future__ import annotations

import gzip
import json
import socket
import sys
import threading
import time

LOG, MODE = sys.argv[1], sys.argv[2]
DELAY = float(sys.argv[3]) if len(sys.argv) > 3 else 0.0
LIFETIME = float(sys.argv[4]) if len(sys.argv) > 4 else 60.0
ERROR = json.dumps({"error": {"message": "no such route here", "type": "not_found"}}).encode()
lock = threading.Lock()


def serve(conn: socket.socket) -> None:
    with conn:
        conn.settimeout(LIFETIME)
        buf = b""
        while b"\r\n\r\n" not in buf:
            chunk = conn.recv(65536)
            if not chunk:
                return
            buf += chunk
        lines = buf.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
        with lock, open(LOG, "a") as log:
            log.write(json.dumps({"line": lines[0], "headers": lines[1:], "t": time.time()}) + "\n")
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


def main() -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    server.settimeout(LIFETIME)
    print(server.getsockname()[1], flush=True)
    end = time.monotonic() + LIFETIME
    while time.monotonic() < end:
        try:
            conn, _ = server.accept()
        except OSError:
            break
        threading.Thread(target=serve, args=(conn,), daemon=True).start()


if __name__ == "__main__":
    main()
