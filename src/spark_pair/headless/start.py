"""How a headless run starts and ends: the whole run with its stops, and the quick exit.

A one-shot `spark-pair run` pays its start-up on every call: the modules a run needs only for
the reply (the apply step, the journal, the request log) load once its request is out, and a
run starts no file watcher (headless.runner).
"""

from __future__ import annotations

import os
import signal
import sys
import time

from .options import RunOptions
from .stops import STOPS, Terminated


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
            opts.prompt, opts.stdin = sys.stdin.read(), True
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
