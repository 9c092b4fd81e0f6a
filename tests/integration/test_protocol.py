"""ModelClient against the simulator running as a real process on 127.0.0.1."""

from __future__ import annotations

import asyncio
import socket
from contextlib import aclosing

import pytest
from support.clients import MODEL, run, turn
from support.clock import SkippingClock

from spark_pair.base.errors import (
    AuthError,
    ConnectionFailed,
    IncompleteReply,
    ModelNotFound,
    ProtocolError,
    RateLimited,
    StreamDropped,
    StreamTimeout,
)
from spark_pair.protocol.client import ClientOptions, ModelClient
from spark_pair.protocol.events import (
    Completed,
    Failed,
    FirstToken,
    Message,
    ModelChanged,
    Retrying,
    Started,
    TextDelta,
    TransportChanged,
)
from spark_pair.protocol.records import RequestRecord
from spark_pair.sim.process import SimProcess

TEXT = "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-print('hi')\n+print('hello, wörld')\n" * 8
pytestmark = pytest.mark.timeout(30)


class ListRecorder:
    def __init__(self) -> None:
        self.records: list[RequestRecord] = []

    def record(self, rec: RequestRecord) -> None:
        self.records.append(rec)


def client(sim, transport: str = "ws", **kw) -> ModelClient:
    recorder = kw.pop("recorder", None) or ListRecorder()
    opts = ClientOptions(base_url=sim.base_url, api_key=kw.pop("api_key", "test-key-123"),
                         model=kw.pop("model", MODEL), transport=transport, **kw)
    c = ModelClient(opts, recorder=recorder)
    c.clock = SkippingClock()  # the retries' waits pass at once (recorded in c.clock.waits)
    return c


def streamed(events: list) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


@pytest.mark.parametrize("transport", ["ws", "responses", "chat"])
async def test_each_transport_streams_the_exact_text(sim, transport):
    sim.configure(default=TEXT)
    rec = ListRecorder()
    async with client(sim, transport, recorder=rec) as c:
        events = await run(c)
    assert isinstance(events[0], Started) and events[0].transport == transport
    done = events[-1]
    assert isinstance(done, Completed)
    assert done.text == TEXT and streamed(events) == TEXT
    assert done.usage is not None and done.usage.output_tokens == sim.requests()[-1][
        "output_tokens"]
    assert done.metrics.ttft_s is not None and done.metrics.duration_s >= done.metrics.ttft_s
    assert [r.status for r in rec.records] == ["ok"] and rec.records[0].transport == transport


@pytest.mark.parametrize("transport", ["ws", "responses", "chat"])
async def test_a_reply_the_context_window_ended_is_not_called_the_output_limit(sim, transport):
    # prompt + reply fill the server's 300-token window long before max_tokens (400)
    sim.configure(tps=0, ttft_ms=0, tokens=500, context=300)
    rec = ListRecorder()
    async with client(sim, transport, max_tokens=400, recorder=rec) as c:
        done = await c.complete(turn())
    assert isinstance(done.cut, IncompleteReply)
    tokens = done.usage.output_tokens
    assert 200 < tokens < 300 and not done.usage.estimated
    assert f"the server stopped it after {tokens} output tokens (below the max_tokens of 400)" \
        in done.cut.message
    assert "output limit" not in done.cut.message
    assert "raising max_tokens will not help" in done.cut.hint and "context" in done.cut.hint
    assert [(r.status, r.error_class) for r in rec.records] == [("cut", "incomplete")]


async def test_a_reply_with_no_output_is_recorded_as_cut(sim):
    sim.configure(default="")
    rec = ListRecorder()
    async with client(sim, "chat", recorder=rec) as c:
        done = await c.complete(turn())
    assert done.text == "" and done.cut is None  # not cut: the turn says what it makes of it
    assert "without any output" in done.shortfall().message
    assert [(r.status, r.error_class) for r in rec.records] == [("cut", "incomplete")]


@pytest.mark.parametrize("transport", ["ws", "responses", "chat"])
async def test_a_reply_cut_at_max_tokens_is_marked_cut_and_not_retried(sim, transport):
    sim.configure(default=TEXT)
    async with client(sim, transport, max_tokens=10) as c:
        events = await run(c)
        done = events[-1]
        assert isinstance(done, Completed) and done.text == TEXT[:40] == streamed(events)
        assert isinstance(done.cut, IncompleteReply) and not done.cut.retryable
        assert "the output limit of 10 tokens was reached" in done.cut.message
        assert "raise max_tokens" in done.cut.hint
        assert not any(isinstance(e, (Failed, Retrying)) for e in events)
        sim.configure(default="done")
        again = await run(c)  # the connection is still good for the next turn
    assert isinstance(again[-1], Completed) and again[-1].text == "done"
    assert len([r for r in sim.requests() if r["transport"] != "models"]) == 2  # no retry


