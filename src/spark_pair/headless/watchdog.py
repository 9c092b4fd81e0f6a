"""The backstop of a headless run's deadline and of Ctrl-C / SIGTERM: whatever runs.

The run stops itself on the event loop (the deadline's timer, the signal's handler cancel the
turn). A step that holds the loop (CPU-bound work on a hostile answer, a bug) would keep both
waiting; so the stop is also noted from the interpreter's own signal handlers, which run in
the main thread between any two bytecodes (and inside a regex match), and once it is HARD_S
old with the run not over, `end` ends the process with the stop's code and message. A write
that has begun is never cut short: from then on the watchdog stands down.
"""

from __future__ import annotations

import signal
import sys
import threading
import time
from collections.abc import Callable

from ..base.errors import Cancelled
from .stops import SignalHandler, stop_words

HARD_S = 0.5  # how long past the deadline or a signal the run may take to end by itself
RECHECK_S = 0.25  # while the result is being written out, look again this much later


class Watchdog:
    """`with Watchdog(end, reporting) as dog:` arms SIGALRM for the stops noted with `ask`.

    `end(reason)` ends the process (it does not return); while `reporting()` is true the run
    is handing out its result, and the watchdog looks again a little later."""

    def __init__(self, end: Callable[[Cancelled], None], reporting: Callable[[], bool]) -> None:
        self.end, self.reporting = end, reporting
        self.stops: list[tuple[float, Cancelled]] = []  # (when, why) of each stop asked for
        self.on = False
        self._old: SignalHandler = None
        self._writes = 0

    def __enter__(self) -> Watchdog:
        if threading.current_thread() is threading.main_thread():
            self._old = signal.signal(signal.SIGALRM, self._alarm)
            self._writes = writes_begun()
            self.on = True
        return self

    def __exit__(self, *exc: object) -> None:
        if self.on:
            self.on = False
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self._old)

    def ask(self, reason: Cancelled, at: float | None = None) -> None:
        """Note a stop (at `at`, a time.monotonic() still to come, else now): the run must be
        over HARD_S after the earliest one, which is the one reported."""
        if self.on:
            now = time.monotonic()
            self.stops.append((now if at is None else at, reason))
            self._arm(self._first()[0] + HARD_S - now)

    def signalled(self, sig: int, _frame: object = None) -> None:
        """The interpreter's handler for SIGINT / SIGTERM (the event loop's runs as well)."""
        self.ask(Cancelled(stop_words(sig), hint="nothing was written"))

    def stopped(self) -> Cancelled | None:
        """The earliest stop that has come (None: none yet); any thread may ask."""
        now = time.monotonic()
        come = [stop for stop in list(self.stops) if stop[0] <= now]
        return min(come, key=lambda stop: stop[0])[1] if come else None

    def _first(self) -> tuple[float, Cancelled]:
        return min(self.stops, key=lambda stop: stop[0])

    def _arm(self, seconds: float) -> None:
        signal.setitimer(signal.ITIMER_REAL, max(seconds, 0.001))

    def _alarm(self, _sig: int, _frame: object) -> None:
        if not self.on or not self.stops:
            return
        at, reason = self._first()
        left = at + HARD_S - time.monotonic()
        if left > 0:
            self._arm(left)
        elif writes_begun() != self._writes:  # the run reports the write, however long
            self.__exit__()
        elif self.reporting():
            self._arm(RECHECK_S)
        else:
            self.end(reason)


def writes_begun() -> int:
    """How many writes this process has begun (none while the journal is not even loaded)."""
    journal = sys.modules.get("spark_pair.edits.journal")
    return 0 if journal is None else journal.writes_begun()
