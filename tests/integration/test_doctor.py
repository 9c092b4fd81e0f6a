"""doctor against the simulator process: healthy, then one test per injected fault."""

from __future__ import annotations

import socket

import pytest

from spark_pair.base.exitcodes import ExitCode
from spark_pair.cli.commands.doctor import exit_code
from spark_pair.ops.doctor import DoctorConfig, DoctorReport, run_doctor, url_problems

MODEL, FALLBACK = "gpt-5.3-codex-spark", "gpt-5.3-codex"
ORDER = ["config", "base_url", "connect", "auth", "models", "request", "stream", "ws", "memory",
         "fallback", "telemetry"]


# The stream check fails a stream whose deltas all arrive at once (a buffering proxy). The
# tests pace the simulator's streams so that only a real buffer bunches them: an unpaced
# stream on a busy machine may reach the client in one burst after a pause, and a buffered
# one must be long enough that reading its deltas takes a small part of it.
PACED = dict(tps=150, ttft_ms=0)  # 64 deltas over about 0.4 s


def config(sim, **kw) -> DoctorConfig:
    base = dict(base_url=sim.base_url, api_key="sk-test-doctor-key", model=MODEL,
                fallbacks=[FALLBACK], check_timeout_s=3.0)
    base.update(kw)
    return DoctorConfig(**base)


def by_id(report: DoctorReport) -> dict:
    return {r.id: r for r in report.results}


def assert_fails_at(report: DoctorReport, check: str, error_class: str) -> None:
    results = by_id(report)
    assert [r.id for r in report.results] == ORDER
    assert report.first_failure is not None and report.first_failure.id == check, \
        [(r.id, r.status, r.detail) for r in report.results]
    assert results[check].error_class == error_class
    assert results[check].hint
    assert exit_code(report) == ExitCode.FAILURE


async def test_healthy_simulator_passes_every_check(sim):
    sim.configure(**PACED,
                  replies=[{"match": "What number", "text": "You asked me to remember 42."}])
    seen = []
    report = await run_doctor(config(sim), on_result=seen.append)
    assert [r.id for r in seen] == ORDER
    # (telemetry is off: its check is skipped)
    assert [r.status for r in report.results] == ["pass"] * (len(ORDER) - 1) + ["skip"], \
        [(r.id, r.detail, r.hint) for r in report.results]
    assert report.ok and exit_code(report) == ExitCode.OK
    stream = by_id(report)["stream"].data
    assert stream["api"] == "responses" and stream["deltas"] > 8 and stream["usage"]
    assert "too fast" not in by_id(report)["stream"].detail  # buffering was really judged
    assert "previous_response_id" in by_id(report)["memory"].detail
    # the memory check really chained on one socket: the second turn named the first
    ws_bodies = [e["body"] for e in sim.requests() if e["transport"] == "ws" and e["body"]]
    assert any(b.get("previous_response_id") for b in ws_bodies)
    assert "sk-test-doctor-key" not in str(report.as_dict())


@pytest.mark.parametrize("transport", ["auto", "responses", "chat"])
async def test_plain_simulator_passes_memory_by_really_keeping_the_conversation(sim, transport):
    # no script: the simulator recalls 42 only from the history or the chain it was given
    report = await run_doctor(config(sim, transport=transport))
    memory = by_id(report)["memory"]
    assert memory.status == "pass", (memory.detail, memory.hint)
    assert ("previous_response_id" in memory.detail) == (transport == "auto")


async def test_memory_fails_when_the_answer_lacks_42(sim):
    # as a server that lost the conversation answers
    sim.configure(replies=[{"match": "What number", "text": "I don't know."}])
    report = await run_doctor(config(sim))
    assert by_id(report)["memory"].status == "fail"
    assert "42" in by_id(report)["memory"].detail
    assert "I don't know" in by_id(report)["memory"].detail


