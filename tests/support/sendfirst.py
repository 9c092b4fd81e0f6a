"""The request a one-shot run sends first: which way each request went, and a tiny server process
(wire_server.py) that logs each request line and answers in one odd way."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from spark_pair.sim.process import SimProcess

from .runs import env_for

TRANSPORTS = ("ws", "responses", "chat")


def sent_ahead(home: Path) -> list[bool]:
    """For each request record in `home`'s log, oldest first: whether its first attempt was
    the request sent ahead (protocol.sendfirst)."""
    from spark_pair.store import RequestStore

    with RequestStore(next(home.rglob("requests.sqlite3")), must_exist=True) as store:
        return [bool(r.extra.get("sent_ahead")) for r in store.records()]


def ways(sim: SimProcess, home: Path) -> list[str]:
    """How each model request of the last run went out (a refused WebSocket upgrade counts as
    one): a run sends one request per attempt, and only its first attempt can go out ahead."""
    count = len([e for e in sim.requests() if e["transport"] in TRANSPORTS])
    first = "first" if sent_ahead(home)[-1] else "normal"
    return [first, *["normal"] * (count - 1)] if count else []


SERVER = Path(__file__).with_name("wire_server.py")


class Wire:
    def __init__(self, log: Path, port: int, proc: subprocess.Popen[str]) -> None:
        self.log, self.port, self.proc = log, port, proc

    def requests(self) -> list[dict]:
        if not self.log.exists():
            return []
        return [json.loads(ln) for ln in self.log.read_text().splitlines() if ln.strip()]


@pytest.fixture
def wire(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Wire]:
    mode, delay = request.param
    log = tmp_path / "wire.jsonl"
    proc = subprocess.Popen([sys.executable, str(SERVER), str(log), mode, str(delay), "60"],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        yield Wire(log, int(proc.stdout.readline()), proc)
    finally:
        proc.kill()
        proc.wait(5)
        proc.stdout.close()  # type: ignore[union-attr]


def wire_env(home: Path, sim: SimProcess, wire: Wire, path: str, **extra: str) -> dict[str, str]:
    return {**env_for(home, sim), "SPARK_PAIR_BASE_URL": f"http://127.0.0.1:{wire.port}{path}",
            **extra}