@pytest.mark.parametrize("transport", ["ws", "responses", "chat"])
async def test_rate_limit_honours_retry_after(sim, transport):
    sim.set_faults([{"kind": "rate_limit", "retry_after": 1}])
    async with client(sim, transport) as c:
        events = await run(c)
    retrying = [e for e in events if isinstance(e, Retrying)]
    assert [(r.delay_s, r.reason) for r in retrying] == [(1.0, "rate_limit")]
    assert c.clock.waits == [1.0]  # as the server asked (waited for real: tests/e2e, run's TTFT)
    assert isinstance(events[-1], Completed) and events[-1].retries == 1
    log = [r for r in sim.requests() if r["transport"] != "models"]
    assert log[0]["status"] == 429 and log[-1]["status"] == 200


@pytest.mark.parametrize("transport", ["ws", "responses", "chat"])
async def test_server_error_is_retried(sim, transport):
    sim.set_faults([{"kind": "server_error", "status": 503}])
    async with client(sim, transport) as c:
        events = await run(c)
    assert [e.reason for e in events if isinstance(e, Retrying)] == ["server"]
    assert isinstance(events[-1], Completed)


@pytest.mark.parametrize("transport", ["ws", "responses", "chat"])
async def test_drop_mid_stream_yields_the_full_text_once(sim, transport):
    sim.configure(default=TEXT)
    sim.set_faults([{"kind": "drop", "after_tokens": 7}])
    async with client(sim, transport) as c:
        events = await run(c)
        conns = c.connection_count
    assert isinstance(events[-1], Completed) and events[-1].text == TEXT
    assert streamed(events) == TEXT
    assert [e.reason for e in events if isinstance(e, Retrying)] == ["dropped"]
    if transport == "ws":
        assert conns == 2
        second = sim.requests()[-1]["body"]
        assert "previous_response_id" not in second
        assert second["input"] == [{"role": "user", "content": "change x"}]


async def test_ws_drop_resends_full_input_not_the_chain(sim):
    history = [Message("user", "first"), Message("assistant", "ok")]
    async with client(sim, "ws") as c:
        first = await run(c)
        sim.set_faults([{"kind": "drop", "after_tokens": 3}])
        events = await run(c, turn("second", history))
    assert isinstance(first[-1], Completed) and isinstance(events[-1], Completed)
    bodies = [r["body"] for r in sim.requests()]
    assert bodies[1]["previous_response_id"] == first[-1].response_id
    assert "previous_response_id" not in bodies[2]
    assert [m["content"] for m in bodies[2]["input"]] == ["first", "ok", "second"]


async def test_ws_close_after_responses_reopens_quietly(sim):
    sim.set_faults([{"kind": "ws_close", "after_responses": 2}])
    async with client(sim, "ws") as c:
        results = [await run(c) for _ in range(4)]
        conns = c.connection_count
    for events in results:
        assert isinstance(events[-1], Completed)
        assert not [e for e in events if isinstance(e, (Retrying, TransportChanged, Failed))]
    assert conns == 2


@pytest.mark.parametrize("transport", ["responses", "chat"])
async def test_http_turns_reuse_one_connection(sim, transport):
    """A finished reply's stream is read to its end, so its connection serves the next turn
    (no new TCP and TLS handshake per turn)."""
    sim.configure(default=TEXT)
    async with client(sim, transport) as c:
        for _ in range(3):
            events = await run(c)
            assert isinstance(events[-1], Completed) and events[-1].text == TEXT
    log = [r for r in sim.requests() if r["transport"] == transport]
    assert len(log) == 3 and len({r["connection_id"] for r in log}) == 1


