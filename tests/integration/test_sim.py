"""The simulator, exercised as a real process over real sockets."""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Iterator

import httpx
import pytest
import websockets
from support.lazy import Lazy

from spark_pair.base.errors import ConnectionFailed
from spark_pair.sim import faults, replies, schedule, turns
from spark_pair.sim.process import SimProcess

openai = Lazy("openai")  # imported by the tests that use it

MODEL = "gpt-5.3-codex-spark"
SCRIPTED = "Hello from the simulator: ünïcode ✓, \"quotes\", new\nlines.\n"


_OPEN: list[openai.OpenAI] = []


@pytest.fixture(autouse=True)
def _close_sdk_clients() -> Iterator[None]:
    """Each test's SDK clients are closed when it ends (their sockets with them)."""
    yield
    while _OPEN:
        _OPEN.pop().close()


def sdk(sim: SimProcess, key: str = "test-key", retries: int = 0) -> openai.OpenAI:
    client = openai.OpenAI(base_url=sim.base_url + "/v1", api_key=key, max_retries=retries,
                           http_client=httpx.Client(trust_env=False, timeout=10,
                                                    verify=False))  # plain http
    _OPEN.append(client)
    return client


def script(sim: SimProcess) -> None:
    sim.configure(replies=[{"match": "greet", "text": SCRIPTED}], default="the default")


# ---- chat completions ----------------------------------------------------------------------

