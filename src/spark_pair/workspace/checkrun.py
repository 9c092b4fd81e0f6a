"""Running the configured check (`[review] check`, e.g. "pytest -q") against applied edits.

The command runs through the shell in the repository root, in its own process group, with
stdin closed and stderr merged into stdout. Output is handed over as it arrives (`on_output`)
and its tail is kept (bounded). A check that outlives `timeout_s`, or whose caller is
cancelled (Ctrl-C, the app quitting), is stopped with its whole process group: SIGTERM, then
SIGKILL after a grace period. Nothing here touches the user's files.
"""

from __future__ import annotations

import asyncio
import codecs
import os
import signal
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ..base.errors import redact

CHUNK = 8192
MAX_OUTPUT = 256 * 1024  # bytes of output kept (the tail)
GRACE_S = 2.0  # between SIGTERM and SIGKILL


@dataclass(frozen=True, slots=True)
class CheckResult:
    command: str
    exit_code: int | None  # None: it did not finish on its own (timed out, stopped, no start)
    duration_s: float
    output: str  # the tail of stdout and stderr, at most MAX_OUTPUT bytes
    timed_out: bool = False
    error: str = ""  # why it could not start

    @property
    def passed(self) -> bool:
        return self.exit_code == 0

    @property
    def shown(self) -> str:
        """The command as it may be shown or stored: a key written in it is ***."""
        return redact(self.command)

    def describe(self) -> str:
        took = f"{self.duration_s:.1f} s"
        if self.error:
            return f"check could not start: {self.error}"
        if self.timed_out:
            return f"check timed out after {took} and was stopped: {self.shown}"
        if self.passed:
            return f"check passed in {took}: {self.shown}"
        if self.exit_code is not None and self.exit_code < 0:
            return f"check killed by signal {-self.exit_code} after {took}: {self.shown}"
        return f"check failed (exit {self.exit_code}) in {took}: {self.shown}"


class _Tail:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.parts: deque[str] = deque()
        self.size = 0

    def add(self, text: str) -> None:
        self.parts.append(text)
        self.size += len(text)
        while self.size - len(self.parts[0]) >= self.limit:
            self.size -= len(self.parts.popleft())
        excess = self.size - self.limit
        if excess > 0:
            self.parts[0] = self.parts[0][excess:]
            self.size -= excess

    def text(self) -> str:
        return "".join(self.parts)


async def run_check(command: str, cwd: Path, *, timeout_s: float,
                    on_output: Callable[[str], None] | None = None,
                    env: Mapping[str, str] | None = None,
                    max_output: int = MAX_OUTPUT) -> CheckResult:
    """Run `command` in `cwd` and wait for it (at most `timeout_s`); never raises for the
    command's own failure. Cancelling the caller stops the process group, then re-raises."""
    start = time.monotonic()
    starting = asyncio.ensure_future(asyncio.create_subprocess_shell(
        command, cwd=cwd, stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        start_new_session=True, env=None if env is None else dict(env)))
    try:
        proc = await asyncio.shield(starting)
    except OSError as exc:
        return CheckResult(command, None, time.monotonic() - start, "", error=str(exc))
    except asyncio.CancelledError:
        # cancelled while the shell starts (it may already run its commands): let it start,
        # then stop its whole process group, as for a cancel later on
        await asyncio.shield(_stop_once_started(starting))
        raise
    tail = _Tail(max_output)
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def take(text: str) -> None:
        if text:
            tail.add(text)
            if on_output is not None:
                on_output(text)

    async def pump() -> None:
        assert proc.stdout is not None
        while chunk := await proc.stdout.read(CHUNK):
            take(decoder.decode(chunk))
        take(decoder.decode(b"", final=True))
        await proc.wait()

    timed_out = False
    try:
        await asyncio.wait_for(pump(), timeout_s)
    except TimeoutError:
        timed_out = True
        await _stop(proc)
    except BaseException:  # cancelled (or the output callback failed): stop it all first
        await asyncio.shield(_stop(proc))
        raise
    return CheckResult(command, None if timed_out else proc.returncode,
                       time.monotonic() - start, tail.text(), timed_out=timed_out)


async def _stop_once_started(starting: asyncio.Future[asyncio.subprocess.Process]) -> None:
    try:
        proc = await starting
    except OSError:
        return  # it never started
    await _stop(proc)


async def _stop(proc: asyncio.subprocess.Process) -> None:
    """SIGTERM to the check's process group, SIGKILL after GRACE_S if it is still there."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            pass
        try:
            await asyncio.wait_for(proc.wait(), GRACE_S)
            if sig == signal.SIGTERM:
                _kill_group(proc.pid)  # children that outlived the shell
            return
        except TimeoutError:
            continue


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