@pytest.mark.parametrize("transport", ["chat", "responses"])
async def test_memory_failing_with_the_history_resent_blames_the_model(sim, transport):
    # the whole conversation went to the server: it cannot have dropped it
    sim.configure(replies=[{"match": "What number", "text": "I don't know."}])
    report = await run_doctor(config(sim, transport=transport))
    memory = by_id(report)["memory"]
    assert memory.status == "fail" and "I don't know" in memory.detail
    assert "full history resent" in memory.detail
    assert "previous_response_id" not in memory.hint and "drops" not in memory.hint
    assert "too weak" in memory.hint and "stronger" in memory.hint
    recall = [e["body"] for e in sim.requests() if "What number" in str(e["body"])]
    assert recall and all("Remember the number 42" in str(b) for b in recall)


async def test_memory_failing_when_chained_suspects_the_server_too(sim):
    sim.configure(replies=[{"match": "What number", "text": "I don't know."}])
    report = await run_doctor(config(sim))  # auto: the WebSocket mode, chained
    memory = by_id(report)["memory"]
    assert memory.status == "fail" and "previous_response_id" in memory.detail
    assert "drops the conversation" in memory.hint and "too weak" in memory.hint


async def test_wrong_key_fails_auth_and_explains(sim):
    sim.configure(api_key="sk-the-right-key-123")
    report = await run_doctor(config(sim, api_key="sk-a-wrong-key-456"))
    assert_fails_at(report, "auth", "auth")
    auth = by_id(report)["auth"]
    assert "401" in auth.detail and "refused" in auth.hint
    assert all(by_id(report)[c].status == "skip" for c in ORDER[4:])
    assert "sk-a-wrong-key-456" not in str(report.as_dict())


async def test_bearer_prefix_in_the_key_is_named(sim):
    sim.configure(api_key="sk-the-right-key-123")
    report = await run_doctor(config(sim, api_key="Bearer sk-the-right-key-123"))
    assert_fails_at(report, "auth", "auth")
    assert "Bearer" in by_id(report)["auth"].hint


async def test_missing_key_names_the_env_var(sim):
    sim.configure(api_key="sk-the-right-key-123")
    report = await run_doctor(config(sim, api_key=None, api_key_env="MY_SPARK_KEY"))
    assert_fails_at(report, "auth", "auth")
    assert "MY_SPARK_KEY" in by_id(report)["auth"].hint


async def test_doubled_v1_fails_the_url_check_and_shows_the_fix(sim):
    sim.configure(replies=[{"match": "What number", "text": "42"}])
    report = await run_doctor(config(sim, base_url=sim.base_url + "/v1/v1"))
    assert_fails_at(report, "base_url", "endpoint")
    url_check = by_id(report)["base_url"]
    assert "/v1 twice" in url_check.detail
    assert f"this run uses {sim.base_url}" in url_check.hint
    # the rest probes the corrected URL, like the client does
    assert [r.status for r in report.results[2:]] == ["pass"] * (len(ORDER) - 3) + ["skip"]


async def test_a_url_the_loader_corrected_still_fails_the_url_check(sim):
    sim.configure(replies=[{"match": "What number", "text": "42"}])
    warning = ("base_url ended with the endpoint path /v1/chat/completions; spark-pair "
               "appends it itself, removed it")
    report = await run_doctor(config(sim, warnings=[warning],
                                     sources={"model.base_url": "env SPARK_PAIR_BASE_URL"}))
    assert_fails_at(report, "base_url", "endpoint")
    assert "env SPARK_PAIR_BASE_URL" in by_id(report)["base_url"].hint


async def test_unknown_model_fails_models_and_lists_the_ids(sim):
    report = await run_doctor(config(sim, model="gpt-5.3-codex-sprint"))
    assert_fails_at(report, "models", "model_not_found")
    assert MODEL in by_id(report)["models"].detail
    assert "spark-pair doctor" not in by_id(report)["models"].hint  # we are in doctor
    assert by_id(report)["request"].status == "skip"


async def test_rate_limit_fails_the_request_check(sim):
    sim.set_faults([{"kind": "rate_limit", "transport": "chat", "retry_after": 7}])
    report = await run_doctor(config(sim))
    assert_fails_at(report, "request", "rate_limit")
    result = by_id(report)["request"]
    assert "429" in result.detail and result.data["retry_after"] == 7
    assert "Retry-After: 7 s" in result.detail


