"""The simulator's prefill model, `generate: false` and `response.steer`, over real sockets."""

from __future__ import annotations

import asyncio
import json
import time

import websockets

from spark_pair.sim.prefill import PrefixCache, common_prefix, prefill_ms, prompt_text
from spark_pair.sim.process import SimProcess

MODEL = "gpt-5.3-codex-spark"

CONTEXT = "def handler(request):\n    return request.body\n" * 200  # ~2,200 tokens


def ws_connect(sim: SimProcess):
    return websockets.connect(sim.base_url.replace("http://", "ws://") + "/v1/responses",
                              proxy=None, open_timeout=5)


async def ws_turn(ws, **body) -> list[dict]:
    return (await _first_token_s(ws, **body))[1]


def deltas(events: list[dict]) -> str:
    return "".join(e["delta"] for e in events if e["type"] == "response.output_text.delta")


def user(text: str) -> list[dict]:
    return [{"role": "user", "content": text}]


def test_prefix_cache_counts_only_what_follows_the_processed_prefix():
    cache = PrefixCache()
    first = prompt_text("sys", [("user", "abc")])
    assert cache.unseen(first) == len(first)
    cache.add(first + "\x01assistant\x02reply")
    chained = prompt_text("sys", [("user", "abc"), ("assistant", "reply"), ("user", "next")])
    assert cache.unseen(chained) == len("\x01user\x02next")
    assert common_prefix("abcd", "abxy") == 2
    assert prefill_ms(4000, 1000) == 1000.0 and prefill_ms(4000, 0) == 0.0


async def _first_token_s(ws, **body) -> tuple[float, list[dict]]:
    t0 = time.monotonic()
    await ws.send(json.dumps({"type": "response.create", "model": MODEL, **body}))
    first = None
    events = []
    while True:
        event = json.loads(await asyncio.wait_for(ws.recv(), 10))
        events.append(event)
        if first is None and event["type"] == "response.output_text.delta":
            first = time.monotonic() - t0
        if event["type"] in ("response.completed", "response.incomplete", "error"):
            return (first if first is not None else -1.0), events


async def test_a_prewarmed_request_gets_its_first_token_sooner(sim):
    sim.configure(prefill_tps=5000, ttft_ms=20, tokens=5)  # 2,200 tokens: ~440 ms cold
    message = CONTEXT + "\nmake the handler async"
    async with ws_connect(sim) as cold:
        cold_s, _ = await _first_token_s(cold, instructions="sys", input=user(message))
    async with ws_connect(sim) as ws:
        warm = await ws_turn(ws, instructions="sys", input=user(message), generate=False)
        assert warm[-1]["type"] == "response.completed" and warm[-1]["response"]["output"] == []
        warm_s, events = await _first_token_s(
            ws, instructions="sys", input=[], previous_response_id=warm[-1]["response"]["id"])
    assert events[-1]["type"] == "response.completed"
    assert cold_s > 0.4 and warm_s < cold_s / 2, (cold_s, warm_s)
    log = sim.requests()
    assert log[0]["unseen_tokens"] > 2000 and log[0]["prefill_ms"] > 400
    assert log[1]["body"]["generate"] is False and log[1]["unseen_tokens"] > 2000
    assert log[2]["unseen_tokens"] == 0 and log[2]["prefill_ms"] == 0


async def test_a_chained_turn_prefills_only_its_new_input(sim):
    sim.configure(prefill_tps=5000, ttft_ms=0, tokens=5)
    async with ws_connect(sim) as ws:
        first = await ws_turn(ws, instructions="sys", input=user(CONTEXT + "\nfirst"))
        await ws_turn(ws, instructions="sys", input=user("second"),
                      previous_response_id=first[-1]["response"]["id"])
    log = sim.requests()
    assert log[0]["unseen_tokens"] > 2000
    assert 0 < log[1]["unseen_tokens"] < 10


