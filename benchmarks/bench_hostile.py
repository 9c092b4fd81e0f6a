"""Memory and time of `spark-pair run` against hostile answers of about 1 GB.

    .venv/bin/python benchmarks/bench_hostile.py [--runs 1]

A small server in this process (127.0.0.1) answers every request with one hostile answer; each
case is a fresh `spark-pair run PROMPT --transport T` process in a scratch git repo. Printed per
case: the exit code, the run's peak memory (its maximum resident set, VmHWM), its wall time
and the first line it said on stderr. The limits that end these answers are in docs/headless.md
("Size limits"); a normal small run's peak is printed first, for comparison.

Cases: a gzip body inflating to 1 GB of SSE comment lines, and to 1 GB of zero bytes (one
line); 1 GB of well-formed chat deltas, uncompressed; a `data:` line that never ends; a 1 GB
WebSocket message; an error body that never ends.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import hashlib
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from collections.abc import Callable
from pathlib import Path

GB = 1 << 30
SSE_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n"


def inflating(piece: bytes, size: int) -> bytes:
    """A gzip body inflating to `piece` repeated up to `size` bytes."""
    z = zlib.compressobj(6, zlib.DEFLATED, 31)
    block = piece * ((1 << 20) // len(piece))
    return b"".join([*(z.compress(block) for _ in range(size // len(block))), z.flush()])


def read_request(conn: socket.socket) -> list[str]:
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = conn.recv(65536)
        if not chunk:
            raise OSError("closed")
        buf += chunk
    head, body = buf.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    length = next((int(h.split(":", 1)[1]) for h in lines[1:]
                   if h.lower().startswith("content-length:")), 0)
    while len(body) < length:  # read whole (closing with unread bytes resets the connection)
        body += conn.recv(65536)
    return lines


def answer_gzip(body: bytes) -> Callable[[socket.socket, list[str]], None]:
    def answer(conn: socket.socket, lines: list[str]) -> None:
        conn.sendall(SSE_HEAD + b"Content-Encoding: gzip\r\n\r\n" + body)
    return answer


def answer_deltas(conn: socket.socket, lines: list[str]) -> None:
    event = ("data: " + json.dumps({"id": "c", "object": "chat.completion.chunk",
                                    "choices": [{"index": 0, "delta": {"content": "x" * 1000}}]})
             + "\n\n").encode()
    block = event * ((1 << 20) // len(event))
    conn.sendall(SSE_HEAD + b"\r\n")
    for _ in range(GB // len(block)):
        conn.sendall(block)


def answer_endless_line(conn: socket.socket, lines: list[str]) -> None:
    conn.sendall(SSE_HEAD + b"\r\ndata: ")
    block = b"a" * (1 << 20)
    for _ in range(GB // len(block)):
        conn.sendall(block)


def answer_endless_error(conn: socket.socket, lines: list[str]) -> None:
    conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/html\r\n"
                 b"Transfer-Encoding: chunked\r\n\r\n")
    block = b"<p>" + b"x" * ((1 << 20) - 3)
    chunk = b"%x\r\n%s\r\n" % (len(block), block)
    for _ in range(GB // len(block)):
        conn.sendall(chunk)


def answer_ws_huge(conn: socket.socket, lines: list[str]) -> None:
    key = next(h.split(":", 1)[1].strip() for h in lines[1:]
               if h.lower().startswith("sec-websocket-key:"))
    accept = base64.b64encode(hashlib.sha1(
        (key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest())
    conn.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                 b"Connection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n" % accept)
    conn.sendall(bytes((0x81, 127)) + GB.to_bytes(8, "big"))
    block = b"x" * (1 << 20)
    for _ in range(GB // len(block)):
        conn.sendall(block)


class Server:
    """Answers every connection on 127.0.0.1 with `answer` (set per case)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.answer: Callable[[socket.socket, list[str]], None] | None = None
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            conn, _ = self.sock.accept()
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn, contextlib.suppress(OSError):
            lines = read_request(conn)
            if self.answer is not None:
                self.answer(conn, lines)