async def test_ten_ws_turns_use_one_connection_and_chain(sim):
    before = sim.stats()["ws_connections"]
    history: list[Message] = []
    async with client(sim, "ws") as c:
        for i in range(10):
            events = await run(c, turn(f"step {i}", history))
            done = events[-1]
            assert isinstance(done, Completed)
            history += [Message("user", f"step {i}"), Message("assistant", done.text)]
        assert c.connection_count == 1
    assert sim.stats()["ws_connections"] - before == 1
    log = sim.requests()
    assert len(log) == 10 and len({r["connection_id"] for r in log}) == 1
    assert "previous_response_id" not in log[0]["body"]
    for prev, entry in zip(log, log[1:], strict=False):
        assert entry["body"]["previous_response_id"] == prev["response_id"]
        assert entry["body"]["input"] == [{"role": "user", "content": entry["body"]["input"][0]
                                           ["content"]}]
    assert [r["body"]["input"][0]["content"] for r in log] == [f"step {i}" for i in range(10)]


@pytest.mark.parametrize("transport", ["ws", "responses", "chat"])
async def test_stall_times_out_then_retries(sim, transport):
    sim.configure(default=TEXT)
    sim.set_faults([{"kind": "stall", "after_tokens": 2, "seconds": 20}])
    async with client(sim, transport, timeout_s=0.3) as c:
        events = await run(c)
    assert [e.reason for e in events if isinstance(e, Retrying)] == ["timeout"]
    assert isinstance(events[-1], Completed) and events[-1].text == TEXT


async def test_stall_fails_bounded(sim):
    sim.set_faults([{"kind": "stall", "times": -1, "seconds": 20}])
    async with client(sim, "responses", timeout_s=0.2, max_retries=2) as c:
        events = await run(c)
    assert isinstance(events[-1], Failed) and isinstance(events[-1].error, StreamTimeout)
    assert events[-1].retries == 2
    assert len(sim.requests()) == 3


@pytest.mark.parametrize("transport", ["ws", "responses", "chat"])
async def test_wrong_key_is_attempted_once_and_never_leaks(sim, transport):
    sim.configure(api_key="the-right-key")
    secret = "sk-wrongwrongwrong123"
    rec = ListRecorder()
    async with client(sim, transport, api_key=secret, recorder=rec) as c:
        events = await run(c)
        assert secret not in repr(c)
    failed = events[-1]
    assert isinstance(failed, Failed) and isinstance(failed.error, AuthError)
    assert secret not in failed.error.describe() and secret not in str(failed.error.to_dict())
    assert secret not in repr(rec.records)
    assert len([r for r in sim.requests() if r["transport"] != "models"]) <= 1
    assert not [e for e in events if isinstance(e, Retrying)]


async def test_wrong_key_on_http_is_logged_once(sim):
    sim.configure(api_key="the-right-key")
    async with client(sim, "chat", api_key="nope", key_source="$TEAM_KEY") as c:
        events = await run(c)
    log = sim.requests()
    assert len(log) == 1 and log[0]["auth_ok"] is False and log[0]["status"] == 401
    assert "[credential used: API key from $TEAM_KEY]" in events[-1].error.message
    assert "OAuth" in events[-1].error.hint


@pytest.mark.parametrize("transport", ["ws", "responses", "chat"])
async def test_model_not_found_moves_to_the_fallback(sim, transport):
    async with client(sim, transport, model="gpt-retired", fallbacks=[MODEL]) as c:
        events = await run(c)
        assert c.model == MODEL
    changes = [e for e in events if isinstance(e, ModelChanged)]
    assert [(e.old, e.new) for e in changes] == [("gpt-retired", MODEL)]
    assert isinstance(events[-1], Completed)


async def test_all_models_missing_names_each(sim):
    async with client(sim, "responses", model="gone-a", fallbacks=["gone-b"]) as c:
        events = await run(c)
    err = events[-1].error
    assert isinstance(err, ModelNotFound) and "gone-a" in err.message and "gone-b" in err.message
    assert f"{sim.base_url}/v1/responses" in err.message


@pytest.mark.parametrize("transport, path", [("responses", "/v1/responses"),
                                             ("chat", "/v1/chat/completions"),
                                             ("ws", "/v1/responses")])
@pytest.mark.parametrize("status", [502, 404])
async def test_an_html_error_page_shows_an_excerpt_and_the_url(sim, transport, path, status):
    sim.set_faults([{"kind": "html", "times": -1, "status": status}])
    async with client(sim, transport, max_retries=0) as c:
        events = await run(c)
    err = events[-1].error
    scheme_url = sim.base_url.replace("http://", "ws://") if transport == "ws" else sim.base_url
    assert f"{scheme_url}{path}" in err.message
    assert "502 Bad Gateway Bad Gateway The proxy received an invalid response." in err.message
    assert "<" not in err.message


