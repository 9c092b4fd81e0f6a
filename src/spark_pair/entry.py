"""The `spark-pair` command's entry point. A plain `spark-pair run` starts without the
command-line framework (importing click costs tens of milliseconds, paid on every call of a
scripted run); every other command line, and any `run` line the small parser does not take
(help, a mistake, stdin as the prompt), goes to spark_pair.cli as before."""

from __future__ import annotations

import sys


def main() -> None:
    args = sys.argv[1:]
    if args[:1] == ["run"]:
        from .headless.start import parse_run_args

        opts = parse_run_args(args[1:])
        if opts is not None:
            _run(opts)
    from .cli import main as cli

    cli()


def _run(opts: object) -> None:
    from .exitcodes import ExitCode
    from .headless.start import leave, run

    try:
        code = run(opts)  # type: ignore[arg-type]
    except KeyboardInterrupt:
        print("spark-pair: interrupted", file=sys.stderr)
        sys.exit(int(ExitCode.INTERRUPTED))
    leave(code)
