"""How a headless run starts: its options, its -f paths, and the whole run with its stops.

A one-shot `spark-pair run` pays its start-up on every call: the modules a run needs only for
the reply (the apply step, the journal, the request log) load once its request is out, and a
run starts no file watcher (headless.runner).
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..base.errors import UsageError

MAX_FOLDER_FILES = 200


@dataclass(slots=True)
class RunOptions:
    """What a headless run was asked to do (flags and the prompt)."""

    prompt: str
    files: list[str] = field(default_factory=list)
    apply: bool = False
    allow_delete: bool = False
    allow_rename: bool = False
    json: bool = False
    deltas: bool = False
    timeout: float | None = None
    overrides: dict[str, str] = field(default_factory=dict)
    cwd: Path | None = None
    meter: bool = True  # the one-line meter on stderr (text mode)
    env: dict[str, str] | None = None
    prewarm: bool = False  # open the WebSocket while the run starts up
    ask: bool = False  # a question (AI? comment): the prose reply is the answer
    # called with the exit code once the result is out, the files and the journal are
    # written and the request record is stored; it does not return (the command's quick
    # exit: no graceful close of the connection, the watcher or the request log)
    leave: Callable[[int], None] | None = None
    # when the run began (time.monotonic; the process's start for the command): --timeout
    # and the JSON lines' times count from here
    started: float | None = None
    # choose files by itself besides `files` (when [context] auto is on too)
    auto_context: bool = True


def flag_overrides(base_url: str | None, model: str | None, transport: str | None
                   ) -> dict[str, str]:
    """The flags given on the command line, as config overrides ("section.field" -> value)."""
    out = {"model.base_url": base_url, "model.name": model, "session.transport": transport}
    return {k: v for k, v in out.items() if v}


def repo_paths(root: Path, cwd: Path, files: list[str]) -> list[str]:
    """-f paths (relative to cwd, or absolute) as repo paths, a folder as the files under it;
    anything outside the repository is refused."""
    real_root = root.resolve()
    out = []
    for name in files:
        full = Path(os.path.abspath(cwd / name))
        full = full.resolve() if full.exists() else full
        try:
            rel = full.relative_to(real_root).as_posix()
        except ValueError:
            raise UsageError(f"-f {name}: outside the repository {root}",
                             hint="only files inside the repository go into the context") from None
        if rel == ".git" or rel.startswith(".git/"):
            raise UsageError(f"-f {name}: not a file of the repository",
                             hint="name files inside the repository, not .git")
        if full.is_dir():
            out.extend(_files_under(root, rel, name))
        else:
            out.append(rel)
    return list(dict.fromkeys(out))


def _files_under(root: Path, rel: str, name: str) -> list[str]:
    """The listed (not ignored) files under a folder given to -f."""
    from ..workspace.files import list_files

    prefix = "" if rel in ("", ".") else rel + "/"
    found = [f for f in list_files(root) if f.startswith(prefix)]
    if not found:
        raise UsageError(f"-f {name}: the folder holds no files spark-pair may read",
                         hint="ignored files (.gitignore) are left out; name files instead")
    if len(found) > MAX_FOLDER_FILES:
        raise UsageError(
            f"-f {name}: the folder holds {len(found)} files (limit {MAX_FOLDER_FILES})",
            hint="name a smaller folder or the files themselves",
        )
    return found


class Terminated(KeyboardInterrupt):
    """SIGTERM stopped a run before its event loop's handler was in place."""


class _Stops:
    """Ctrl-C and SIGTERM before a run's event loop handles them (headless.runner). From the
    process's start (`hold`) until the run begins (`arm`) a stop is only noted: the
    command-line framework loads and parses meanwhile, and is not stopped half-way. From
    `arm` on, a stop (a noted one at once) raises KeyboardInterrupt (Terminated for SIGTERM),
    which `run` reports as a stopped run: exit 130, the same words and JSON lines. Once the
    run's result is decided (`settle`), a stop changes nothing: the process is exiting."""

    def __init__(self) -> None:
        self.armed = self.settled = False
        self.noted: int | None = None

    def hold(self) -> None:
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, self._handle)

    def arm(self) -> None:
        self.armed = True
        if self.noted is not None:
            self._raise(self.noted)

    def settle(self) -> None:
        self.settled = True

    def _handle(self, sig: int, frame: object) -> None:
        if self.settled:
            return
        if self.armed:
            self._raise(sig)
        elif self.noted is None:
            self.noted = sig

    @staticmethod
    def _raise(sig: int) -> None:
        raise Terminated if sig == signal.SIGTERM else KeyboardInterrupt


STOPS = _Stops()


def run(opts: RunOptions) -> int:
    """The whole run (its exit code); the prompt "-" is read from stdin. A stop by Ctrl-C or
    SIGTERM before the run's own handling is in place ends it as one after would (exit 130,
    the same words)."""
    from .runner import main, write_interrupted

    if opts.started is None:
        opts.started = time.monotonic()
    try:
        STOPS.arm()
        if opts.prompt == "-":
            opts.prompt = sys.stdin.read()
        return main(opts)
    except KeyboardInterrupt as stop:
        sig = signal.SIGTERM if isinstance(stop, Terminated) else signal.SIGINT
        return write_interrupted(opts, sys.stdout, sys.stderr, sig)


def leave(code: int) -> None:
    """Exit now: the result is out, the files, the journal and the request record are written,
    so the interpreter's teardown of every module and object (tens of milliseconds, more on a
    busy machine) is skipped, and so are the graceful closes the runner would still do (the
    connection's close handshake, the watcher, the request log's checkpoint: SQLite keeps a
    committed record in its write-ahead log, read by whoever opens it next)."""
    import logging
    import sys

    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # a closed pipe: nothing more can be said
        pass
    logging.shutdown()
    os._exit(code)