async def test_server_error_fails_the_request_check(sim):
    sim.set_faults([{"kind": "server_error", "transport": "chat"}])
    report = await run_doctor(config(sim))
    assert_fails_at(report, "request", "server")
    assert "503" in by_id(report)["request"].detail


async def test_html_error_page_is_shown_as_an_excerpt(sim):
    sim.set_faults([{"kind": "html", "transport": "models"}])
    report = await run_doctor(config(sim))
    assert_fails_at(report, "models", "protocol")
    models = by_id(report)["models"]
    assert "Bad Gateway" in models.detail and "text/html" in models.detail
    assert "event stream" not in models.detail and "HTML page" in models.detail
    assert "login page" in models.hint and "API root" in models.hint  # (said once)
    auth = by_id(report)["auth"]  # an HTML page says nothing about the key
    assert auth.status == "skip" and "nothing about the key" in auth.detail


async def test_html_on_the_plain_request_is_not_called_an_event_stream(sim):
    sim.set_faults([{"kind": "html", "transport": "chat"}])
    report = await run_doctor(config(sim))
    assert_fails_at(report, "request", "protocol")
    request = by_id(report)["request"]
    assert "HTML page" in request.detail and "event stream" not in request.detail
    assert "base_url" in request.hint


async def test_wrong_path_fails_the_models_check_not_the_key(sim):
    report = await run_doctor(config(sim, base_url=sim.base_url + "/api"))
    assert_fails_at(report, "models", "endpoint")
    assert by_id(report)["auth"].status == "skip"
    assert "404" in by_id(report)["models"].detail
    assert "API root" in by_id(report)["models"].hint


@pytest.mark.parametrize("fault,error_class", [
    ({"kind": "rate_limit", "transport": "models", "retry_after": 7}, "rate_limit"),
    ({"kind": "server_error", "transport": "models"}, "server"),
])
async def test_models_list_failures_are_not_blamed_on_the_key(sim, fault, error_class):
    sim.set_faults([fault])
    report = await run_doctor(config(sim))
    assert_fails_at(report, "models", error_class)
    assert by_id(report)["auth"].status == "skip"
    assert "refused" not in by_id(report)["models"].hint
    if error_class == "rate_limit":
        assert "Retry-After: 7 s" in by_id(report)["models"].detail


async def test_a_wrong_key_still_fails_the_key_check_when_models_has_a_fault(sim):
    sim.configure(api_key="sk-the-right-key-123")
    sim.set_faults([{"kind": "server_error", "transport": "models"}])
    report = await run_doctor(config(sim, api_key="sk-a-wrong-key-456"))
    assert_fails_at(report, "auth", "auth")


async def test_connection_refused_is_a_link_problem(sim):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    report = await run_doctor(config(sim, base_url=f"http://127.0.0.1:{port}"))
    assert_fails_at(report, "connect", "connection")
    assert "refused" in by_id(report)["connect"].detail
    assert "link problem" in by_id(report)["connect"].hint


@pytest.mark.xdist_group("timing")  # times a pace: the timing tests run one at a time
async def test_stalled_stream_fails_within_the_check_timeout(sim):
    sim.set_faults([{"kind": "stall", "transport": "responses", "after_tokens": 3}])
    report = await run_doctor(config(sim, check_timeout_s=1.0))
    assert_fails_at(report, "stream", "timeout")
    stream = by_id(report)["stream"]
    assert "stalled: 3 deltas arrived, then nothing for 1 s" in stream.detail
    assert stream.duration_ms < 10_000  # bounded by the check timeout, not the 3600 s stall
    assert "--check-timeout" in stream.hint


