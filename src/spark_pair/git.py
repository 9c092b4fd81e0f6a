"""The one place spark-pair runs git. Every caller gets the finished process, or None when git
is missing, the folder is not a repository's, or git did not answer in time (never raises).
Blocking: callers on the event loop run it in a thread."""

from __future__ import annotations

import subprocess
from pathlib import Path

TIMEOUT_S = 20.0


def run_git(cwd: Path, *args: str, stdin: bytes | None = None, timeout: float = TIMEOUT_S,
            config: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes] | None:
    """`git [-c k=v ...] ARGS` in `cwd`, output captured as bytes."""
    cmd = ["git"]
    for key, value in (config or {}).items():
        cmd += ["-c", f"{key}={value}"]
    try:
        return subprocess.run([*cmd, *args], cwd=cwd, capture_output=True, timeout=timeout,
                              input=stdin)
    except (OSError, subprocess.SubprocessError):
        return None


def git_ok(cwd: Path, *args: str, **kw: object) -> bytes | None:
    """The stdout of a git command that succeeded, else None."""
    res = run_git(cwd, *args, **kw)  # type: ignore[arg-type]
    return res.stdout if res is not None and res.returncode == 0 else None