def test_sdk_parses_chat_stream_and_reassembles_the_text(sim):
    script(sim)
    stream = sdk(sim).chat.completions.create(
        model=MODEL,
        stream=True,
        stream_options={"include_usage": True},
        messages=[
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "greet me"},
        ],
    )
    text, usage, finish = "", None, None
    for chunk in stream:
        if chunk.usage is not None:
            usage = chunk.usage
        for choice in chunk.choices:
            text += choice.delta.content or ""
            finish = choice.finish_reason or finish
    assert text == SCRIPTED
    assert finish == "stop"
    assert usage.completion_tokens == -(-len(SCRIPTED) // 4)
    assert usage.prompt_tokens == len("be briefgreet me") // 4 + 1


def test_sdk_parses_non_streaming_chat(sim):
    script(sim)
    reply = sdk(sim).chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": "please greet"}])
    assert reply.choices[0].message.content == SCRIPTED
    assert reply.choices[0].finish_reason == "stop"


def test_default_reply_and_last_user_message_decides(sim):
    script(sim)
    reply = sdk(sim).chat.completions.create(model=MODEL, messages=[
        {"role": "user", "content": "greet"}, {"role": "assistant", "content": "x"},
        {"role": "user", "content": "something else"}])
    assert reply.choices[0].message.content == "the default"


def test_generated_reply_is_cut_at_max_tokens(sim):
    sim.configure(tokens=50)
    reply = sdk(sim).chat.completions.create(
        model=MODEL, max_tokens=7, messages=[{"role": "user", "content": "hi"}])
    assert len(reply.choices[0].message.content) == 28
    assert reply.choices[0].finish_reason == "length"
    assert reply.usage.completion_tokens == 7


def test_models_listing(sim):
    ids = [m.id for m in sdk(sim).models.list()]
    assert ids == ["gpt-5.3-codex-spark", "gpt-5.3-codex"]


def test_unknown_model_is_404_model_not_found(sim):
    with pytest.raises(openai.NotFoundError) as info:
        sdk(sim).chat.completions.create(model="nope", messages=[{"role": "user", "content": "x"}])
    assert info.value.code == "model_not_found"


def test_wrong_key_is_401_and_the_log_never_holds_the_key(sim):
    sim.configure(api_key="sk-right-key-123456")
    with pytest.raises(openai.AuthenticationError) as info:
        sdk(sim, key="sk-wrong-key-987654").chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": "x"}])
    assert info.value.code == "invalid_api_key"
    reply = sdk(sim, key="sk-right-key-123456").chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": "x"}])
    assert reply.choices[0].message.content
    log = sim.requests()
    assert [(e["auth_ok"], e["status"]) for e in log] == [(False, 401), (True, 200)]
    dumped = json.dumps(log)
    assert "sk-right-key" not in dumped and "sk-wrong-key" not in dumped
    assert "Bearer" not in dumped and "uthorization" not in dumped


def test_request_log_records_body_transport_and_connection(sim):
    with httpx.Client(base_url=sim.base_url, trust_env=False) as client:
        for _ in range(2):
            client.post("/v1/chat/completions", json={
                "model": MODEL, "messages": [{"role": "user", "content": "hi"}]})
    log = sim.requests()
    assert [e["transport"] for e in log] == ["chat", "chat"]
    assert log[0]["connection_id"] == log[1]["connection_id"]
    assert log[0]["body"]["messages"][0]["content"] == "hi"
    assert log[0]["output_tokens"] == 200 and log[0]["response_id"].startswith("chatcmpl-")
    assert sim.stats()["http_connections"] == 1
    sim.clear_requests()
    assert sim.requests() == []


# ---- responses (SSE) ----------------------------------------------------------------------

def test_sdk_parses_responses_stream(sim):
    script(sim)
    events = list(sdk(sim).responses.create(
        model=MODEL, stream=True, instructions="be brief",
        input=[{"role": "user", "content": [{"type": "input_text", "text": "greet me"}]}]))
    types = [e.type for e in events]
    assert types[:4] == ["response.created", "response.in_progress",
                         "response.output_item.added", "response.content_part.added"]
    assert types[-4:] == ["response.output_text.done", "response.content_part.done",
                          "response.output_item.done", "response.completed"]
    text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert text == SCRIPTED
    assert [e.sequence_number for e in events] == list(range(len(events)))
    final = events[-1].response
    assert final.output_text == SCRIPTED
    assert final.usage.output_tokens == -(-len(SCRIPTED) // 4)
    assert final.usage.input_tokens == len("be briefgreet me") // 4 + 1


def test_sdk_stream_helper_accumulates_responses(sim):
    script(sim)
    with sdk(sim).responses.stream(model=MODEL, input="greet") as stream:
        for _ in stream:
            pass
        final = stream.get_final_response()
    assert final.output_text == SCRIPTED and final.status == "completed"


def test_sdk_parses_non_streaming_responses(sim):
    script(sim)
    reply = sdk(sim).responses.create(model=MODEL, input="greet", max_output_tokens=3)
    assert reply.output_text == SCRIPTED[:12]
    assert reply.usage.output_tokens == 3
    assert reply.incomplete_details.reason == "max_output_tokens"
    assert reply.status == "incomplete"


def test_streamed_reply_cut_at_max_output_tokens_ends_with_response_incomplete(sim):
    script(sim)
    events = list(sdk(sim).responses.create(model=MODEL, input="greet", max_output_tokens=3,
                                            stream=True))
    assert events[-1].type == "response.incomplete"
    assert "response.completed" not in [e.type for e in events]
    final = events[-1].response
    assert final.status == "incomplete" and final.incomplete_details.reason == "max_output_tokens"
    text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert text == SCRIPTED[:12]


def test_streamed_chat_reply_cut_at_max_tokens_says_length(sim):
    script(sim)
    chunks = list(sdk(sim).chat.completions.create(
        model=MODEL, max_tokens=2, stream=True, messages=[{"role": "user", "content": "greet"}]))
    reasons = [c.choices[0].finish_reason for c in chunks if c.choices]
    assert reasons[-1] == "length"
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == SCRIPTED[:8]


# ---- responses WebSocket mode -------------------------------------------------------------

def ws_url(sim: SimProcess) -> str:
    return sim.base_url.replace("http://", "ws://") + "/v1/responses"


def ws_connect(sim: SimProcess, key: str = "test-key"):
    return websockets.connect(ws_url(sim), additional_headers={"Authorization": f"Bearer {key}"},
                              proxy=None, open_timeout=5)


async def ws_turn(ws, **body) -> list[dict]:
    """Send one response.create and collect events up to completed/failed/error."""
    await ws.send(json.dumps({"type": "response.create", "model": MODEL, **body}))
    events = []
    for _ in range(100_000):
        event = json.loads(await asyncio.wait_for(ws.recv(), 5))
        events.append(event)
        if event["type"] in ("response.completed", "response.incomplete", "response.failed",
                             "error"):
            return events
    raise AssertionError("no terminal event")


async def test_ws_reply_cut_at_max_output_tokens_ends_with_response_incomplete(sim):
    script(sim)
    async with ws_connect(sim) as ws:
        events = await ws_turn(ws, input="greet", max_output_tokens=2)
    assert events[-1]["type"] == "response.incomplete"
    assert events[-1]["response"]["incomplete_details"] == {"reason": "max_output_tokens"}
    assert deltas(events) == SCRIPTED[:8]


def deltas(events: list[dict]) -> str:
    return "".join(e["delta"] for e in events if e["type"] == "response.output_text.delta")


async def test_ws_turns_prewarm_and_continuation_on_one_socket(sim):
    script(sim)
    async with ws_connect(sim) as ws:
        warm = await ws_turn(ws, generate=False, instructions="be brief", input=[])
        assert [e["type"] for e in warm] == ["response.created", "response.in_progress",
                                             "response.completed"]
        assert warm[-1]["response"]["output"] == []
        previous = warm[-1]["response"]["id"]
        for _ in range(3):
            events = await ws_turn(ws, previous_response_id=previous, input=[
                {"type": "message", "role": "user",
                 "content": [{"type": "input_text", "text": "greet"}]}])
            assert deltas(events) == SCRIPTED
            final = events[-1]["response"]
            assert final["output"][0]["content"][0]["text"] == SCRIPTED
            assert final["previous_response_id"] == previous
            previous = final["id"]
    log = sim.requests()
    assert [e["transport"] for e in log] == ["ws"] * 4
    assert len({e["connection_id"] for e in log}) == 1
    assert log[1]["body"]["type"] == "response.create"
    assert sim.stats()["ws_connections"] == 1


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # raised inside the SDK's WS client
def test_sdk_websocket_client_parses_the_ws_mode(sim):
    script(sim)
    client = sdk(sim)
    with client.responses.connect(websocket_connection_options={"proxy": None}) as conn:
        conn.response.create(model=MODEL, generate=False, input=[])
        warm = [e for e in _events_until_done(conn)]
        assert warm[-1].type == "response.completed" and warm[-1].response.output == []
        conn.response.create(model=MODEL, input="greet", previous_response_id=warm[-1].response.id)
        events = _events_until_done(conn)
        assert (
            "".join(e.delta for e in events if e.type == "response.output_text.delta") == SCRIPTED
        )
        assert events[-1].response.output_text == SCRIPTED
        conn.response.create(model=MODEL, input="x", previous_response_id="resp_nope")
        error = _events_until_done(conn)[-1]
        assert error.type == "error" and error.error.code == "previous_response_not_found"
        assert error.status == 400


def _events_until_done(conn) -> list:
    events = []
    for event in conn:
        events.append(event)
        if event.type in ("response.completed", "response.failed", "error"):
            return events
    raise AssertionError("the socket closed early")


async def test_ws_unknown_previous_response_and_model(sim):
    async with ws_connect(sim) as ws:
        events = await ws_turn(ws, previous_response_id="resp_unknown", input="x")
        assert events == [{"type": "error", "status": 400, "error": {
            "type": "invalid_request_error", "code": "previous_response_not_found",
            "message": "Previous response with id 'resp_unknown' not found.",
            "param": "previous_response_id"}}]
        events = await ws_turn(ws, model="gpt-nope", input="x")
        assert events[0]["error"]["code"] == "model_not_found"
        assert deltas(await ws_turn(ws, input="hello"))


async def test_ws_previous_response_id_does_not_cross_sockets(sim):
    async with ws_connect(sim) as ws:
        first = (await ws_turn(ws, input="hi"))[-1]["response"]["id"]
    async with ws_connect(sim) as ws:
        events = await ws_turn(ws, previous_response_id=first, input="x")
        assert events[-1]["error"]["code"] == "previous_response_not_found"
    assert sim.stats()["ws_connections"] == 2


async def test_ws_wrong_key_refuses_the_handshake(sim):
    sim.configure(api_key="sk-right-key-123456")
    with pytest.raises(websockets.InvalidStatus) as info:
        async with ws_connect(sim, key="sk-wrong-key-654321"):
            pass
    assert info.value.response.status_code == 401
    async with ws_connect(sim, key="sk-right-key-123456") as ws:
        assert deltas(await ws_turn(ws, input="hi"))
    assert "sk-" not in json.dumps(sim.requests())


# ---- faults ----------------------------------------------------------------------------------

CHAT_BODY = {"model": MODEL, "stream": True, "messages": [{"role": "user", "content": "hi"}]}
RESP_BODY = {"model": MODEL, "stream": True, "input": "hi"}


def http(sim: SimProcess, timeout: float = 5.0) -> httpx.Client:
    return httpx.Client(base_url=sim.base_url, trust_env=False, timeout=timeout, verify=False)


def wait_until(condition, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.01)


def sse_texts(raw: str) -> str:
    """The text deltas found in a (possibly cut) chat or responses SSE body."""
    out = []
    for line in raw.split("\n"):
        if not line.startswith("data: {"):
            continue
        data = json.loads(line[6:])
        if data.get("type") == "response.output_text.delta":
            out.append(data["delta"])
        for choice in data.get("choices", []):
            out.append(choice["delta"].get("content") or "")
    return "".join(out)


def read_until_error(client: httpx.Client, path: str, body: dict) -> tuple[str, Exception]:
    raw = ""
    try:
        with client.stream("POST", path, json=body) as response:
            for piece in response.iter_text():
                raw += piece
    except httpx.HTTPError as exc:
        return raw, exc
    raise AssertionError("the stream ended normally")


def test_rate_limit_with_retry_after_then_success(sim):
    sim.set_faults([{"kind": "rate_limit", "times": 2, "retry_after": 7}])
    with pytest.raises(openai.RateLimitError) as info:
        sdk(sim).chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "x"}])
    assert info.value.response.headers["Retry-After"] == "7"
    with http(sim) as client:
        response = client.post("/v1/responses", json=RESP_BODY)
        assert response.status_code == 429 and response.json()["error"]["code"] == \
            "rate_limit_exceeded"
        assert client.post("/v1/responses", json=RESP_BODY).status_code == 200
    assert [e["fault"] for e in sim.requests()] == ["rate_limit", "rate_limit", None]
    assert [e["status"] for e in sim.requests()] == [429, 429, 200]