@pytest.mark.xdist_group("timing")  # times a pace: the timing tests run one at a time
@pytest.mark.parametrize("transport", ["chat", "responses"])
async def test_a_stream_left_open_after_its_last_event_passes(sim, transport):
    """No [DONE] and no end of the body (some servers and gateways): the stream ended at its
    finish reason (chat) or response.completed, so it is not called stalled."""
    sim.configure(**PACED, replies=[{"match": "What number", "text": "42"}])
    sim.set_faults([{"kind": "no_done", "times": -1}])
    report = await run_doctor(config(sim, transport=transport, check_timeout_s=8.0))
    stream = by_id(report)["stream"]
    assert stream.status == "pass", (stream.detail, stream.hint)
    assert stream.data["api"] == transport and stream.data["usage"]
    assert stream.duration_ms < 5_000  # not the 8 s check timeout


@pytest.mark.parametrize("profile", ["llama.cpp", "ollama"])
async def test_a_failure_mid_stream_is_the_servers_own_error(profile):
    """llama.cpp sends it as an `error:` field, Ollama as a bare JSON line: not 'no text'."""
    from spark_pair.sim.process import SimProcess

    with SimProcess(tps=0, ttft_ms=0, profile=profile) as server:
        server.set_faults([{"kind": "stream_error", "status": 400, "after_tokens": 0,
                            "times": -1}])
        report = await run_doctor(config(server, transport="chat", fallbacks=[]))
    stream = by_id(report)["stream"]
    assert stream.status == "fail" and stream.error_class == "bad_request", stream.detail
    assert "simulated failure mid-stream (400)" in stream.detail


@pytest.mark.parametrize("fault", [
    {"kind": "stall", "transport": "ws", "after_tokens": 3},
    {"kind": "ws_close"},
])
async def test_a_ws_fault_does_not_break_the_memory_check(sim, fault):
    sim.set_faults([fault])
    report = await run_doctor(config(sim, check_timeout_s=1.0))
    memory = by_id(report)["memory"]
    assert memory.status == "pass", (memory.detail, memory.hint)
    if fault["kind"] == "stall":
        assert by_id(report)["ws"].status == "fail"
        assert "--check-timeout" in by_id(report)["ws"].hint
        assert "history resent" in memory.detail  # over HTTP, not the stuck socket
    else:
        assert by_id(report)["ws"].status == "pass"
        assert "reconnected" in memory.detail


async def test_https_to_a_plain_http_port_suggests_http(sim):
    report = await run_doctor(config(sim, base_url=sim.base_url.replace("http://", "https://")))
    assert_fails_at(report, "connect", "connection")
    assert "http://127.0.0.1" in by_id(report)["connect"].hint


async def test_ws_refused_is_a_note_under_auto_and_a_failure_when_demanded(sim):
    sim.configure(**PACED, replies=[{"match": "What number", "text": "42"}])
    sim.set_faults([{"kind": "ws_refuse", "times": -1}])
    report = await run_doctor(config(sim))
    ws = by_id(report)["ws"]
    assert report.ok and ws.status == "pass", (ws.detail, ws.hint)
    assert "does not offer the WebSocket mode" in ws.note
    assert by_id(report)["memory"].status == "pass"  # over HTTP with the history resent
    assert by_id(report)["fallback"].status == "pass"

    report = await run_doctor(config(sim, transport="ws"))
    assert_fails_at(report, "ws", "endpoint")
    assert "demands it" in by_id(report)["ws"].hint


async def test_missing_fallback_fails_the_fallback_check(sim):
    report = await run_doctor(config(sim, fallbacks=["gpt-retired-1"]))
    assert by_id(report)["fallback"].status == "fail"
    assert by_id(report)["fallback"].error_class == "model_not_found"


async def test_any_missing_fallback_fails_and_sets_the_exit_code(sim):
    sim.configure(replies=[{"match": "What number", "text": "42"}])
    report = await run_doctor(config(sim, fallbacks=[FALLBACK, "gpt-retired-2"]))
    assert_fails_at(report, "fallback", "model_not_found")
    assert "gpt-retired-2" in by_id(report)["fallback"].detail
    assert not report.ok


async def test_config_error_skips_everything_and_exits_config(sim):
    from spark_pair.base.errors import ConfigError

    err = ConfigError("config.toml line 3: unknown field 'modle'", hint="did you mean 'model'?")
    report = await run_doctor(DoctorConfig(config_error=err))
    assert report.results[0].status == "fail" and "modle" in report.results[0].detail
    assert all(r.status == "skip" for r in report.results[1:])
    assert exit_code(report) == ExitCode.CONFIG


