"""Real git repositories for the commit tests: git run with no machine-wide configuration, a
person's identity, and the simulator's replies to the edit and to the commit-message request."""

from __future__ import annotations

import os
import selectors
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from support.runs import A_DIFF

MESSAGE = "Use an f-string in greet\n\nShorter and reads better."
OTHER = "first\n"


def replies(message: str = MESSAGE) -> list[dict[str, str]]:
    return [{"match": "Write the commit message", "text": message},
            {"match": "FSTRING", "text": A_DIFF}]


def git(root: Path, *args: str, env: dict[str, str] | None = None) -> str:
    res = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=30,
                         env={**os.environ, **GIT_ENV, **(env or {})})
    assert res.returncode == 0, res.stderr
    return res.stdout


# the tests' git reads no configuration of this machine's (a global hooksPath, signing)
GIT_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}


def identity(root: Path) -> Path:
    """Give the repository a person's name and e-mail (the author of its commits)."""
    git(root, "config", "user.name", "Pat Person")
    git(root, "config", "user.email", "pat@example.invalid")
    return root


def watch_one(root: Path, env: dict[str, str], once_watching: Callable[[], None]
              ) -> tuple[str, str]:
    """`spark-pair watch --apply --commit --json` in `root` until its first `end` line (at most
    60 s): `once_watching` runs when it says it watches (the person saves a comment); then
    Ctrl-C. Its stdout and stderr."""
    from support.runs import cli

    proc = subprocess.Popen(cli() + ["watch", "--apply", "--commit", "--json"], cwd=root,
                            env={**env, **GIT_ENV}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    out, err, saved = "", "", False
    try:
        assert proc.stdout is not None and proc.stderr is not None
        deadline = time.monotonic() + 60
        with selectors.DefaultSelector() as sel:
            sel.register(proc.stdout, selectors.EVENT_READ, "out")
            sel.register(proc.stderr, selectors.EVENT_READ, "err")
            while '"type":"end"' not in out and time.monotonic() < deadline:
                for key, _ in sel.select(timeout=1.0):  # raw reads: nothing hides in a buffer
                    chunk = os.read(key.fileobj.fileno(), 65536).decode()  # type: ignore[union-attr]
                    if key.data == "out":
                        out += chunk
                    else:
                        err += chunk
                if not saved and "watching" in err:
                    once_watching()
                    saved = True
        proc.send_signal(2)
        err += proc.communicate(timeout=30)[1]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return out, err
