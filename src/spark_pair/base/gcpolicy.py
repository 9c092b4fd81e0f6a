"""When the garbage collector runs. Its state is the process's, so this is the one place that
changes it (the command's start, a headless run, the app).

A command starts with it off: start-up allocates some hundred thousand objects (modules,
classes, functions) and frees almost none, so the collector's passes over them are wasted. A
headless run turns it back on once it is set up, leaving out what start-up made. The app never
runs a full collection on the loop while a reply streams (one walks the whole heap: tens of
ms, a visible stall), but one after the turn instead.
"""

from __future__ import annotations

import gc

_held: tuple[int, int, int] | None = None  # the thresholds while a turn holds full collections


_starting = False  # hold_for_start_up held collections, and nothing turned them on yet


def hold_for_start_up() -> None:
    """No collection while the command starts (`collect_from_here` turns it back on)."""
    global _starting
    _starting = True
    gc.disable()


def started() -> None:
    """The command is set up: `collect_from_here`, if `hold_for_start_up` held collections (a
    command run inside another program, as the tests do, leaves its collector alone)."""
    global _starting
    if _starting:
        _starting = False
        collect_from_here()


def collect_from_here() -> None:
    """Collect garbage from here on, leaving out what start-up made (it stays for the run)."""
    global _starting
    _starting = False
    gc.freeze()
    gc.enable()


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