async def test_chat_only_transport_skips_ws(sim):
    sim.configure(**PACED, replies=[{"match": "What number", "text": "42"}])
    report = await run_doctor(config(sim, transport="chat"))
    assert by_id(report)["ws"].status == "skip"
    assert by_id(report)["stream"].data["api"] == "chat"
    assert report.ok


@pytest.mark.parametrize("url,fragment", [
    ("https://host/api/v1/v1", "/v1 twice"),
    ("https://host/api/v1/chat/completions", "endpoint"),
    ("https://host/api/api", "/api twice"),
    ("host/api", "http"),
    ("https://host/api?utm_source=x", "query"),
    (" https://host/api\n", "whitespace"),
])
def test_url_problems(url, fragment):
    assert any(fragment in p for p in url_problems(url))


def test_good_urls_have_no_problems():
    assert url_problems("https://gateway.example/api") == []
    assert url_problems("http://127.0.0.1:8080/") == []
    assert url_problems("https://gateway.example/api/v1") == []
    assert url_problems("http://127.0.0.1:8080/v1") == []


async def test_key_with_a_trailing_newline_is_noted(sim):
    sim.configure(api_key="sk-the-right-key-123", replies=[{"match": "What number", "text": "42"}])
    report = await run_doctor(config(sim, api_key="sk-the-right-key-123\n"))
    auth = by_id(report)["auth"]
    assert auth.status == "pass" and "whitespace" in auth.detail


async def test_a_buffering_proxy_is_detected(sim):
    """A real proxy on loopback that holds the whole answer back, then sends it at once."""
    import httpx
    from aiohttp import web

    sim.configure(tps=250, ttft_ms=0, tokens=300,  # held back by the proxy for 1.2 s
                  replies=[{"match": "What number", "text": "42"}])

    async def forward(request: web.Request) -> web.Response:
        async with httpx.AsyncClient(timeout=10) as client:
            upstream = await client.request(request.method, sim.base_url + request.path,
                                            content=await request.read(),
                                            headers={"Content-Type": "application/json"})
        return web.Response(status=upstream.status_code, body=upstream.content,
                            headers={"Content-Type": upstream.headers["content-type"]})

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", forward)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    try:
        report = await run_doctor(config(sim, base_url=f"http://127.0.0.1:{port}",
                                         transport="responses"))
    finally:
        await runner.cleanup()
    assert_fails_at(report, "stream", "timeout")
    assert "all at once" in by_id(report)["stream"].detail
    assert "buffers" in by_id(report)["stream"].hint


@pytest.mark.xdist_group("timing")  # times a pace: the timing tests run one at a time
@pytest.mark.parametrize("transport", ["responses", "chat"])
async def test_a_fast_stream_after_a_slow_first_token_passes(sim, transport):
    """64 tokens at 1,200 tok/s take 53 ms after a 300 ms TTFT: a small part of the wait, yet
    streamed (many reads), so not a buffer."""
    sim.configure(tps=1200, ttft_ms=300, replies=[{"match": "What number", "text": "42"}])
    report = await run_doctor(config(sim, transport=transport))
    stream = by_id(report)["stream"]
    assert stream.status == "pass", (stream.detail, stream.hint)
    assert "too fast" not in stream.detail  # buffering was really judged
    assert stream.data["ttft_ms"] >= 300 and stream.data["deltas"] >= 32
    assert report.ok and exit_code(report) == ExitCode.OK


async def test_a_fast_llama_cpp_server_passes_the_stream_check():
    from spark_pair.sim.process import SimProcess

    with SimProcess(tps=2000, ttft_ms=300, profile="llama.cpp") as server:
        report = await run_doctor(config(server, fallbacks=[], transport="auto"))
    stream = by_id(report)["stream"]
    assert stream.status == "pass", (stream.detail, stream.hint)
    assert stream.data["api"] == "chat" and not stream.data["usage"]