async def test_html_page_is_a_protocol_error_with_excerpt(sim):
    sim.set_faults([{"kind": "html", "times": -1}])
    async with client(sim, "chat") as c:
        events = await run(c)
    err = events[-1].error
    assert isinstance(err, ProtocolError) and "html" in err.message.lower()
    assert err.body and "<" in err.body
    assert len(sim.requests()) == 1


async def test_auto_falls_back_to_sse_when_ws_is_refused(sim, tmp_path):
    sim.set_faults([{"kind": "ws_refuse", "times": -1}])
    cache = tmp_path / "transport_cache.json"
    opts = ClientOptions(base_url=sim.base_url, api_key="k", model=MODEL)
    async with ModelClient(opts, transport_cache=cache) as c:
        events = await run(c)
        assert c.transport == "responses"
    changes = [e for e in events if isinstance(e, TransportChanged)]
    assert [(e.old, e.new) for e in changes] == [("ws", "responses")]
    assert changes[0].reason.startswith("no WebSocket mode here (HTTP 404 at ws://")
    assert "WebSocket mode is not available here" in changes[0].reason  # what the server said
    assert isinstance(events[-1], Completed)
    async with ModelClient(opts, transport_cache=cache) as c:
        assert c.transport == "responses"  # remembered per base URL


async def test_auto_names_why_it_leaves_a_transport_a_wrong_path_or_an_html_page(sim):
    """Not "not supported here" when the base URL is wrong or a web page answers."""
    opts = ClientOptions(base_url=sim.base_url + "/wrong/path", api_key="k", model=MODEL,
                         max_retries=0)
    async with ModelClient(opts) as c:
        events = await run(c)
    reasons = [e.reason for e in events if isinstance(e, TransportChanged)]
    assert len(reasons) == 2 and all("wrong base URL" in r and "HTTP 404" in r and
                                     "/wrong/path/v1/responses" in r for r in reasons), reasons
    sim.set_faults([{"kind": "html", "times": -1}])
    async with ModelClient(ClientOptions(base_url=sim.base_url, api_key="k", model=MODEL)) as c:
        events = await run(c)
    reasons = [e.reason for e in events if isinstance(e, TransportChanged)]
    assert len(reasons) == 1 and "answered with an HTML page (HTTP 200)" in reasons[0], reasons


async def test_ws_failures_fall_back_to_http_for_good(sim):
    sim.configure(default=TEXT)
    sim.set_faults([{"kind": "drop", "times": -1, "transport": "ws", "after_tokens": 2}])
    async with client(sim, "ws", reconnect_attempts=2) as c:
        events = await run(c)
        assert c.transport == "responses"
        again = await run(c)
    changes = [e for e in events if isinstance(e, TransportChanged)]
    assert [(e.old, e.new) for e in changes] == [("ws", "responses")]
    assert isinstance(events[-1], Completed) and streamed(events) == TEXT
    assert isinstance(again[-1], Completed) and again[0].transport == "responses"


SET_UP_S = 0.6  # a slow connection set-up (a TLS handshake, a gateway's upgrade)


def the_ttft(events: list) -> float:
    """The reply's TTFT; the FirstToken event said the same one as soon as it was known."""
    done = events[-1]
    assert isinstance(done, Completed), done
    said = [e for e in events if isinstance(e, FirstToken)]
    assert said[-1].ttft_s == done.metrics.ttft_s and said[-1].attempt == done.metrics.attempt
    return done.metrics.ttft_s


@pytest.mark.xdist_group("timing")  # times a pace: the timing tests run one at a time
async def test_a_slow_websocket_upgrade_is_set_up_time_not_ttft(sim):
    sim.configure(ttft_ms=100, tokens=40)  # time-stamped late on a busy machine, still > 0.05 s
    sim.set_faults([{"kind": "slow_handshake", "seconds": SET_UP_S, "times": -1}])
    async with client(sim, "ws") as c:
        events = await run(c)
    m = events[-1].metrics
    assert 0.05 <= the_ttft(events) < SET_UP_S / 2, m
    assert m.connect_s >= SET_UP_S and m.duration_s >= SET_UP_S + 0.05


