"""The one place spark-pair runs git. Every caller gets the finished process, or None when git
is missing, the folder is not a repository's, or git did not answer in time (never raises).
Blocking: callers on the event loop run it in a thread."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path

TIMEOUT_S = 20.0
KILLED_S = 2.0  # how long a killed process's output is still read


def run_git(cwd: Path, *args: str, stdin: bytes | None = None, timeout: float = TIMEOUT_S,
            config: dict[str, str] | None = None, env: dict[str, str] | None = None
            ) -> subprocess.CompletedProcess[bytes] | None:
    """`git [-c k=v ...] ARGS` in `cwd`, output captured as bytes. `env`: variables set on top
    of this process's environment."""
    cmd = ["git"]
    for key, value in (config or {}).items():
        cmd += ["-c", f"{key}={value}"]
    try:
        return run_quiet([*cmd, *args], cwd, stdin, timeout,
                         None if env is None else {**os.environ, **env})
    except subprocess.SubprocessError:
        return None


def run_quiet(cmd: list[str], cwd: Path, stdin: bytes | None, timeout: float,
              env: dict[str, str] | None, *, own_session: bool = True
              ) -> subprocess.CompletedProcess[bytes] | None:
    """`cmd` with output captured, stdin `stdin` (else /dev/null). `own_session`: in a session
    of its own, so no terminal to ask on (a passphrase prompt fails at once instead of drawing
    over the screen and eating keys), and on timeout its whole process group is killed (a
    signing helper too); else (a hook) in this process's group, so Ctrl-C reaches it as under
    `git commit`. Raises subprocess.TimeoutExpired on timeout; None when it cannot start."""
    try:
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, start_new_session=own_session,
                                stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except OSError:
        return None
    try:
        out, err = proc.communicate(stdin, timeout=timeout)
    except BaseException:
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL) if own_session else proc.kill()
        with contextlib.suppress(subprocess.SubprocessError):
            proc.communicate(timeout=KILLED_S)  # (a child left holding the pipes: not waited)
        raise
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def git_ok(cwd: Path, *args: str, **kw: object) -> bytes | None:
    """The stdout of a git command that succeeded, else None."""
    res = run_git(cwd, *args, **kw)  # type: ignore[arg-type]
    return res.stdout if res is not None and res.returncode == 0 else None


def git_ok_later(cwd: Path, *args: str, timeout: float = TIMEOUT_S) -> Callable[[], bytes | None]:
    """`git_ok` in two steps: git starts now, the returned call waits for its stdout (None as
    for git_ok), so the caller can work while git runs."""
    try:
        proc = subprocess.Popen(["git", *args], cwd=cwd, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    except OSError:
        return lambda: None

    def answer() -> bytes | None:
        try:
            out, _ = proc.communicate(timeout=timeout)
        except subprocess.SubprocessError:
            proc.kill()
            proc.wait()
            return None
        return out if proc.returncode == 0 else None

    return answer
