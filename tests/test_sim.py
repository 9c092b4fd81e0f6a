"""The simulator, exercised as a real process over real sockets."""

from __future__ import annotations

import json

import httpx
import openai
import pytest

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