async def test_rate_limit_and_server_error_on_ws(sim):
    sim.set_faults([{"kind": "rate_limit", "transport": "ws", "retry_after": 2},
                    {"kind": "server_error", "transport": "ws"}])
    async with ws_connect(sim) as ws:
        events = await ws_turn(ws, input="x")
        assert events[0]["status"] == 429
        assert events[0]["error"]["headers"] == {"retry-after": "2"}
        assert events[0]["error"]["code"] == "rate_limit_exceeded"
        events = await ws_turn(ws, input="x")
        assert events[0]["status"] == 503 and events[0]["error"]["type"] == "server_error"
        assert deltas(await ws_turn(ws, input="x"))


def test_server_error_status_and_transport_filter(sim):
    sim.set_faults([{"kind": "server_error", "status": 502, "transport": "chat", "times": -1}])
    with http(sim) as client:
        assert client.post("/v1/responses", json=RESP_BODY).status_code == 200
        for _ in range(3):
            assert client.post("/v1/chat/completions", json=CHAT_BODY).status_code == 502
    with pytest.raises(openai.InternalServerError):
        sdk(sim).chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "x"}])


@pytest.mark.parametrize("path,body", [("/v1/chat/completions", CHAT_BODY),
                                       ("/v1/responses", RESP_BODY)])
