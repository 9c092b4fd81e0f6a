"""When the app's garbage collector runs: never a full collection on the loop while a reply
streams (one walks the whole heap: tens of ms, a visible stall), one after the turn instead.

The collector's state is the process's, so this is the one place that changes it.
"""

from __future__ import annotations

import gc

_held: tuple[int, int, int] | None = None  # the thresholds while a turn holds full collections


def streaming() -> None:
    """A reply is arriving: full collections wait for `settle` (young ones still run, and
    most garbage dies young)."""
    global _held
    if _held is None:
        _held = gc.get_threshold()
        gc.set_threshold(_held[0], _held[1], 2**31 - 1)


def settle() -> None:
    """Nothing streams (the first screen is up, or a turn ended and is painted): collect
    everything, then move the survivors out of the collector's reach, so a later full
    collection walks only newer objects. Garbage never outlives the next call."""
    _restore()
    gc.unfreeze()
    gc.collect()
    gc.freeze()


def release() -> None:
    """The app is closing: the collector as it was."""
    _restore()
    gc.unfreeze()


def _restore() -> None:
    global _held
    if _held is not None:
        gc.set_threshold(*_held)
        _held = None