async def test_a_buffering_server_fails_the_stream_check(sim):
    """The simulator's `buffer` fault holds each stream's body back until its end: it fails
    even for a fast model, and only after a second stream looked the same."""
    sim.configure(tps=1200, ttft_ms=300, replies=[{"match": "What number", "text": "42"}])
    sim.set_faults([{"kind": "buffer", "times": -1}])
    report = await run_doctor(config(sim, transport="chat"))
    stream = by_id(report)["stream"]
    assert stream.status == "fail" and stream.error_class == "timeout", stream.detail
    assert "all at once" in stream.detail and "1 network read" in stream.detail
    assert "buffers" in stream.hint
    streamed = [e for e in sim.requests() if (e["body"] or {}).get("stream")]
    assert [e["fault"] for e in streamed] == ["buffer", "buffer"]


async def test_a_stream_held_back_once_is_streamed_again(sim):
    # a client that stalled once reads one stream in a lump; a buffer holds back every one
    sim.configure(tps=1200, ttft_ms=300, replies=[{"match": "What number", "text": "42"}])
    sim.set_faults([{"kind": "buffer", "times": 2}])  # the plain request's and one stream's
    report = await run_doctor(config(sim, transport="chat"))
    stream = by_id(report)["stream"]
    assert stream.status == "pass", (stream.detail, stream.hint)
    streamed = [e for e in sim.requests() if (e["body"] or {}).get("stream")]
    assert [e["fault"] for e in streamed] == ["buffer", None]


async def test_stream_check_takes_ttft_and_rate_from_protocol_metrics(sim, monkeypatch):
    """TTFT and tok/s have one formula (protocol.metrics.timing), doctor included."""
    from spark_pair.protocol import metrics

    calls = []
    real = metrics.timing

    def spy(*args, **kw):
        calls.append(real(*args, **kw))
        return calls[-1]

    monkeypatch.setattr(metrics, "timing", spy)
    sim.configure(tps=1000, ttft_ms=10, tokens=200)
    report = await run_doctor(config(sim, transport="responses"))
    stream = by_id(report)["stream"]
    assert stream.status == "pass" and calls, stream.detail
    assert stream.data["ttft_ms"] == round(calls[-1].ttft_s * 1000, 1)
    assert stream.data["tokens_per_s"] == round(calls[-1].tokens_per_s, 1)


async def test_doctor_sends_the_bodies_a_turn_sends(sim):
    # a check that passes with a token-limit field the turns never send proves nothing
    from spark_pair.protocol.chat import chat_body
    from spark_pair.protocol.events import Message, TurnRequest

    turn_keys = set(chat_body(TurnRequest("", [Message("user", "x")]), MODEL, 32, None))
    sim.clear_requests()
    report = await run_doctor(config(sim, transport="chat"))
    assert by_id(report)["request"].status == "pass"
    chat = [e["body"] for e in sim.requests() if e["body"] and "messages" in e["body"]]
    assert chat and all("max_completion_tokens" not in b and "max_tokens" in b for b in chat)
    streamed = [b for b in chat if b.get("stream")]
    assert streamed and all(set(b) == turn_keys for b in streamed)


@pytest.mark.xdist_group("timing")  # times a pace: the timing tests run one at a time
async def test_a_slow_stream_passes_with_its_measured_rate(sim):
    """Slow is not stalled: tokens still arriving at the limit pass with the measured tok/s."""
    sim.configure(tps=10, ttft_ms=0, replies=[
        {"match": "single word", "text": "ready"}, {"match": "Remember", "text": "OK"},
        {"match": "What number", "text": "42"}])
    report = await run_doctor(config(sim, check_timeout_s=1.5, transport="chat"))
    stream = by_id(report)["stream"]
    assert report.ok, [(r.id, r.detail, r.hint) for r in report.results]
    assert stream.data["ended"] == "limit" and 5 <= stream.data["tokens_per_s"] <= 15
    assert "slow but streaming" in stream.note and "tok/s" in stream.note
    assert stream.data["deltas"] < 64  # read up to the limit, not the whole reply
    # (a stall fails: test_stalled_stream_fails_within_the_check_timeout)