def test_drop_cuts_the_http_stream_after_k_tokens(sim, path, body):
    sim.set_faults([{"kind": "drop", "after_tokens": 3}])
    with http(sim) as client:
        raw, exc = read_until_error(client, path, body)
        assert isinstance(exc, httpx.RemoteProtocolError)
        assert sse_texts(raw) == "w00 w01 w02 "
        full = client.post(path, json=body).text
    assert len(sse_texts(full)) == 800
    assert sim.requests()[0]["fault"] == "drop" and sim.requests()[0]["output_tokens"] == 3


async def test_drop_cuts_the_ws_connection(sim):
    sim.set_faults([{"kind": "drop", "after_tokens": 2}])
    async with ws_connect(sim) as ws:
        await ws.send(json.dumps({"type": "response.create", "model": MODEL, "input": "x"}))
        got = []
        with pytest.raises(websockets.ConnectionClosedError):
            for _ in range(100):
                got.append(json.loads(await asyncio.wait_for(ws.recv(), 5)))
    assert deltas(got) == "w00 w01 "


async def test_ws_close_after_responses(sim):
    sim.set_faults([{"kind": "ws_close", "after_responses": 2}])
    async with ws_connect(sim) as ws:
        for _ in range(2):
            assert deltas(await ws_turn(ws, input="x"))
        events = await ws_turn(ws, input="x")
        assert events[-1]["error"]["code"] == "websocket_connection_limit_reached"
        with pytest.raises(websockets.ConnectionClosed):
            await asyncio.wait_for(ws.recv(), 5)
    async with ws_connect(sim) as ws:  # times=1: a new socket works on
        for _ in range(3):
            assert deltas(await ws_turn(ws, input="x"))


