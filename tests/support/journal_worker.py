"""Leaves journals killed at every disk step of an apply, an undo, a redo and a recovery.

    python journal_worker.py OUT    prints {"apply": steps, "undo": ..., "redo": ..., ...}

For each action and each step N (1 to its number of steps, and one more: not killed), OUT/
<action>-<N>/ holds a repository and a data folder made by setup() and the turns before the
action (an undo needs an applied turn, a redo an undone one, a recovery an apply killed just
before its last change to the repository), then the action run in a forked process that SIGKILLs
itself just before disk step N. A disk step is a call to os.write, os.fsync, os.replace,
os.rename, os.unlink, os.link, os.mkdir, os.rmdir, or os.open that may create a file. A killed
process loses nothing the kernel has, so fsync (still a step) writes nothing to the disk here:
what must be synced before what is tested apart (test_crash.py).
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

from spark_pair.edits.apply import apply_turn
from spark_pair.edits.journal import Journal
from spark_pair.edits.ops import Create, Delete, Hunk, Modify, Rename

CALLS = ("write", "fsync", "replace", "rename", "unlink", "link", "mkdir", "rmdir")


def setup(root: Path) -> None:
    """The tree before the turn."""
    root.mkdir(parents=True)
    (root / "a.txt").write_text("one\ntwo\nthree\n")
    (root / "b.sh").write_text("echo b\n")
    os.chmod(root / "b.sh", 0o755)
    (root / "r.txt").write_text("moved along\n")


def ops() -> list:
    """The turn: modify one file, create one in a new folder, delete one, rename one."""
    return [Modify("a.txt", [Hunk(None, None, None, None, [" one", "-two", "+TWO"])]),
            Create("new/c.txt", "c\n"), Delete("b.sh", lines=["echo b"]),
            Rename("r.txt", "moved/r.txt")]


def _count_steps(kill_at: int, log: list[str]) -> None:
    """From now on in this process: count the disk steps (logging each), SIGKILL before
    step `kill_at`."""
    def counted(fn, name):
        def wrapper(*args, **kwargs):
            if name == "open" and not (args[1] & os.O_CREAT):
                return fn(*args, **kwargs)
            log.append(f"{name} {args[0] if args else ''}")
            if len(log) == kill_at:
                os.kill(os.getpid(), signal.SIGKILL)
            return fn(*args, **kwargs)
        return wrapper

    for name in (*CALLS, "open"):
        setattr(os, name, counted(getattr(os, name), name))


def _in_child(fn, base: Path, kill_at: int, log_to: Path | None = None) -> int:
    """Run fn(repo, data) of `base` in a forked process killed before disk step `kill_at`;
    its wait status."""
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            log: list[str] = []
            _count_steps(kill_at, log)
            fn(base / "repo", base / "data")
            if log_to is not None:
                log_to.write_text("\n".join(log))
        except BaseException:
            code = 1
        os._exit(code)
    return os.waitpid(pid, 0)[1]


def _apply(root: Path, data: Path) -> None:
    apply_turn(root, ops(), journal=Journal(root, data))


def _recover(root: Path, data: Path) -> None:
    journal = Journal(root, data)
    with journal.locked():
        journal.recover()


def _before(action: str, base: Path, apply_log: list[str]) -> None:
    """The repository and journal just before `action`."""
    root, data = base / "repo", base / "data"
    setup(root)
    if action in ("undo", "redo"):
        _apply(root, data)
    if action == "redo":
        Journal(root, data).undo()
    if action == "recover":  # an apply killed before its last change to the repository
        last = max(i for i, step in enumerate(apply_log, 1)
                   if step.split(" ")[0] in ("replace", "unlink") and "/repo/" in step)
        status = _in_child(_apply, base, last)
        assert os.WIFSIGNALED(status), status


ACTIONS = {
    "apply": _apply,
    "undo": lambda root, data: Journal(root, data).undo(),
    "redo": lambda root, data: Journal(root, data).redo(),
    "recover": _recover,
}


def main() -> None:
    out = Path(sys.argv[1])
    os.fsync = lambda fd: None
    counts: dict[str, int] = {}
    apply_log: list[str] = []
    for action, run in ACTIONS.items():
        base = out / f"{action}-count"
        _before(action, base, apply_log)
        status = _in_child(run, base, -1, out / f"{action}.log")
        assert status == 0, (action, status)
        log = (out / f"{action}.log").read_text().splitlines()
        if action == "apply":
            apply_log = log
        counts[action] = len(log)
        for n in range(1, len(log) + 2):
            base = out / f"{action}-{n}"
            _before(action, base, apply_log)
            status = _in_child(run, base, n)
            if n <= len(log):
                assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, (
                    action, n, status)
            else:
                assert status == 0, (action, n, status)
    print(json.dumps(counts))


if __name__ == "__main__":
    main()
