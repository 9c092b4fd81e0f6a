"""bench against the simulator process, through the real model client."""

from __future__ import annotations

import pytest

from spark_pair.ops.bench.sweep import BenchPlan, run_bench
from spark_pair.protocol.client import ClientOptions, ModelClient

MODEL = "gpt-5.3-codex-spark"

pytestmark = pytest.mark.xdist_group("timing")  # times paces: the timing tests run one at a time


def factory(sim, api_key: str | None = None, **kw):
    def make(transport: str) -> ModelClient:
        options = ClientOptions(base_url=sim.base_url, api_key=api_key, model=MODEL,
                                transport=transport, **kw)
        return ModelClient(options)
    return make


@pytest.mark.parametrize("transport", ["ws", "responses", "chat"])
async def test_tok_s_at_concurrency_1_matches_the_set_rate(sim, transport):
    sim.configure(tps=800, ttft_ms=100, tokens=800)  # a second of stream: a busy machine's
    # pauses of a few ms move its rate little
    plan = BenchPlan(model=MODEL, transports=[transport], concurrency=[1], requests=2,
                     max_tokens=1000)
    result = await run_bench(plan, factory(sim))
    (level,) = result.levels
    assert level.transport == transport
    assert level.ok == 2 and level.errors == 0
    assert level.tokens_per_s.p50 == pytest.approx(800, rel=0.05)
    assert level.tokens_per_s.min == pytest.approx(800, rel=0.05)
    # the server's 100 ms wait is in the TTFT (measured from the first token, it would read
    # about 0); the request's time stamp may come late by a pause on a busy machine
    assert level.ttft_ms.p50 is not None and level.ttft_ms.p50 >= 50


async def test_finds_the_knee_below_the_concurrency_limit(sim):
    sim.configure(tps=2000, ttft_ms=10, tokens=100)
    sim.set_faults([{"kind": "concurrency_limit", "max_concurrent": 4}])
    seen = []
    plan = BenchPlan(model=MODEL, transports=["chat"], concurrency=[1, 2, 8], requests=8,
                     max_tokens=1000)
    result = await run_bench(plan, factory(sim, max_retries=0), on_progress=seen.append)
    by_c = {lv.concurrency: lv for lv in result.levels}
    assert by_c[1].errors == 0 and by_c[2].errors == 0
    assert by_c[8].errors >= 4 and by_c[8].error_classes == {"rate_limit": by_c[8].errors}
    assert result.knee("chat").concurrency == 2
    assert seen[-1].done == 8 and seen[-1].concurrency == 8


async def test_time_budget_stops_the_sweep(sim):
    sim.configure(tps=200, ttft_ms=0, tokens=400)  # 2 s per request
    plan = BenchPlan(model=MODEL, transports=["chat"], concurrency=[1, 2], requests=5,
                     max_tokens=1000, max_seconds=0.5)
    result = await run_bench(plan, factory(sim))
    assert result.truncated and result.wall_s < 5
    assert all(lv.errors == 0 for lv in result.levels)


async def test_long_mode_records_time_per_thousand_tokens(sim):
    sim.configure(tps=20000, ttft_ms=0, tokens=3000)
    plan = BenchPlan(model=MODEL, transports=["responses"], concurrency=[1], requests=1,
                     max_tokens=8192, long=True)
    result = await run_bench(plan, factory(sim))
    (level,) = result.levels
    assert level.ok == 1 and len(level.thousands_s) == 3
    assert level.thousands_s == sorted(level.thousands_s)
    assert sim.requests()[-1]["body"]["max_output_tokens"] == 8192


async def test_a_set_up_failure_stops_the_sweep(sim):
    sim.configure(api_key="sk-the-right-key-42")
    plan = BenchPlan(model=MODEL, transports=["chat", "ws"], concurrency=[1, 4], requests=2,
                     max_tokens=100)
    result = await run_bench(plan, factory(sim, api_key="sk-a-wrong-key-43"))
    assert len(result.levels) == 1 and result.levels[0].error_classes == {"auth": 1}
    assert "a request on chat at concurrency 1 failed" in result.aborted
    assert "sk-a-wrong-key-43" not in result.aborted
    assert "key" in result.abort_hint


async def test_a_set_up_failure_stops_after_the_first_failing_request(sim):
    sim.configure(api_key="sk-the-right-key-42")
    plan = BenchPlan(model=MODEL, transports=["chat"], concurrency=[4, 8], requests=8,
                     max_tokens=100)
    result = await run_bench(plan, factory(sim, api_key="sk-a-wrong-key-43"))
    assert len(result.levels) == 1 and result.aborted
    assert len(sim.requests()) <= 4  # not a whole level of 8


async def test_a_refused_connection_stops_the_sweep(sim):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]

    def make(transport: str) -> ModelClient:
        return ModelClient(ClientOptions(base_url=f"http://127.0.0.1:{port}", api_key=None,
                                         model=MODEL,
                                         transport=transport, max_retries=0))

    plan = BenchPlan(model=MODEL, transports=["chat", "ws"], concurrency=[1, 4], requests=8,
                     max_tokens=100)
    result = await run_bench(plan, make)
    assert len(result.levels) == 1 and result.levels[0].requests == 1
    assert result.levels[0].error_classes == {"connection": 1}
    assert result.aborted and result.abort_hint


async def test_a_level_runs_at_least_its_concurrency_in_requests(sim):
    sim.configure(tps=0, ttft_ms=0, tokens=20)
    plan = BenchPlan(model=MODEL, transports=["chat"], concurrency=[1, 4], requests=2,
                     max_tokens=100)
    result = await run_bench(plan, factory(sim))
    assert [(lv.concurrency, lv.requests, lv.ok) for lv in result.levels] == [(1, 2, 2),
                                                                             (4, 4, 4)]
    assert not result.truncated


@pytest.mark.parametrize("settings", [
    {"default": ""},  # the server ends each reply without any text
    {"context": 20},  # its context window is full before the reply begins
])
async def test_a_reply_with_no_output_is_not_a_success(sim, settings):
    sim.configure(tps=2000, ttft_ms=0, tokens=100, **settings)
    plan = BenchPlan(model=MODEL, transports=["chat"], concurrency=[1, 2], requests=2,
                     max_tokens=1000)
    result = await run_bench(plan, factory(sim))
    assert [(lv.ok, lv.errors) for lv in result.levels] == [(0, 2), (0, 2)]
    assert all(lv.error_classes == {"incomplete": 2} for lv in result.levels)
    assert result.knee("chat") is None  # no level where half the requests got nothing


async def test_a_reply_the_server_cut_short_is_not_a_success(sim):
    # the window (prompt + reply) ends each reply after a few dozen of its 300 tokens
    sim.configure(tps=5000, ttft_ms=0, tokens=300, context=120)
    plan = BenchPlan(model=MODEL, transports=["responses"], concurrency=[1], requests=2,
                     max_tokens=1000)
    (level,) = (await run_bench(plan, factory(sim))).levels
    assert (level.ok, level.errors, level.error_classes) == (0, 2, {"incomplete": 2})
    assert level.ttft_ms.count == 0 and level.aggregate_tps == 0


async def test_a_reply_that_stops_at_max_tokens_is_a_success(sim):
    sim.configure(tps=5000, ttft_ms=0, tokens=300)  # longer than the 50 tokens asked for
    plan = BenchPlan(model=MODEL, transports=["chat"], concurrency=[1], requests=2,
                     max_tokens=50)
    (level,) = (await run_bench(plan, factory(sim))).levels
    assert (level.ok, level.errors) == (2, 0)