def test_stall_keeps_the_http_connection_open_without_data(sim):
    sim.set_faults([{"kind": "stall", "after_tokens": 2}])
    with http(sim, timeout=0.5) as client:
        raw, exc = read_until_error(client, "/v1/chat/completions", CHAT_BODY)
    assert isinstance(exc, httpx.ReadTimeout)
    assert sse_texts(raw) == "w00 w01 "


def test_a_client_leaving_a_stalled_stream_frees_its_slot(sim):
    sim.set_faults([{"kind": "stall", "after_tokens": 1},
                    {"kind": "concurrency_limit", "max_concurrent": 1}])
    with http(sim, timeout=0.3) as client:
        raw, exc = read_until_error(client, "/v1/chat/completions", CHAT_BODY)
        assert isinstance(exc, httpx.ReadTimeout) and sse_texts(raw) == "w00 "
    wait_until(lambda: sim.stats()["in_flight"] == 0)
    assert sim.requests()[0]["status"] == 499
    with http(sim) as client:
        assert client.post("/v1/chat/completions", json=CHAT_BODY).status_code == 200


def test_short_stall_then_the_rest(sim):
    sim.set_faults([{"kind": "stall", "after_tokens": 1, "seconds": 0.05}])
    with http(sim) as client:
        assert len(sse_texts(client.post("/v1/responses", json=RESP_BODY).text)) == 800


async def test_stall_on_ws(sim):
    sim.set_faults([{"kind": "stall", "transport": "ws"}])
    async with ws_connect(sim) as ws:
        await ws.send(json.dumps({"type": "response.create", "model": MODEL, "input": "x"}))
        got = [json.loads(await asyncio.wait_for(ws.recv(), 5)) for _ in range(4)]
        assert got[-1]["type"] == "response.content_part.added"
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(ws.recv(), 0.3)


def test_html_error_page(sim):
    sim.set_faults([{"kind": "html", "transport": "http"}, {"kind": "html", "status": 502}])
    with http(sim) as client:
        response = client.post("/v1/chat/completions", json=CHAT_BODY)
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/html")
        assert "<html>" in response.text
        response = client.post("/v1/responses", json=RESP_BODY)
        assert response.status_code == 502 and "<html>" in response.text


async def test_html_and_refusal_on_the_ws_handshake(sim):
    sim.set_faults([{"kind": "ws_refuse", "times": 1}, {"kind": "html", "transport": "ws"}])
    for status in (404, 200):
        with pytest.raises(websockets.InvalidStatus) as info:
            async with ws_connect(sim):
                pass
        assert info.value.response.status_code == status
    async with ws_connect(sim) as ws:
        assert deltas(await ws_turn(ws, input="x"))
    assert [e["fault"] for e in sim.requests()] == ["ws_refuse", "html", None]


def test_ws_refuse_does_not_touch_http(sim):
    sim.set_faults([{"kind": "ws_refuse", "times": -1}])
    with http(sim) as client:
        assert client.post("/v1/chat/completions", json=CHAT_BODY).status_code == 200


async def test_concurrency_limit(sim):
    sim.set_faults([{"kind": "concurrency_limit", "max_concurrent": 1},
                    {"kind": "stall", "transport": "ws"}])
    async with ws_connect(sim) as ws:
        await ws.send(json.dumps({"type": "response.create", "model": MODEL, "input": "x"}))
        await asyncio.wait_for(ws.recv(), 5)  # response.created: it is in flight
        async with httpx.AsyncClient(base_url=sim.base_url, trust_env=False) as client:
            busy = await client.post("/v1/responses", json=RESP_BODY)
            assert busy.status_code == 429 and busy.headers["Retry-After"] == "1"
    wait_until(lambda: sim.stats()["in_flight"] == 0)  # the stalled socket is gone
    with http(sim) as client:
        assert client.post("/v1/responses", json=RESP_BODY).status_code == 200
    assert "concurrency_limit" in [e["fault"] for e in sim.requests()]


# ---- the token schedule (a fake clock: no timing in tests) --------------------------------

class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += max(0.0, seconds)


