"""The auto probe's memory: kept per base URL, forgotten after a day or a failure."""

from __future__ import annotations

import contextlib
import json
import time

from support.clients import MODEL, run

from spark_pair.protocol import offers
from spark_pair.protocol.client import ClientOptions, ModelClient
from spark_pair.protocol.events import Completed, Failed, TransportChanged


def test_an_entry_is_kept_for_a_day_per_base_url(tmp_path):
    path = tmp_path / "transports.json"
    now = time.time()
    offers.remember(path, "http://a:1", "chat", now=now)
    offers.remember(path, "http://b:2", "responses", now=now)
    assert offers.recall(path, "http://a:1", now=now + offers.MAX_AGE_S - 1).transport == "chat"
    assert offers.recall(path, "http://a:1", now=now + offers.MAX_AGE_S) is None
    offers.forget(path, "http://a:1")
    assert set(json.loads(path.read_text())) == {"http://b:2"}


def test_a_damaged_file_remembers_nothing(tmp_path):
    path = tmp_path / "transports.json"
    for text in ("{not json", '["chat"]', '{"http://a:1": "chat"}',
                 '{"http://a:1": {"transport": 3, "at": "x"}}'):
        path.write_text(text)
        assert offers.recall_all(path) == {}


async def test_the_probe_is_remembered_and_forgotten_after_a_failure(sim, tmp_path):
    cache = tmp_path / "transports.json"
    sim.set_faults([{"kind": "ws_refuse", "times": -1}])
    opts = ClientOptions(base_url=sim.base_url, api_key="k", model=MODEL, max_retries=0)
    async with ModelClient(opts, transport_cache=cache) as c:
        events = await run(c)
    assert [(e.old, e.new) for e in events if isinstance(e, TransportChanged)] == \
        [("ws", "responses")]
    assert offers.recall(cache, sim.base_url).transport == "responses"

    sim.set_faults([{"kind": "server_error", "status": 500, "times": -1}])
    async with ModelClient(opts, transport_cache=cache) as c:
        assert c.transport == "responses"  # no probe
        events = await run(c)
    assert isinstance(events[-1], Failed)
    assert offers.recall(cache, sim.base_url) is None  # probed again next time

    sim.set_faults([])
    async with ModelClient(opts, transport_cache=cache) as c:
        assert c.transport == "ws"
        assert isinstance((await run(c))[-1], Completed)
    assert offers.recall(cache, sim.base_url).transport == "ws"


async def test_doctor_shows_what_is_remembered(sim, tmp_path):
    from spark_pair.ops.doctor import DoctorConfig, run_doctor

    cache = tmp_path / "transports.json"
    offers.remember(cache, sim.base_url, "chat")
    report = await run_doctor(DoctorConfig(base_url=sim.base_url + "/v1", model=MODEL,
                                           transport_cache=cache, check_timeout_s=3.0))
    config = report.results[0]
    assert "transport = auto uses chat" in config.detail
    assert config.data["remembered_transport"] == "chat"


async def test_the_probe_is_remembered_as_soon_as_text_arrives(sim, tmp_path):
    """A turn stopped before its end (a slow server and a --timeout) still saves the probe."""
    import asyncio

    cache = tmp_path / "transports.json"
    sim.set_faults([{"kind": "ws_refuse", "times": -1},
                    {"kind": "stall", "after_tokens": 3, "seconds": 3600, "times": -1,
                     "transport": "responses"}])
    opts = ClientOptions(base_url=sim.base_url, api_key="k", model=MODEL)
    async with ModelClient(opts, transport_cache=cache) as c:
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(run(c), 1.5)
    assert offers.recall(cache, sim.base_url).transport == "responses"
