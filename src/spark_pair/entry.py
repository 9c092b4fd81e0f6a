"""The `spark-pair` command's entry point."""

from __future__ import annotations

import sys
import time

STARTED: float | None = None  # when the process began running spark-pair (time.monotonic)


def main() -> None:
    global STARTED
    STARTED = time.monotonic()  # a run's clock (--timeout, JSON times) starts here
    if sys.argv[1:2] == ["run"]:
        from .base import gcpolicy
        from .headless.stops import STOPS

        STOPS.hold()  # Ctrl-C and SIGTERM stop a run cleanly from here on (exit 130)
        gcpolicy.hold_for_start_up()  # the run turns it back on once it is set up
    from .cli import main as cli

    cli()