async def test_pacing_has_no_drift_and_coalesces_what_is_due(monkeypatch):
    clock = FakeClock()
    monkeypatch.setattr(schedule.asyncio, "sleep", clock.sleep)
    sched = schedule.TokenSchedule(1000, 150, clock=clock)
    batches = []

    async def emit(tokens):
        batches.append(len(tokens))
        clock.now += 0.003  # each write costs 3 ms: later tokens fall due meanwhile

    sent = await turns.pump(sched, ["tok"] * 2000, emit, None, lambda: None)
    assert sent == 2000 and sum(batches) == 2000
    # the last token is due at 0.150 + 1.999 s; one write (3 ms) may still be under way then
    assert 0.150 + 1.999 + 0.003 <= clock.now - 100.0 <= 0.150 + 1.999 + 0.006 + 1e-6
    assert max(batches) <= 4 and len(batches) < 2000  # coalesced, never ahead of the clock


def test_schedule_unthrottled_releases_everything_after_ttft():
    clock = FakeClock()
    sched = schedule.TokenSchedule(0, 20, clock=clock)
    assert sched.due(500) == 0
    clock.now += 0.02
    assert sched.due(500) == 500


def test_tokens_are_at_most_four_characters_and_deterministic():
    text = "def f(x):\n    return x * 2  # ✓\n"
    tokens = replies.tokenize(text)
    assert "".join(tokens) == text and all(1 <= len(t) <= 4 for t in tokens)
    assert tokens == replies.tokenize(text)
    assert len(replies.tokenize(replies.generated_text(37))) == 37


def test_fault_spec_parsing():
    fault = faults.parse_fault_spec("rate_limit:times=2,retry_after=1.5,transport=ws")
    assert fault.to_dict() == {"kind": "rate_limit", "times": 2, "transport": "ws",
                               "retry_after": 1.5}
    for bad in ("nosuch", "drop:after_tokens", "drop:bogus=1", "stall:seconds=x",
                "drop:transport=carrier-pigeon"):
        with pytest.raises(faults.FaultSpecError):
            faults.parse_fault_spec(bad)


@pytest.mark.parametrize("spec, words", [
    ("server_error:status=99999", "between 500 and 599"),
    ("server_error:status=200", "between 500 and 599"),
    ("html:status=99", "between 200 and 599"),
    ("server_error:status=502.5", "whole number"),
    ("stall:seconds=-1", "between 0"),
    ("stall:seconds=nan", "must be a number"),
    ("rate_limit:retry_after=-2", "between 0"),
    ("drop:after_tokens=1.5", "whole number"),
    ("concurrency_limit:max_concurrent=0", "between 1"),
    ("drop:times=2.5", "times must be a whole number"),
    ("drop:times=-2", "times must be a whole number"),
])
def test_fault_spec_rejects_impossible_values(spec, words):
    with pytest.raises(faults.FaultSpecError) as info:
        faults.parse_fault_spec(spec)
    assert words in str(info.value)


def test_fault_spec_accepts_the_edges():
    for spec in ("server_error:status=500", "server_error:status=599", "html:status=502",
                 "stall:seconds=0", "drop:times=-1", "drop:times=0", "ws_close:after_responses=0"):
        faults.parse_fault_spec(spec)


def test_control_endpoint_rejects_an_impossible_status(sim):
    with http(sim) as client:
        resp = client.post("/_sim/faults",
                           json={"faults": [{"kind": "server_error", "status": 99999}]})
    assert resp.status_code == 400 and "between 500 and 599" in resp.text


def test_control_endpoints_reject_bad_input(sim):
    with http(sim) as client:
        assert client.post("/_sim/faults", json={"faults": [{"kind": "nosuch"}]}).status_code == 400
        assert client.post("/_sim/faults", json=[]).status_code == 400
        assert client.post("/_sim/config", json={"bogus": 1}).status_code == 400
    sim.configure(tps=0, models="a,b")
    assert [m.id for m in sdk(sim).models.list()] == ["a", "b"]
    sim.reset()
    assert len(sdk(sim).models.list().data) == 2


# ---- the process and the command ---------------------------------------------------------

def test_cli_script_faults_and_api_key(tmp_path):
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"replies": [{"match": "hi", "text": "scripted!"}],
                                "default": "dflt"}))
    with SimProcess("--script", str(path), "--api-key", "k-123", "--models", "m1",
                    "--fault", "rate_limit:times=1,retry_after=3", tps=0, ttft_ms=0) as proc:
        client = sdk(proc, key="k-123")
        with pytest.raises(openai.RateLimitError):
            client.chat.completions.create(model="m1", messages=[{"role": "user", "content": "hi"}])
        reply = client.chat.completions.create(model="m1", messages=[
            {"role": "user", "content": "oh hi"}])
        assert reply.choices[0].message.content == "scripted!"
        with pytest.raises(openai.AuthenticationError):
            sdk(proc, key="k-1234").models.list()
        proc.reset()  # back to the start-up state, command-line fault included
        with pytest.raises(openai.RateLimitError):
            client.chat.completions.create(model="m1", messages=[{"role": "user", "content": "x"}])
        pid = proc.pid
    assert not proc.alive()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # stopped and reaped: no zombie left


