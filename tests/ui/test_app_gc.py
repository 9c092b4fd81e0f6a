"""The app's garbage collection: no full collection while a reply streams, and nothing kept
from turn to turn (the heap is collected, then frozen, after each turn)."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

import pytest
from support.apps import all_proposed, make_app, turn_over, until

from spark_pair.base import gcpolicy
from spark_pair.sim.process import SimProcess

pytestmark = pytest.mark.whole_heap  # the app's own settle (tests/ui/conftest.py)


class Node:
    def __init__(self) -> None:
        self.me = self  # a cycle: only the collector frees it


def test_streaming_holds_full_collections_and_settle_frees_what_was_frozen() -> None:
    before = gc.get_threshold()
    full: list[int] = []

    def seen(phase: str, info: dict) -> None:
        if phase == "start" and info["generation"] == 2:
            full.append(1)

    gc.callbacks.append(seen)
    try:
        garbage = Node()
        gone = weakref.ref(garbage)
        gc.freeze()  # as a freeze after the first screen would keep it
        del garbage
        gcpolicy.streaming()
        kept = [[n] for n in range(300_000)]  # tracked, long-lived: gen-2 work piles up
        assert not full
        assert gc.get_threshold()[:2] == before[:2]
        assert gone() is not None
        gcpolicy.settle()
        assert gc.get_threshold() == before
        assert gone() is None, "garbage frozen earlier outlived the turn"
        assert gc.get_freeze_count() > len(kept)  # what lives is out of the collector's way
    finally:
        gc.callbacks.remove(seen)
        gcpolicy.release()
    assert gc.get_freeze_count() == 0 and gc.get_threshold() == before


async def test_turn_after_turn_the_heap_does_not_grow(repo: Path, demo_sim: SimProcess) -> None:
    app = make_app(repo, demo_sim)
    threshold = gc.get_threshold()
    full_while_streaming: list[int] = []
    watching = [False]  # from the second turn (the first screen's own collection is done)

    def seen(phase: str, info: dict) -> None:
        if phase == "start" and info["generation"] == 2 and watching[0] \
                and app.main.driver.running:
            full_while_streaming.append(1)

    sizes: list[tuple[int, int]] = []
    gc.callbacks.append(seen)
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            for n in range(5):
                await until(pilot, lambda: all_proposed(app), "every proposal")
                await pilot.press("alt+shift+r")  # nothing written: same files next
                await until(pilot, lambda: turn_over(app), "the end of the turn")
                await until(pilot, lambda: gc.get_threshold() == threshold, "the settle")
                await pilot.pause(0.05)
                sizes.append((gc.get_freeze_count(), len(gc.get_objects())))
                if n < 4:
                    watching[0] = True
                    await pilot.press("ctrl+r")
                    await until(pilot, lambda: app.main.driver.running, "the next turn")
    finally:
        gc.callbacks.remove(seen)
    assert gc.get_freeze_count() == 0  # the app gave the collector back as it was
    assert gc.get_threshold() == threshold
    assert not full_while_streaming
    frozen = [f for f, _ in sizes]
    # the first turn warms caches; after it, what survives a turn stays within a few percent
    assert max(frozen[1:]) < frozen[1] * 1.05, sizes
    assert max(frozen) > 10_000, sizes  # the heap was frozen after each turn
