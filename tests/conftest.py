"""Shared fixtures. The simulator runs as a real process on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from spark_pair.sim.process import SimProcess


@pytest.fixture(scope="session")
def sim_server() -> Iterator[SimProcess]:
    """One simulator for the whole test session: unthrottled, no TTFT."""
    with SimProcess(tps=0, ttft_ms=0) as server:
        yield server


@pytest.fixture
def sim(sim_server: SimProcess) -> SimProcess:
    """The session simulator, reset to its start-up state (no faults, empty log)."""
    sim_server.reset()
    return sim_server
