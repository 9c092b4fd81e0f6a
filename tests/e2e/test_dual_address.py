"""A host name with several addresses whose first hangs (a route that drops packets): the next
address is tried a moment later, not after the whole connect timeout, and all of it stays
within the one connect timeout. Real `run` processes and doctor against the simulator on
127.0.0.1, with ::1 on the same port listening but never accepting (its backlog full); the
name resolves to both, ::1 first, through a site hook (tests/dual_name)."""

from __future__ import annotations

import _socket
import asyncio
import importlib.util
import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from click.testing import CliRunner
from support.runs import A_NEW, MULTI_DIFF, home, lines_of, repo, run  # noqa: F401 (fixtures)

from spark_pair.base.errors import StreamTimeout
from spark_pair.cli.main import main
from spark_pair.protocol.client import ClientOptions, ModelClient
from spark_pair.protocol.events import Failed, Message, TurnRequest
from spark_pair.sim.process import SimProcess

HOOK = Path(__file__).parents[1] / "support" / "dual_name"
NAME = "dual.spark-pair.test"

pytestmark = pytest.mark.xdist_group("timing")  # times paces: the timing tests run one at a time


def _hook():  # noqa: ANN202 - the site hook's module
    spec = importlib.util.spec_from_file_location("dual_name_hook", HOOK / "sitecustomize.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _hang(family: socket.AddressFamily, host: str, port: int = 0) -> list[socket.socket]:
    """A listener on (host, port) that never accepts, its backlog full: a connect to it waits.
    The sockets to close afterwards (the listener first); skips where that cannot be made."""
    listener = socket.socket(family)
    held = [listener]
    try:
        if family == socket.AF_INET6:
            listener.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        listener.bind((host, port))
        listener.listen(0)
        port = listener.getsockname()[1]
        held.append(socket.create_connection((host, port), timeout=2))
        try:
            held.append(socket.create_connection((host, port), timeout=0.3))
        except TimeoutError:
            return held
    except OSError as exc:
        _close(held)
        pytest.skip(f"no listener that holds connects back here: {exc}")
    _close(held)
    pytest.skip("this system accepts past a full backlog: no connect hangs")


def _close(sockets: list[socket.socket]) -> None:
    for sock in sockets:
        sock.close()


@pytest.fixture
def hanging_v6(sim: SimProcess) -> Iterator[int]:
    """The simulator's port, hanging on ::1 (the simulator itself listens on 127.0.0.1)."""
    port = urlsplit(sim.base_url).port
    assert port is not None
    held = _hang(socket.AF_INET6, "::1", port)
    yield port
    _close(held)


@pytest.mark.parametrize("transport", ["ws", "responses", "chat"])
def test_a_run_moves_on_from_an_address_that_hangs(sim: SimProcess, repo: Path, home: Path,
                                                   hanging_v6: int, transport: str) -> None:
    sim.configure(replies=[{"match": "MULTI", "text": MULTI_DIFF}])
    env = {"PYTHONPATH": str(HOOK), "DUAL_NAME": NAME,
           "SPARK_PAIR_BASE_URL": f"http://{NAME}:{hanging_v6}"}
    # the run's 5 s are less than the 10 s connect timeout: one wait for ::1 would use them up
    res = run(repo, home, sim, "MULTI change", "--apply", "--allow-delete", "--allow-rename",
              "--json", "--transport", transport, "--timeout", "5", env=env)
    lines = lines_of(res.stdout)
    assert res.returncode == 0, res.stdout + res.stderr
    assert [ln for ln in lines if ln["type"] in ("retry", "transport_changed")] == []
    assert (repo / "a.py").read_text() == A_NEW


@pytest.mark.parametrize("transport", ["ws", "responses", "chat"])
def test_a_request_waits_one_connect_timeout_for_all_addresses(
        monkeypatch: pytest.MonkeyPatch, transport: str) -> None:
    held = _hang(socket.AF_INET, "127.0.0.1")
    port = held[0].getsockname()[1]
    held += _hang(socket.AF_INET6, "::1", port)
    options = ClientOptions(base_url=f"http://{NAME}:{port}", api_key=None, model="m",
                            transport=transport, connect_timeout_s=1.0, max_retries=0)

    async def ask() -> list:
        async with ModelClient(options) as client:
            request = TurnRequest("system", [Message("user", "hi")])
            return [event async for event in client.stream(request)]

    try:
        monkeypatch.setattr(_socket, "getaddrinfo", _hook().both(NAME, _socket.getaddrinfo))
        start = time.monotonic()
        events = asyncio.run(ask())
        took = time.monotonic() - start
    finally:
        _close(held)
    assert isinstance(events[-1], Failed) and isinstance(events[-1].error, StreamTimeout)
    assert took < 1.6  # the one connect timeout for both addresses (one each would be 2 s)


def test_doctor_connects_past_an_address_that_hangs(sim: SimProcess, hanging_v6: int,
                                                    tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_socket, "getaddrinfo", _hook().both(NAME, _socket.getaddrinfo))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SPARK_PAIR_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("SPARK_PAIR_BASE_URL", f"http://{NAME}:{hanging_v6}")
    monkeypatch.setenv("SPARK_PAIR_MODEL", "gpt-5.3-codex-spark")
    result = CliRunner().invoke(main, ["doctor", "--check-timeout", "3", "--json"])
    checks = {c["id"]: c for c in json.loads(result.stdout)["checks"]}
    assert checks["connect"]["status"] == "pass", checks["connect"]
    assert checks["connect"]["data"]["address"] == "127.0.0.1"
    assert checks["ws"]["status"] == "pass", checks["ws"]