def test_a_sim_that_cannot_start_reports_why():
    with pytest.raises(ConnectionFailed) as info:
        SimProcess("--fault", "nosuch", tps=0).start()
    assert "unknown fault kind" in str(info.value)
    assert "exited with code 2" in str(info.value)


def test_drop_on_a_non_streaming_request(sim):
    sim.set_faults([{"kind": "drop"}])
    with http(sim) as client:
        with pytest.raises(httpx.RemoteProtocolError):
            client.post("/v1/responses", json={**RESP_BODY, "stream": False})


def test_get_responses_without_upgrade_is_405(sim):
    with http(sim) as client:
        assert client.get("/v1/responses").status_code == 405


def test_the_command_reports_a_bad_fault_without_a_traceback():
    from click.testing import CliRunner

    from spark_pair.cli.main import main

    result = CliRunner().invoke(main, ["sim", "--fault", "drop:after_tokens=x"])
    assert result.exit_code == 2
    assert "bad --fault" in result.output and "hint:" in result.output
    assert "Traceback" not in result.output


def test_the_command_reports_an_impossible_fault_value_without_a_traceback():
    from click.testing import CliRunner

    from spark_pair.cli.main import main

    result = CliRunner().invoke(main, ["sim", "--fault", "server_error:status=99999"])
    assert result.exit_code == 2 and "between 500 and 599" in result.output
    assert "Traceback" not in result.output


# ---- conversation memory ("remember N" / "what number ...?") -------------------------------

REMEMBER = "Remember the number 42. Reply only with OK."
RECALL = "What number did I ask you to remember? Reply with the number only."


def test_chat_recalls_from_the_history_it_is_sent(sim):
    with http(sim) as client:
        def ask(messages: list[dict], stream: bool = False) -> str:
            resp = client.post("/v1/chat/completions", json={
                "model": MODEL, "messages": messages, "stream": stream})
            assert resp.status_code == 200
            return sse_texts(resp.text) if stream else \
                resp.json()["choices"][0]["message"]["content"]

        ack = ask([{"role": "user", "content": REMEMBER}])
        assert ack == "OK, I will remember 42."
        history = [
            {"role": "user", "content": "remember 7"},
            {"role": "assistant", "content": "ok"},
            {"role": "user", "content": REMEMBER},
            {"role": "assistant", "content": ack},
        ]
        assert ask([*history, {"role": "user", "content": RECALL}]) == "42"
        assert ask([*history, {"role": "user", "content": "Which number was it?"}], True) == "42"
        # the same question without the history: nothing to recall
        assert ask([{"role": "user", "content": RECALL}]) == "I don't know."
        # the assistant saying "remember 42" is not the user asking for it
        assert ask([{"role": "assistant", "content": ack},
                    {"role": "user", "content": RECALL}]) == "I don't know."


def test_responses_sse_recalls_through_previous_response_id_only(sim):
    with http(sim) as client:
        def turn(**body) -> tuple[str, str]:
            resp = client.post("/v1/responses", json={"model": MODEL, "stream": True, **body})
            assert resp.status_code == 200, resp.text
            done = [json.loads(line[6:]) for line in resp.text.split("\n")
                    if line.startswith("data: {") and "response.completed" in line]
            return sse_texts(resp.text), done[-1]["response"]["id"]

        ack, first = turn(input=REMEMBER)
        assert ack == "OK, I will remember 42."
        _, second = turn(input="unrelated", previous_response_id=first)
        assert turn(input=RECALL, previous_response_id=second)[0] == "42"
        assert turn(input=RECALL)[0] == "I don't know."  # no history, no chain
        # store=false responses cannot be continued over HTTP; unknown ids are refused
        _, unstored = turn(input=REMEMBER, store=False)
        for rid in (unstored, "resp_nope"):
            resp = client.post("/v1/responses", json={"model": MODEL, "input": RECALL,
                                                      "previous_response_id": rid})
            assert resp.status_code == 400
            assert resp.json()["error"]["code"] == "previous_response_not_found"
        # a non-streaming continuation works the same way
        resp = client.post("/v1/responses", json={"model": MODEL, "input": RECALL,
                                                  "previous_response_id": first})
        assert resp.json()["output"][0]["content"][0]["text"] == "42"
    sim.reset()  # reset forgets the stored responses
    with http(sim) as client:
        resp = client.post("/v1/responses", json={"model": MODEL, "input": RECALL,
                                                  "previous_response_id": first})
        assert resp.status_code == 400


