"""Ctrl-C and SIGTERM in a headless run: noted from the process's start, raised once the run
begins, ignored once its result is decided; and the words a stopped run is reported with."""

from __future__ import annotations

import signal
from collections.abc import Callable
from types import FrameType

# a signal's handler, as signal.signal takes and returns it (None: not set from Python)
SignalHandler = Callable[[int, FrameType | None], object] | int | None
# what Ctrl-C stops a run with (its hint says nothing was written)
INTERRUPTED = "interrupted (Ctrl-C)"
TERMINATED = "terminated (SIGTERM)"


def stop_words(sig: int) -> str:
    """What stopped the run, for a signal the runner handles."""
    return TERMINATED if sig == signal.SIGTERM else INTERRUPTED


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
