"""The `spark-pair` command's entry point. A plain `spark-pair run` starts without the
command-line framework (importing click costs tens of milliseconds, paid on every call of a
scripted run); every other command line, and any `run` line the small parser does not take
(help, a mistake, stdin as the prompt), goes to spark_pair.cli as before."""

from __future__ import annotations

import sys
import time


def main() -> None:
    started = time.monotonic()  # the run's clock (--timeout, JSON times) starts here
    args = sys.argv[1:]
    if args[:1] == ["run"]:
        from .headless.start import parse_run_args

        opts = parse_run_args(args[1:])
        if opts is not None:
            opts.started = started
            _run(opts)
    from .cli import main as cli

    cli()


def _run(opts: object) -> None:
    import gc

    # start-up allocates some hundred thousand objects (modules, classes, functions) and frees
    # almost none: the collector's passes over them are wasted (a few milliseconds here); the
    # run turns it back on once it is set up (headless.runner)
    gc.disable()
    from .headless.start import leave, run

    try:
        code = run(opts)  # type: ignore[arg-type]
    except KeyboardInterrupt:  # before the run's own Ctrl-C handling is in place
        from .headless.runner import write_interrupted

        code = write_interrupted(opts, sys.stdout, sys.stderr)  # type: ignore[arg-type]
    leave(code)