async def test_ws_recalls_only_along_the_chain_on_its_socket(sim):
    async with ws_connect(sim) as ws:
        warm = await ws_turn(ws, generate=False, input=[{"role": "user", "content": REMEMBER}])
        first = await ws_turn(ws, input=[{"role": "user", "content": "remember 5"}])
        assert deltas(first) == "OK, I will remember 5."
        # chained to the pre-warm response, whose input asked to remember 42
        recalled = await ws_turn(ws, input=[{"role": "user", "content": RECALL}],
                                 previous_response_id=warm[-1]["response"]["id"])
        assert deltas(recalled) == "42"
        again = await ws_turn(ws, input=[{"role": "user", "content": "Can you recall it?"}],
                              previous_response_id=recalled[-1]["response"]["id"])
        assert deltas(again).startswith("w00 w01")  # no "number": generated text as usual
        chained = await ws_turn(ws, input=[{"role": "user", "content": "recall the number"}],
                                previous_response_id=first[-1]["response"]["id"])
        assert deltas(chained) == "5"
        # same socket, no previous_response_id and no history: the conversation is lost
        lost = await ws_turn(ws, input=[{"role": "user", "content": RECALL}])
        assert deltas(lost) == "I don't know."


def test_a_scripted_reply_wins_over_the_memory_rule(sim):
    sim.configure(replies=[{"match": "What number", "text": "scripted"}], default="dflt")
    with http(sim) as client:
        resp = client.post("/v1/responses", json={"model": MODEL, "input": [
            {"role": "user", "content": REMEMBER}, {"role": "user", "content": RECALL}]})
        assert resp.json()["output"][0]["content"][0]["text"] == "scripted"
        resp = client.post("/v1/responses", json={"model": MODEL, "input": "remember 9"})
        assert resp.json()["output"][0]["content"][0]["text"] == "OK, I will remember 9."
        resp = client.post("/v1/responses", json={"model": MODEL, "input": "hello"})
        assert resp.json()["output"][0]["content"][0]["text"] == "dflt"


def test_memory_rule_and_response_store_units():
    from spark_pair.sim.memory import ResponseStore, memory_reply

    assert memory_reply("hello", []) is None
    assert memory_reply("Please remember -3 for me", []) == "OK, I will remember -3."
    assert memory_reply(RECALL, [("user", REMEMBER), ("user", "remember 8"),
                                 ("assistant", "remember 9")]) == "8"
    assert memory_reply("Remember the number 1 and then 2?", []) == "OK, I will remember 1."
    store = ResponseStore(limit=2)
    store.put("a", None, [("user", "remember 1")])
    store.put("b", "a", [("user", "x")])
    assert store.history("b") == [("user", "remember 1"), ("user", "x")]
    store.put("c", "b", [("user", "y")])
    assert "a" not in store and len(store) == 2
    assert store.history("c") == [("user", "x"), ("user", "y")]  # the chain is cut at "a"


# ---- replies that depend on the check output and the model --------------------------------

def test_scripted_reply_depends_on_the_check_output_and_the_model(sim):
    sim.configure(replies=[
        {"match": "", "check": "ZeroDivisionError", "text": "fix for the division"},
        {"match": "", "check": "", "model": "gpt-5.3-codex", "text": "the stronger one"},
        {"match": "make", "text": "first draft"}])
    client = sdk(sim)

    def ask(text: str, model: str = MODEL) -> str:
        reply = client.chat.completions.create(
            model=model, messages=[{"role": "user", "content": text}])
        return reply.choices[0].message.content

    assert ask("make it so") == "first draft"  # no check output: the check replies pass
    failed = "make it pass:\n```check-output\nE   ZeroDivisionError: division by zero\n```\n"
    assert ask(failed) == "fix for the division"
    other = "make it pass:\n```check-output\nAssertionError\n```\n"
    assert ask(other) == "first draft"  # a check output that names something else
    assert ask(other, "gpt-5.3-codex") == "the stronger one"
    # the sim's own reading of a fix round's block
    assert replies.check_output(failed) == "E   ZeroDivisionError: division by zero"
    assert replies.check_output("no block") is None
