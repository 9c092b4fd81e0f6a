"""Run a command on a pseudo-terminal of a given size and read what it draws (bounded)."""

from __future__ import annotations

import fcntl
import os
import select
import struct
import subprocess
import termios
import time


class PtyProcess:
    def __init__(self, args: list[str], *, cwd: str, env: dict[str, str], cols: int = 100,
                 rows: int = 30) -> None:
        self.master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        self.proc = subprocess.Popen(args, cwd=cwd, env={**env, "TERM": "xterm-256color"},
                                     stdin=slave, stdout=slave, stderr=slave,
                                     start_new_session=True)
        os.close(slave)
        self.output = b""
        self.t0 = time.monotonic()

    def read_until(self, needle: str, timeout: float = 20.0) -> float:
        """Seconds from the start until `needle` was drawn (AssertionError on timeout)."""
        deadline = time.monotonic() + timeout
        while needle.encode() not in self.output:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"{needle!r} was not drawn; got {self.text()[-2000:]!r}")
            ready, _, _ = select.select([self.master], [], [], min(left, 0.2))
            if ready:
                try:
                    chunk = os.read(self.master, 65536)
                except OSError:
                    chunk = b""
                if not chunk and self.proc.poll() is not None:
                    raise AssertionError(f"exited before drawing {needle!r}: "
                                         f"{self.text()[-2000:]!r}")
                self.output += chunk
        return time.monotonic() - self.t0

    def text(self) -> str:
        return self.output.decode("utf-8", "replace")

    def send(self, data: str) -> None:
        os.write(self.master, data.encode())

    def wait(self, timeout: float = 20.0) -> int:
        deadline = time.monotonic() + timeout
        while self.proc.poll() is None and time.monotonic() < deadline:
            ready, _, _ = select.select([self.master], [], [], 0.1)
            if ready:
                try:
                    self.output += os.read(self.master, 65536)
                except OSError:
                    break
        return self.proc.wait(timeout=max(0.1, deadline - time.monotonic()))

    def close(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, 15)
            self.proc.wait(timeout=10)
        os.close(self.master)
