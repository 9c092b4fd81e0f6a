"""A process that applies one 10-file turn and, if asked, SIGKILLs itself midway.

    python crash_worker.py ROOT DATA_DIR count     apply fully; print the number of disk steps
    python crash_worker.py ROOT DATA_DIR kill N    SIGKILL this process just before disk step N
    python crash_worker.py serve                   per stdin line "ROOT<TAB>DATA_DIR<TAB>kill N"
                                                   a forked child runs `kill N`; for
                                                   "...<TAB>after S" it applies and is SIGKILLed
                                                   S seconds after it began; its exit status
                                                   (-9: killed) is printed

`serve` loads the modules once for many kill points: each child is a process of its own,
SIGKILLed midway as a fresh one is (a fresh process spent about 60 ms of CPU importing them).

A disk step is a call to os.write, os.fsync, os.replace, os.unlink, os.mkdir or os.rmdir.
"""

from __future__ import annotations

import os
import signal
import sys
import time
import traceback
from pathlib import Path

from spark_pair.edits.apply import apply_turn
from spark_pair.edits.journal import Journal
from spark_pair.edits.ops import Create, Delete, Hunk, Modify, Rename, content_hash

BODY = "".join(f"line {i} of the file\n" for i in range(1, 41))


def setup(root: Path) -> None:
    """The tree before the turn."""
    (root / "pkg").mkdir(parents=True)
    for i in range(4):
        (root / "pkg" / f"mod{i}.py").write_text(BODY)
    (root / "crlf.txt").write_bytes(BODY.replace("\n", "\r\n").encode())
    (root / "old.txt").write_text("to be deleted\n")
    (root / "ren1.txt").write_text(BODY)
    (root / "ren2.sh").write_text("#!/bin/sh\necho hi\n")
    os.chmod(root / "ren2.sh", 0o755)


def edit(n: int) -> Hunk:
    return Hunk(n, None, None, None, [f" line {n} of the file", f"-line {n + 1} of the file",
                                      f"+line {n + 1} EDITED", f"+extra line {n}"])


def ops() -> list:
    """The turn: modify 5, create 3, delete 1, rename 2 (one with edits)."""
    base = content_hash(BODY.encode())
    out = [Modify(f"pkg/mod{i}.py", [edit(3 + i), edit(30)], base) for i in range(4)]
    out.append(Modify("crlf.txt", [edit(10)]))
    out += [Create("pkg/new1.py", "print('one')\n"), Create("new/dir/two.txt", "two\n"),
            Create("three.md", "# three\n")]
    out.append(Delete("old.txt", content_hash(b"to be deleted\n")))
    out += [Rename("ren1.txt", "moved/ren1.txt", [edit(20)]), Rename("ren2.sh", "bin/ren2.sh")]
    return out


def main() -> None:
    if sys.argv[1:] == ["serve"]:
        serve()
        return
    steps, seconds = apply_killed(Path(sys.argv[1]), Path(sys.argv[2]),
                                  int(sys.argv[4]) if sys.argv[3] == "kill" else -1)
    print(steps, seconds, flush=True)


def serve() -> None:
    """One forked child per kill point read from stdin, until stdin ends."""
    for line in sys.stdin:
        root, data, how = line.rstrip("\n").split("\t")
        mode, _, value = how.partition(" ")
        pid = os.fork()
        if pid == 0:  # the child: this process's only thread, so the fork is clean
            code = 1
            try:
                apply_killed(Path(root), Path(data), int(value) if mode == "kill" else -1)
                code = 0
            except BaseException:
                traceback.print_exc()  # (on stderr, which the test shows when it fails)
            finally:
                sys.stderr.flush()
                os._exit(code)
        if mode == "after":
            time.sleep(float(value))
            os.kill(pid, signal.SIGKILL)  # (not waited for yet: still this process's child)
        _, status = os.waitpid(pid, 0)
        print(os.waitstatus_to_exitcode(status), flush=True)


def apply_killed(root: Path, data: Path, kill_at: int) -> tuple[int, float]:
    """Apply the turn, SIGKILLed just before disk step `kill_at`: its steps and seconds."""
    journal = Journal(root, data)
    steps = [0]

    def counted(fn):
        def wrapper(*args, **kwargs):
            steps[0] += 1
            if steps[0] == kill_at:
                os.kill(os.getpid(), signal.SIGKILL)
            return fn(*args, **kwargs)
        return wrapper

    for name in ("write", "fsync", "replace", "unlink", "mkdir", "rmdir"):
        setattr(os, name, counted(getattr(os, name)))
    start = time.perf_counter()
    apply_turn(root, ops(), journal=journal)
    return steps[0], time.perf_counter() - start


if __name__ == "__main__":
    main()
