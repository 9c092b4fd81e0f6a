"""Handing the terminal to the person's own programs ($VISUAL/$EDITOR, a pager) and back.

The app suspends (the program gets the real terminal) and resumes in the same state. Where
the app cannot suspend (tests, a web terminal), the program runs without the terminal.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from collections.abc import Mapping
from pathlib import Path

from textual.app import App, SuspendNotSupported

from ..base.errors import UsageError

NOT_FOUND = 127  # the exit status of a program that is not there (as a shell reports it)


def editor_argv(env: Mapping[str, str] | None = None) -> list[str]:
    env = os.environ if env is None else env
    return _argv(env.get("VISUAL") or env.get("EDITOR") or "vi", "$VISUAL / $EDITOR")


def pager_argv(setting: str, env: Mapping[str, str] | None = None) -> list[str]:
    env = os.environ if env is None else env
    return _argv(setting or env.get("PAGER") or "less -R", "[review] pager / $PAGER")


def _argv(command: str, where: str) -> list[str]:
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise UsageError(f"cannot read the command {command!r} ({exc})",
                         hint=f"fix {where}") from exc
    if not argv:
        raise UsageError("the command is empty", hint=f"set {where}")
    return argv


def run_program(app: App[object], argv: list[str], path: Path, cwd: Path) -> int:
    """Run `argv path` with the terminal handed over; its exit status (NOT_FOUND: no such
    program)."""
    try:
        with app.suspend():
            return _run(argv, path, cwd)
    except SuspendNotSupported:
        return _run(argv, path, cwd, own_terminal=False)


def _run(argv: list[str], path: Path, cwd: Path, own_terminal: bool = True) -> int:
    quiet = None if own_terminal else subprocess.DEVNULL  # (None: the terminal's own)
    try:
        return subprocess.run([*argv, str(path)], cwd=cwd, check=False, stdin=quiet,
                              stdout=quiet, stderr=quiet).returncode
    except FileNotFoundError:
        return NOT_FOUND
    except OSError:
        return 126