def cli() -> list[str]:
    script = Path(sys.executable).parent / "spark-pair"
    return [str(script)] if script.exists() else [
        sys.executable, "-c", "from spark_pair.entry import main; main()"]


def peak_mb(pid: int) -> float:
    """Process `pid`'s peak memory since its exec (VmHWM; a forked child's ru_maxrss would
    count the pages it started with, this process's)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def one_run(repo: Path, home: Path, base_url: str, transport: str
            ) -> tuple[int, float, float, str]:
    """(exit code, peak MB, seconds, first stderr line) of one run."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPARK_PAIR_")}
    env.update(SPARK_PAIR_HOME=str(home), SPARK_PAIR_BASE_URL=base_url,
               SPARK_PAIR_API_KEY="bench-key")
    with tempfile.TemporaryFile() as err:
        start = time.monotonic()
        proc = subprocess.Popen(cli() + ["run", "change it", "--transport", transport,
                                         "--timeout", "120"], cwd=repo, env=env,
                                stdout=subprocess.DEVNULL, stderr=err,
                                stdin=subprocess.DEVNULL)
        peak = 0.0
        while proc.poll() is None:  # VmHWM only grows: its last value is the peak
            with contextlib.suppress(OSError, ValueError):  # (exiting)
                peak = max(peak, peak_mb(proc.pid))
            time.sleep(0.01)
        took = time.monotonic() - start
        err.seek(0)
        said = [ln for ln in err.read().decode("utf-8", "replace").splitlines()
                if ln.startswith("spark-pair:") and "API key" not in ln]
    return proc.returncode, peak, took, said[0][:110] if said else ""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=1, help="runs per case (min / max shown)")
    args = ap.parse_args()
    server = Server()
    base_url = f"http://127.0.0.1:{server.port}"
    print("preparing the compressed bodies ...", flush=True)
    lines_body = inflating(b": " + b"k" * 1021 + b"\n", GB)
    zeros_body = inflating(b"\0" * 4096, GB)
    cases: list[tuple[str, str, Callable[[socket.socket, list[str]], None]]] = [
        (f"gzip, {len(lines_body) >> 10} KiB -> 1 GB of SSE comment lines", "chat",
         answer_gzip(lines_body)),
        (f"gzip, {len(zeros_body) >> 10} KiB -> 1 GB of zero bytes", "responses",
         answer_gzip(zeros_body)),
        ("1 GB of chat deltas, uncompressed", "chat", answer_deltas),
        ("a data: line of 1 GB", "responses", answer_endless_line),
        ("a WebSocket message of 1 GB", "ws", answer_ws_huge),
        ("an error body of 1 GB", "chat", answer_endless_error),
    ]
    with tempfile.TemporaryDirectory() as d:
        repo, home = Path(d) / "repo", Path(d) / "home"
        repo.mkdir()
        (repo / "a.py").write_text("x = 1\n")
        for git in (["init", "-q"], ["add", "."],
                    ["-c", "user.name=b", "-c", "user.email=b@b", "commit", "-q", "-m", "b"]):
            subprocess.run(["git", *git], cwd=repo, check=True, capture_output=True)
        from spark_pair.sim.process import SimProcess

        with SimProcess(tps=0, ttft_ms=0) as sim:
            sim.configure(default="--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n")
            normal = [one_run(repo, home, sim.base_url, "chat") for _ in range(args.runs)]
        print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        print(f"{'a normal small run':46} exit {normal[0][0]:3}  peak "
              f"{statistics.median(r[1] for r in normal):6.0f} MB  "
              f"{statistics.median(r[2] for r in normal):5.1f} s")
        for name, transport, answer in cases:
            server.answer = answer
            results = [one_run(repo, home, base_url, transport) for _ in range(args.runs)]
            peaks = [r[1] for r in results]
            times = [r[2] for r in results]
            print(f"{name + ' (' + transport + ')':46} exit {results[0][0]:3}  peak "
                  f"{min(peaks):6.0f}-{max(peaks):.0f} MB  {min(times):5.1f}-{max(times):.1f} s"
                  f"\n    {results[0][3]}")


if __name__ == "__main__":
    main()