@pytest.mark.xdist_group("timing")  # times a pace: the timing tests run one at a time
async def test_after_a_drop_the_reconnect_is_not_in_the_retrys_ttft(sim):
    sim.configure(ttft_ms=100, tokens=40)  # time-stamped late on a busy machine, still > 0.05 s
    async with client(sim, "ws") as c:
        await c.prewarm(turn())  # the socket is open before the turn: the reconnect is slow
        sim.set_faults([{"kind": "drop", "after_tokens": 5},
                        {"kind": "slow_handshake", "seconds": SET_UP_S, "times": -1}])
        events = await run(c)
    m = events[-1].metrics
    assert m.attempt == 2 and 0.05 <= the_ttft(events) < SET_UP_S / 2, m
    assert m.connect_s >= SET_UP_S


@pytest.mark.xdist_group("timing")  # times a pace: the timing tests run one at a time
@pytest.mark.parametrize("transport", ["responses", "chat"])
async def test_a_slow_http_connection_set_up_is_not_ttft(sim, transport):
    import httpx

    class SlowSetUp(httpx.AsyncHTTPTransport):
        """Takes SET_UP_S before the request can go out (as a slow TLS handshake does)."""

        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            await asyncio.sleep(SET_UP_S)
            return await super().handle_async_request(request)

    sim.configure(ttft_ms=100, tokens=40)  # time-stamped late on a busy machine, still > 0.05 s
    opts = ClientOptions(base_url=sim.base_url, api_key="k", model=MODEL, transport=transport)
    async with ModelClient(opts, http_transport=SlowSetUp()) as c:
        events = await run(c)
    m = events[-1].metrics
    assert 0.05 <= the_ttft(events) < SET_UP_S / 2, m
    assert m.connect_s >= SET_UP_S


async def test_breaking_out_cancels_and_next_turn_works(sim):
    sim.configure(tokens=2000)
    rec = ListRecorder()
    async with client(sim, "ws", recorder=rec) as c:
        async with aclosing(c.stream(turn())) as events:
            async for event in events:
                if isinstance(event, TextDelta):
                    break
        assert [r.status for r in rec.records] == ["cancelled"]
        sim.configure(default=TEXT)
        events = await run(c)
    assert isinstance(events[-1], Completed) and events[-1].text == TEXT
    assert streamed(events) == TEXT
    assert [r.status for r in rec.records] == ["cancelled", "ok"]


async def test_abandoned_stream_does_not_leak_into_the_next_turn(sim):
    sim.configure(tokens=3000)
    async with client(sim, "ws") as c:
        abandoned = c.stream(turn())
        async for event in abandoned:
            if isinstance(event, TextDelta):
                break
        sim.configure(default=TEXT)
        events = await run(c)
        await abandoned.aclose()
        again = await run(c)
    assert isinstance(events[-1], Completed) and streamed(events) == TEXT
    assert isinstance(again[-1], Completed) and streamed(again) == TEXT


async def test_prewarm_and_list_models(sim):
    async with client(sim, "ws") as c:
        await c.prewarm(turn())
        assert c.connection_count == 1
        assert MODEL in await c.list_models()
        events = await run(c)
        assert c.connection_count == 1
    assert isinstance(events[-1], Completed)
    assert sim.requests()[0]["body"].get("generate") is False


async def test_complete_raises_the_model_error(sim):
    async with client(sim, "chat", model="gone") as c:
        with pytest.raises(ModelNotFound):
            await c.complete(turn())


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize("transport", ["auto", "ws", "responses", "chat"])
async def test_connection_refused_fails_at_once_as_a_link_problem(transport, tmp_path):
    opts = ClientOptions(base_url=f"http://127.0.0.1:{closed_port()}", api_key="k", model=MODEL,
                         transport=transport)
    async with ModelClient(opts, transport_cache=tmp_path / "cache.json") as c:
        c.clock = SkippingClock()
        await c.prewarm(turn())
        events = await run(c)
    kinds = [type(e).__name__ for e in events if not isinstance(e, Started)]
    assert kinds == ["Failed"]  # no retry, no fall back to HTTP
    err = events[-1].error
    assert isinstance(err, ConnectionFailed) and events[-1].retries == 0
    assert "link problem" in err.message and "is the server up on that port" in err.hint
    assert "WebSocket failed" not in err.message


