"""The `spark-pair` command's entry point (the console script): it notes when the process began
and hands over to the command line (cli.main), which gets that time as its context object."""

from __future__ import annotations

import sys
import time


def main() -> None:
    started = time.monotonic()  # a run's clock (--timeout, JSON times) starts here
    if sys.argv[1:2] in (["run"], ["doctor"], ["sim"]):
        from .base import gcpolicy

        gcpolicy.hold_for_start_up()  # the command turns it back on once it is set up
    if sys.argv[1:2] == ["run"]:
        from .headless.stops import STOPS

        STOPS.hold()  # Ctrl-C and SIGTERM stop a run cleanly from here on (exit 130)
    from .cli.main import main as cli

    cli(obj={"started": started})
