"""The tools the real-diffs benchmark compares, each applying one text to a fresh copy of a
case's files: spark-pair (in this process, through the parse and apply functions that
`spark-pair run --apply` uses: the DiffParser of the turn, then apply_turn), `git apply`
strict and lenient, and GNU `patch --fuzz=2`."""

from __future__ import annotations

import contextlib
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

TOOLS = ("spark-pair", "git-apply", "git-apply-lenient", "patch-fuzz2")
LENIENT = ["--recount", "-C1", "--unidiff-zero", "--ignore-whitespace"]
GIT_ENV = {"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1", "HOME": "/nonexistent",
           "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@localhost",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@localhost",
           "PATH": "/usr/local/bin:/usr/bin:/bin"}


@dataclass
class Outcome:
    applied: bool
    files: dict[str, bytes | None] = field(default_factory=dict)  # path -> bytes (None: gone)
    cause: str = ""  # why it was refused (a class), empty when applied
    message: str = ""  # the first line of the tool's message
    seconds: float = 0.0


def git(root: Path, *args: str, timeout: float = 30) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=root, env=GIT_ENV, capture_output=True,
                          timeout=timeout)


def make_base(case_dir: Path, into: Path) -> Path:
    """A git repository holding the case's files at the base commit, committed."""
    root = into / "base"
    shutil.copytree(case_dir / "files", root) if (case_dir / "files").is_dir() \
        else root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base", "--allow-empty")
    return root


def fresh(base: Path, into: Path, name: str) -> Path:
    dst = into / name
    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(base, dst, symlinks=True)
    return dst


def snapshot(root: Path, paths: list[str]) -> dict[str, bytes | None]:
    out: dict[str, bytes | None] = {}
    for p in paths:
        f = root / p
        out[p] = f.read_bytes() if f.is_file() else None
    return out


def changed_paths(root: Path, base: Path) -> list[str]:
    """Paths that differ from the base copy (new and removed files included), outside .git."""
    def files(top: Path) -> dict[str, Path]:
        return {p.relative_to(top).as_posix(): p for p in top.rglob("*")
                if (p.is_file() or p.is_symlink()) and ".git" not in p.relative_to(top).parts}
    now, was = files(root), files(base)
    return sorted(p for p in now.keys() | was.keys()
                  if p not in now or p not in was or now[p].read_bytes() != was[p].read_bytes())


def run_external(tool: str, root: Path, text: str, timeout: float) -> Outcome:
    patch_file = root.parent / f"{tool}.diff"
    patch_file.write_text(text, encoding="utf-8", errors="surrogateescape")
    if tool == "patch-fuzz2":
        cmd = ["patch", "-p1", "--fuzz=2", "--batch", "--forward", "--no-backup-if-mismatch",
               "--reject-file=-", "-i", str(patch_file)]
    else:
        cmd = ["git", "apply", *(LENIENT if tool == "git-apply-lenient" else []),
               str(patch_file)]
    t0 = time.monotonic()
    try:
        done = subprocess.run(cmd, cwd=root, env=GIT_ENV, capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return Outcome(False, cause="timed out", seconds=timeout)
    secs = time.monotonic() - t0
    msg = (done.stderr or done.stdout).decode("utf-8", "replace").strip().splitlines()
    if done.returncode != 0:
        return Outcome(False, cause=f"exit {done.returncode}", message=(msg or [""])[0],
                       seconds=secs)
    return Outcome(True, snapshot(root, changed_paths(root, root.parent / "base")),
                   seconds=secs)


class Overtime(Exception):
    pass


@contextlib.contextmanager
def bounded(seconds: float) -> Iterator[None]:
    """Raise Overtime in this (main) thread once `seconds` have passed."""
    def ring(signum, frame):  # noqa: ARG001
        raise Overtime()
    old = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def run_spark(root: Path, text: str, timeout: float, data_dir: Path) -> Outcome:
    """Parse the reply as a turn does, then apply every operation (all accepted, as with
    --apply) through apply_turn; a refusal's cause is its error class and message shape."""
    from spark_pair.base.errors import SparkPairError
    from spark_pair.edits.apply import apply_turn
    from spark_pair.edits.journal import Journal
    from spark_pair.edits.parser import DiffParser

    t0 = time.monotonic()
    deadline = t0 + timeout
    try:
        with bounded(timeout + 1.0):
            parser = DiffParser()
            parser.feed(text)
            parser.close()
            ops = parser.operations()
            if not ops:
                return Outcome(False, cause="parse: the reply holds no unified diff",
                               message="the reply holds no unified diff",
                               seconds=time.monotonic() - t0)
            apply_turn(root, ops, journal=Journal(root, data_dir=data_dir),
                       stop=lambda: time.monotonic() > deadline)
    except Overtime:
        return Outcome(False, cause="timed out", seconds=time.monotonic() - t0)
    except SparkPairError as exc:
        first = exc.message.splitlines()[0] if exc.message else ""
        return Outcome(False, cause=f"{exc.kind}: {shape(first)}", message=first,
                       seconds=time.monotonic() - t0)
    except Exception as exc:  # a traceback a user would see: the worst refusal
        return Outcome(False, cause=f"CRASH {type(exc).__name__}", message=repr(exc)[:200],
                       seconds=time.monotonic() - t0)
    return Outcome(True, snapshot(root, changed_paths(root, root.parent / "base")),
                   seconds=time.monotonic() - t0)


_HUNK_NAME = re.compile(r"^.*? hunk @@ [^@]* @@:\s*")
_HUNK_OF = re.compile(r"the hunk @@ [^@]* @@ of \S+")
_LINE = re.compile(r"\([-+ ].*?\)(?= and |$)")
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"|`[^`]*`")
_PATHS = re.compile(r"\S+/\S+|\S+\.(?:py|rst|txt|cfg|toml|ini|ya?ml|json|md)\b")
_NUMBERS = re.compile(r"\d+")


def shape(message: str) -> str:
    """A refusal message without its particulars (paths, numbers, quoted text): its class."""
    s = _HUNK_NAME.sub("hunk: ", message)
    s = _HUNK_OF.sub("the hunk", s)
    s = _LINE.sub("(LINE)", s)
    s = _QUOTED.sub("'…'", s)
    s = _PATHS.sub("PATH", s)
    s = _NUMBERS.sub("N", s)
    return s[:110]