async def test_the_stream_check_reads_a_few_dozen_tokens(sim):
    sim.configure(**PACED, tokens=2000, replies=[{"match": "What number", "text": "42"}])
    report = await run_doctor(config(sim, transport="chat"))
    stream = by_id(report)["stream"]
    assert stream.status == "pass" and stream.data["tokens"] == 64
    chat = [e for e in sim.requests() if e["path"] == "/v1/chat/completions"
            and (e["body"] or {}).get("stream")]
    assert chat[0]["body"]["max_tokens"] == 64


@pytest.mark.xdist_group("timing")  # times a pace: the timing tests run one at a time
async def test_the_memory_check_gives_each_of_its_two_requests_the_limit(sim):
    """On a slow server each request of the memory check fits the limit; both together need
    not (a false alarm before)."""
    sim.configure(tps=20, ttft_ms=0, replies=[
        {"match": "single word", "text": "ready"},
        {"match": "What number", "text": "42, the number you asked me to keep. " * 2},
        {"match": "Remember", "text": "OK, I will keep that number in mind for you. " * 2}])
    report = await run_doctor(config(sim, check_timeout_s=1.5, transport="chat"))
    memory = by_id(report)["memory"]  # two replies of about 20 tokens at 20 tok/s: 2 s
    assert memory.status == "pass", (memory.detail, memory.hint)
    assert memory.duration_ms > 1500


async def test_a_slow_plain_request_is_a_note_when_the_stream_shows_tokens_arriving(sim):
    """A slow server that works: the plain request gets no complete answer in time, but the
    streaming check sees tokens arriving, so doctor passes with a note (run works too)."""
    sim.configure(tps=12, ttft_ms=0, replies=[
        {"match": "Remember", "text": "OK"}, {"match": "What number", "text": "42"}])
    report = await run_doctor(config(sim, check_timeout_s=1.0, transport="chat"))
    results = by_id(report)
    request = results["request"]
    assert report.ok, [(r.id, r.status, r.detail, r.hint) for r in report.results]
    assert request.status == "pass" and "slow: no complete answer within 1 s" in request.note
    assert "raise --check-timeout" in request.note
    assert "slow but streaming" in results["stream"].note
    assert [r.id for r in report.results][:7] == ["config", "base_url", "connect", "auth",
                                                  "models", "request", "stream"]


async def test_a_stalled_server_still_fails_the_plain_request(sim):
    sim.set_faults([{"kind": "stall", "after_tokens": 0, "times": -1}])
    report = await run_doctor(config(sim, check_timeout_s=1.0, transport="chat"))
    results = by_id(report)
    assert not report.ok and report.first_failure.id == "request"
    assert "no complete answer within 1 s" in results["request"].detail
    assert results["stream"].status == "fail" and results["memory"].status == "skip"


@pytest.mark.parametrize(("profile", "found"), [("llama.cpp", "chat"), ("vllm", "responses"),
                                                ("spark", "ws")])
async def test_what_doctor_found_is_what_the_first_turn_uses(tmp_path, profile, found):
    """Doctor keeps the transport auto settles on; the next client's first turn goes there
    at once, trying no mode the server lacks."""
    from support.clients import turn

    from spark_pair.protocol import offers
    from spark_pair.protocol.client import ClientOptions, ModelClient
    from spark_pair.sim.process import SimProcess

    cache = tmp_path / "transports.json"
    with SimProcess(**PACED, profile=profile) as server:
        server.configure(replies=[{"match": "What number", "text": "42"}])
        report = await run_doctor(config(server, fallbacks=[], transport_cache=cache))
        assert by_id(report)["stream"].status == "pass", by_id(report)["stream"].detail
        assert offers.recall(cache, server.base_url).transport == found
        server.clear_requests()
        opts = ClientOptions(base_url=server.base_url, api_key="sk-test-doctor-key",
                             model=MODEL, transport="auto")
        async with ModelClient(opts, transport_cache=cache) as c:
            done = await c.complete(turn())
        assert done.text and done.retries == 0
        assert [r["transport"] for r in server.requests()] == [found]
