"""The simulator, exercised as a real process over real sockets."""

from __future__ import annotations

import asyncio
import json

import httpx
import openai
import pytest
import websockets

from spark_pair.sim.process import SimProcess

MODEL = "gpt-5.3-codex-spark"
SCRIPTED = "Hello from the simulator: ünïcode ✓, \"quotes\", new\nlines.\n"


def sdk(sim: SimProcess, key: str = "test-key", retries: int = 0) -> openai.OpenAI:
    return openai.OpenAI(base_url=sim.base_url + "/v1", api_key=key, max_retries=retries,
                         http_client=httpx.Client(trust_env=False, timeout=10))


def script(sim: SimProcess) -> None:
    sim.configure(replies=[{"match": "greet", "text": SCRIPTED}], default="the default")


# ---- chat completions ----------------------------------------------------------------------

def test_sdk_parses_chat_stream_and_reassembles_the_text(sim):
    script(sim)
    stream = sdk(sim).chat.completions.create(
        model=MODEL, stream=True, stream_options={"include_usage": True},
        messages=[{"role": "system", "content": "be brief"}, {"role": "user", "content": "greet me"}],
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
        if event["type"] in ("response.completed", "response.failed", "error"):
            return events
    raise AssertionError("no terminal event")


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
