"""The app's tests run the app inside a pytest worker, whose heap is the whole suite's (every
test module, the plugins, what earlier tests left): many times the app's own."""

from __future__ import annotations

import gc

import pytest

from spark_pair.base import gcpolicy


def _settle_young() -> None:
    """gcpolicy.settle as the app's tests run it: the thresholds back as `settle` leaves them and
    the young generations collected, not a full collection of the worker's heap (one took about
    0.15 s of CPU, two or three per test: a third of the app tests' CPU)."""
    gcpolicy._restore()
    gc.collect(1)


@pytest.fixture(autouse=True)
def young_collections(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """The app's full collection after each turn is left out, but in the tests of the collector
    itself (marked `whole_heap`: tests/ui/test_app_gc.py)."""
    if request.node.get_closest_marker("whole_heap") is None:
        monkeypatch.setattr(gcpolicy, "settle", _settle_young)
