"""The journal's lock: one turn, undo or redo at a time per repository.

The file data_dir/journal/<key>/lock holds on its first line the holder's process id, then
(once it let go, the index of unfinished turns complete) "indexed" and the journal folder's
mtime then: the next holder reads only the index when the folder still has that mtime.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Callable
from pathlib import Path

from ...base.errors import Cancelled

LOCK = "lock"
POLL_S = 0.05
SEAL = b"indexed"  # in the lock's first line: its last holder left the index complete


def wait(fd: int, stop: Callable[[], bool] | None) -> None:
    """Take the lock. With `stop`, the wait polls and gives up (Cancelled, naming the holder)
    once stop() is true; without it, it waits for as long as the other command holds it."""
    if stop is None:
        fcntl.flock(fd, fcntl.LOCK_EX)
        return
    while not _try_lock(fd):
        if stop():
            raise Cancelled(f"gave up waiting for the undo journal lock of this "
                            f"repository: {_holder(fd)} holds it",
                            hint="nothing was written; wait until that command "
                                 "finishes (or stop it), then run again",
                            waiting="journal lock")
        time.sleep(POLL_S)


def claim(fd: int) -> None:
    """Write who holds it, for a command that waits: the first word of the file (not truncated
    first: a truncate can wait for the file system's journal, and a longer number left behind
    is only read after the newline)."""
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)


def sealed(fd: int, folder: Path) -> bool:
    """Whether the lock's last holder let go with the index of unfinished turns complete (it
    wrote SEAL and the folder's mtime then) and nothing changed the folder since."""
    try:
        words = os.pread(fd, 64, 0).split(b"\n", 1)[0].split()
        return words[1:] == [SEAL, str(os.stat(folder).st_mtime_ns).encode()]
    except OSError:
        return False


def seal(fd: int, folder: Path) -> None:
    """Say in the lock that the index is complete, as of the folder's mtime now (not synced:
    if it is lost, the next recovery looks at every turn once)."""
    with contextlib.suppress(OSError):
        os.pwrite(fd, f"{os.getpid()} {SEAL.decode()} {os.stat(folder).st_mtime_ns}\n".encode(), 0)


def _try_lock(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _holder(fd: int) -> str:
    """Who holds the lock, as its holder wrote it (a process id)."""
    try:
        pid = int(os.pread(fd, 32, 0).split()[0])
    except (OSError, ValueError, IndexError):
        return "another spark-pair command"
    return f"another spark-pair command (process {pid})"