async def test_a_steer_ends_the_running_response_and_answers_the_correction(sim):
    sim.configure(tps=200, ttft_ms=0, tokens=2000,
                  replies=[{"match": "use tabs", "text": "tabs it is"}])
    async with ws_connect(sim) as ws:
        await ws.send(json.dumps({"type": "response.create", "model": MODEL,
                                  "input": user("write a lot")}))
        events: list[dict] = []
        steered = False
        while True:
            event = json.loads(await asyncio.wait_for(ws.recv(), 10))
            events.append(event)
            if event["type"] == "response.output_text.delta" and not steered:
                steered = True
                await ws.send(json.dumps({"type": "response.steer",
                                          "input": user("no: use tabs")}))
            if event["type"] == "response.completed":
                break
    types = [e["type"] for e in events]
    cut = types.index("response.incomplete")
    assert types[cut - 1] == "response.steer.accepted"
    stopped = events[cut]["response"]
    assert stopped["incomplete_details"] == {"reason": "steered"}
    final = events[-1]["response"]
    assert final["previous_response_id"] == stopped["id"]
    assert deltas(events[cut:]) == "tabs it is"
    assert len(deltas(events[:cut])) < 2000 * 4


async def test_a_server_without_steer_answers_an_error_and_keeps_writing(sim):
    sim.configure(tps=2000, ttft_ms=0, tokens=400, steer=False)
    async with ws_connect(sim) as ws:
        await ws.send(json.dumps({"type": "response.create", "model": MODEL,
                                  "input": user("write")}))
        await ws.send(json.dumps({"type": "response.steer", "input": user("stop")}))
        events = []
        while True:
            event = json.loads(await asyncio.wait_for(ws.recv(), 10))
            events.append(event)
            if event["type"] == "response.completed":
                break
    errors = [e for e in events if e["type"] == "error"]
    assert [e["error"]["code"] for e in errors] == ["unsupported_message_type"]
    assert len(deltas(events)) == 400 * 4


async def test_a_steer_with_nothing_running_fails(sim):
    async with ws_connect(sim) as ws:
        await ws.send(json.dumps({"type": "response.steer", "input": "x"}))
        event = json.loads(await asyncio.wait_for(ws.recv(), 5))
    assert event["type"] == "response.steer.failed"
    assert event["error"]["code"] == "no_response_in_progress"


async def test_a_steer_before_the_first_token_is_pending_then_accepted(sim):
    sim.configure(ttft_ms=400, tokens=50, replies=[{"match": "tabs", "text": "tabs it is"}])
    async with ws_connect(sim) as ws:
        await ws.send(json.dumps({"type": "response.create", "model": MODEL,
                                  "input": user("write")}))
        await ws.send(json.dumps({"type": "response.steer", "input": user("use tabs")}))
        events = []
        while not events or events[-1]["type"] != "response.completed":
            events.append(json.loads(await asyncio.wait_for(ws.recv(), 10)))
    types = [e["type"] for e in events]
    assert types.index("response.steer.pending") < types.index("response.steer.accepted")
    cut = types.index("response.incomplete")
    assert deltas(events[:cut]) == "" and deltas(events[cut:]) == "tabs it is"


def test_http_requests_on_one_connection_share_what_it_processed(sim):
    import httpx

    sim.configure(prefill_tps=5000, ttft_ms=0, tokens=5)
    messages = [{"role": "system", "content": "sys"}, {"role": "user", "content": CONTEXT}]
    with httpx.Client(base_url=sim.base_url, timeout=10) as client:
        for extra in ([], [{"role": "assistant", "content": "w00 w01 w02 w03 w04 "},
                           {"role": "user", "content": "more"}]):
            client.post("/v1/chat/completions", json={
                "model": MODEL, "messages": messages + extra}).raise_for_status()
    first, second = sim.requests()
    assert first["connection_id"] == second["connection_id"]
    assert first["unseen_tokens"] > 2000 and second["unseen_tokens"] < 10
