"""The person's commit hooks, run as `git commit` runs them, on any git version: git names
where each would be (core.hooksPath honoured), only executable ones run, in the work tree's
top, with the commit's separate index (GIT_INDEX_FILE), stdin empty, in this process's group
(so Ctrl-C reaches a hook as it would under `git commit`). Blocking."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

from .errors import CommitError
from .git import run_git, run_quiet

HOOK_TIMEOUT_S = 600.0  # a pre-commit hook may run a test suite
TAIL_LINES = 8  # the last lines of a refusing hook's output that the message shows
NAMES = ("pre-commit", "prepare-commit-msg", "commit-msg", "post-commit")
_STOPPED = (-signal.SIGINT, -signal.SIGTERM, 128 + signal.SIGINT)  # Ctrl-C, a stop


class Hooks:
    """The hooks present. `notes`: what a hook after the commit left worth saying."""

    def __init__(self, root: Path, paths: dict[str, Path]) -> None:
        self.root, self.paths = root, paths
        self.notes: list[str] = []

    def run(self, name: str, env: dict[str, str], *args: str, must: bool = True) -> None:
        """Run hook `name`. Before the commit (`must`) a refusal, a timeout or a stop raises
        CommitError (reason "hook", or "interrupted" for Ctrl-C); after it (post-commit) they
        are noted, as the commit is made."""
        path = self.paths.get(name)
        if path is None:
            return
        what = None
        try:
            res = run_quiet([str(path), *args], self.root, b"", HOOK_TIMEOUT_S,
                            {**os.environ, **env}, own_session=False)
        except subprocess.TimeoutExpired:
            res, what = None, f"did not finish within {HOOK_TIMEOUT_S:g} s (it was stopped)"
        if res is None and what is None:
            what = f"could not be started ({path})"
        elif res is not None and res.returncode in _STOPPED:
            what = "was interrupted"
        if not must:
            if what is not None:
                self.notes.append(f"the {name} hook {what}; the commit is made")
            return
        if what is not None:
            raise CommitError(
                f"the {name} hook {what}, so nothing was committed",
                reason="interrupted" if what == "was interrupted" else "hook", hook=name,
                hint="the turn stays applied: commit it again, or by hand (git add, "
                     "git commit)")
        assert res is not None
        if res.returncode != 0:
            tail = _tail(res.stdout + res.stderr)
            raise CommitError(f"the {name} hook refused the commit (exit {res.returncode}), "
                              "so nothing was committed"
                              + (f"; its last lines:\n{tail}" if tail else ""),
                              reason="hook", hook=name,
                              hint="the turn stays applied: fix what the hook reports and "
                                   "commit again, or commit by hand (git add, git commit)")


def hooks(root: Path) -> Hooks:
    """Which of the commit's hooks the person has (one look: git names where each would be)."""
    res = run_git(root, "rev-parse", *(a for n in NAMES for a in ("--git-path", f"hooks/{n}")))
    paths = res.stdout.decode().splitlines() if res is not None and res.returncode == 0 else []
    if len(paths) != len(NAMES):
        raise CommitError("git did not say where the hooks are, so nothing was committed",
                          reason="git")
    found = {n: root / p for n, p in zip(NAMES, paths, strict=True)}
    return Hooks(root, {n: p for n, p in found.items()
                        if p.is_file() and os.access(p, os.X_OK)})


def _tail(out: bytes) -> str:
    lines = out.decode("utf-8", "replace").rstrip().splitlines()[-TAIL_LINES:]
    return "\n".join("    " + line for line in lines)