async def test_a_ws_connect_timeout_is_a_timeout_and_retried():
    with socket.socket() as silent:  # accepts TCP (the kernel's backlog) but never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        base = f"http://127.0.0.1:{silent.getsockname()[1]}"
        opts = ClientOptions(base_url=base, api_key="k", model=MODEL, transport="ws",
                             connect_timeout_s=0.2, max_retries=1)
        async with ModelClient(opts) as c:
            c.clock = SkippingClock()
            events = await run(c)
    assert [e.reason for e in events if isinstance(e, Retrying)] == ["timeout"]
    err = events[-1].error
    assert isinstance(err, StreamTimeout) and events[-1].retries == 1
    assert "within 0.2 s (connect timeout)" in err.message


async def test_a_drop_then_a_refused_reconnect_fails_once_naming_both():
    with SimProcess(tps=200, ttft_ms=0) as own:
        own.configure(tokens=2000)
        opts = ClientOptions(base_url=own.base_url, api_key="k", model=MODEL, transport="chat")
        events = []
        async with ModelClient(opts) as c:
            c.clock = SkippingClock()
            async with aclosing(c.stream(turn())) as stream:
                async for event in stream:
                    events.append(event)
                    if isinstance(event, TextDelta) and own.alive():
                        own.stop()  # the server goes away mid-response
    assert [e.reason for e in events if isinstance(e, Retrying)] == ["dropped"]
    failed = events[-1]
    assert isinstance(failed, Failed) and isinstance(failed.error, ConnectionFailed)
    assert failed.retries == 1 and "link problem" in failed.error.message
    assert "while retrying after: the connection closed mid-response" in failed.error.message


async def test_retry_after_past_the_deadline_says_what_the_server_asked(sim):
    sim.set_faults([{"kind": "rate_limit", "retry_after": 30}])
    async with client(sim, "chat", retry_deadline_s=5) as c:
        events = await run(c)
    assert not [e for e in events if isinstance(e, Retrying)]
    err = events[-1].error
    assert isinstance(err, RateLimited) and "the server asked to wait 30 s" in err.message
    assert "5 s retry deadline" in err.message


async def test_a_retry_near_the_deadline_is_cut_at_the_deadline(sim):
    sim.set_faults([{"kind": "server_error", "status": 503},
                    {"kind": "stall", "after_tokens": 0, "seconds": 60}])
    async with client(sim, "responses", timeout_s=60, retry_deadline_s=1.5) as c:
        events = await run(c)
    assert [e.reason for e in events if isinstance(e, Retrying)] == ["server"]
    err = events[-1].error
    assert isinstance(err, StreamTimeout) and "the time left of the retry deadline" in err.message
    assert "1.5 s retry deadline is reached" in err.message


async def test_unexpected_close_is_dropped_error(sim):
    sim.set_faults([{"kind": "drop", "times": -1, "after_tokens": 1}])
    async with client(sim, "chat", max_retries=1) as c:
        events = await run(c)
    assert isinstance(events[-1].error, StreamDropped) and events[-1].retries == 1


@pytest.mark.parametrize(("transport", "reconnects", "advice"), [
    ("chat", 3, "transport = ws or responses"),  # never the transport that dropped
    ("responses", 3, "transport = ws or chat"),
    ("ws", 0, "transport = chat"),  # ws fell back to responses, and that dropped too
    ("auto", 0, "transport = chat"),
])
async def test_a_drop_hint_names_only_transports_not_yet_tried(sim, transport, reconnects,
                                                                advice):
    sim.set_faults([{"kind": "drop", "times": -1, "after_tokens": 1}])
    async with client(sim, transport, max_retries=1, reconnect_attempts=reconnects) as c:
        events = await run(c)
    err = events[-1].error
    assert isinstance(err, StreamDropped) and advice in err.hint, err.hint


async def test_a_drop_on_the_last_transport_auto_has_gives_no_transport_advice():
    with SimProcess(tps=0, ttft_ms=0, profile="llama.cpp") as server:  # chat only
        server.set_faults([{"kind": "drop", "times": -1, "after_tokens": 1}])
        async with client(server, "auto", max_retries=1) as c:
            events = await run(c)
            assert c.transport == "chat"
    err = events[-1].error
    assert isinstance(err, StreamDropped) and "transport" not in err.hint, err.hint
    assert "send the turn again" in err.hint


async def test_non_persistent_ws_opens_a_socket_per_turn(sim):
    async with client(sim, "ws", persistent_ws=False) as c:
        for _ in range(3):
            assert isinstance((await run(c))[-1], Completed)
        assert c.connection_count == 3
    assert not any("previous_response_id" in r["body"] for r in sim.requests())
