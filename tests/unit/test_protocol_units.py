"""Units of the protocol package: SSE parsing, error mapping, metrics."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.clock import SkippingClock

from spark_pair.base.errors import (
    AuthError,
    ConnectionFailed,
    EndpointError,
    ModelNotFound,
    ProtocolError,
    RateLimited,
    ServerError,
    StreamTimeout,
)
from spark_pair.protocol import errors_map, fastjson
from spark_pair.protocol.client import ClientOptions
from spark_pair.protocol.metrics import Stopwatch, pace
from spark_pair.protocol.sse import iter_sse_data


async def parse(chunks: list[bytes]) -> list[str]:
    async def gen():
        for c in chunks:
            yield c
    return [d async for d in iter_sse_data(gen())]


async def test_sse_split_anywhere_gives_the_same_events():
    raw = (b'event: x\ndata: {"a": 1}\n\n: comment\ndata: two\ndata: lines\n\n'
           b'data:{"b":"\xc3\xa9"}\r\n\r\ndata: [DONE]\n\n')
    expected = ['{"a": 1}', "two\nlines", '{"b":"é"}', "[DONE]"]
    assert await parse([raw]) == expected
    for cut in range(1, len(raw)):
        assert await parse([raw[:cut], raw[cut:]]) == expected
    assert await parse([raw[i:i + 1] for i in range(len(raw))]) == expected


async def test_sse_last_event_without_blank_line():
    assert await parse([b"data: a\n\ndata: tail"]) == ["a", "tail"]


URL = "http://h/v1/chat/completions"


@pytest.mark.parametrize("key, words", [
    (None, "not exported"), (" sk-abcdefgh\n", "whitespace"),
    ("Bearer sk-abcdefgh", "doubled"), ("sk-abcdefghij", "refused")])
def test_401_names_the_likely_cause(key, words):
    err = errors_map.error_from_response(401, '{"error":{"code":"invalid_api_key"}}', URL,
                                         api_key=key)
    assert isinstance(err, AuthError) and words in err.message
    if key:
        assert key.strip() not in err.describe()


def test_404_shows_url_and_notices_doubled_v1():
    err = errors_map.error_from_response(404, '{"error":{"message":"no"}}',
                                         "http://h/v1/v1/responses")
    assert isinstance(err, EndpointError) and "http://h/v1/v1/responses" in err.message
    assert "doubled" in err.message


def test_model_not_found_and_rate_limit_and_5xx():
    body = '{"error":{"code":"model_not_found","message":"nope"}}'
    assert isinstance(errors_map.error_from_response(404, body, URL, model="m"), ModelNotFound)
    rl = errors_map.error_from_response(429, '{"error":{"message":"slow"}}', URL,
                                        headers={"retry-after": "2"})
    assert isinstance(rl, RateLimited) and rl.retry_after == 2.0
    assert isinstance(errors_map.error_from_response(503, "", URL), ServerError)


def test_html_body_is_protocol_error_with_excerpt():
    err = errors_map.error_from_response(403, "<html><body>Blocked by proxy</body></html>", URL,
                                         content_type="text/html")
    assert isinstance(err, AuthError)  # 403 is still about access
    err = errors_map.error_from_response(400, "<html><body>Bad gateway page</body></html>", URL,
                                         content_type="text/html")
    assert isinstance(err, ProtocolError) and "Bad gateway page" in err.message


PAGE = ("<!DOCTYPE html><html><head><title>502 Bad Gateway</title><style>p {color: red}</style>"
        "</head><body><h1>Bad   Gateway</h1>\n<p>The proxy &amp; the model</p></body></html>")


@pytest.mark.parametrize("status, cls", [(502, ServerError), (503, ServerError),
                                         (404, EndpointError), (405, EndpointError),
                                         (401, AuthError), (403, AuthError),
                                         (429, RateLimited), (400, ProtocolError),
                                         (418, ProtocolError)])
def test_every_non_json_error_body_shows_an_excerpt_and_the_url(status, cls):
    err = errors_map.error_from_response(status, PAGE, URL, content_type="text/html")
    assert isinstance(err, cls) and URL in err.message
    assert "502 Bad Gateway Bad Gateway The proxy & the model" in err.message
    assert "<" not in err.message and "color" not in err.message


def test_the_excerpt_is_short_and_an_empty_body_is_named():
    err = errors_map.error_from_response(502, "x" * 5000, URL)
    assert "x" * 200 + " …" in err.message and "x" * 201 not in err.message
    assert "(empty body)" in errors_map.error_from_response(503, "", URL).message
    assert "(empty body)" in errors_map.error_from_response(404, " \n", URL).message


def test_a_json_error_message_is_shown_for_404_too():
    err = errors_map.error_from_response(404, '{"error":{"message":"no such route"}}', URL)
    assert isinstance(err, EndpointError) and "no such route" in err.message


def test_connection_failed_mentions_proxy(monkeypatch):
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:3128")
    err = errors_map.connection_failed(OSError("refused"), URL)
    assert isinstance(err, ConnectionFailed) and "proxy" in err.message
    assert "link problem" in err.message


def test_options_repr_hides_the_key():
    opts = ClientOptions(base_url="http://h", api_key="sk-secretsecret", model="m")
    assert "secret" not in repr(opts)


def test_stopwatch_steady_rate_excludes_ttft():
    ticks = iter([0.0, 0.5, 1.5])
    watch = Stopwatch(clock=lambda: next(ticks))
    watch.first()
    watch.done()
    m = watch.metrics(101)
    assert m.ttft_s == 0.5 and m.duration_s == 1.5 and m.tokens_per_s == 100.0


def paced(tokens: int, late_until: float = 0.0, late_from: int | None = None,
          tps: float = 1200.0) -> Stopwatch:
    """A stopwatch that saw `tokens` four-character tokens the server sent at `tps` from
    t=0.1, each timed on arrival, except those a busy loop read at once: every token sent
    before `late_until`, and from token `late_from` on (read 10 ms after the last was sent),
    timed 20 µs apart as a backlog is."""
    sent = [0.1 + i / tps for i in range(tokens)]
    times = []
    for i, t in enumerate(sent):
        if t < late_until:
            t = late_until
        if late_from is not None and i >= late_from:
            t = sent[-1] + 0.010
        times.append(max(t, times[-1] + 20e-6) if times else t)
    ticks = iter([0.0, *times, times[-1]])
    watch = Stopwatch(clock=lambda: next(ticks))
    for _ in times:
        watch.text(4)
    watch.done()
    return watch


@pytest.mark.parametrize("tokens", [26, 75, 400])
def test_the_rate_is_the_server_pace_when_a_backlog_is_read_at_once(tokens):
    for watch in (paced(tokens), paced(tokens, late_until=0.1 + tokens / 2400),
                  paced(tokens, late_from=tokens - tokens // 4)):
        rate = watch.metrics(tokens).tokens_per_s
        assert rate is not None and abs(rate - 1200) / 1200 < 0.05, rate


def test_a_reply_read_in_one_burst_has_no_rate_rather_than_a_wrong_one():
    watch = paced(26, late_until=0.2)  # every token waited for the loop
    assert watch.metrics(26).tokens_per_s is None


def test_after_a_retry_ttft_and_rate_are_the_answering_attempts_and_the_wait_is_not_in_them():
    """The first attempt streams 100 tokens at 1,000 tok/s and drops; a second and a half of
    backoff and reconnect later the second attempt replays them and goes on to 500, at the
    same pace. Over both attempts the rate read about a fifth of the server's."""
    t = [0.0]
    watch = Stopwatch(clock=lambda: t[0])
    t[0] = 0.15  # TTFT 150 ms
    for _ in range(10):
        watch.text(40)  # 10 tokens a read, one read per 10 ms
        t[0] += 0.010
    t[0] = 1.75  # the backoff and the reconnect; the retry's request goes out
    watch.again()
    t[0] += 0.2  # its own TTFT
    for _ in range(50):
        watch.text(40)
        t[0] += 0.010
    watch.done()
    m = watch.metrics(500)
    assert m.attempt == 2 and m.ttft_s == pytest.approx(0.2)
    assert m.duration_s == pytest.approx(t[0])  # every attempt and the wait between
    assert m.tokens_per_s == pytest.approx(1000 * 490 / 500, rel=0.03)  # not ~290
    stopped = watch.stopped(600, chars=2400)  # the whole text shown so far: 600 tokens
    assert stopped.partial and stopped.attempt == 2 and stopped.output_tokens == 600
    assert stopped.tokens_per_s == pytest.approx(m.tokens_per_s, rel=0.03)


def test_the_ttft_runs_from_the_request_going_out_not_from_connecting():
    """0.4 s to connect (TLS, a WebSocket upgrade), the request out, its first token 0.1 s
    later; a retry connects again for 0.3 s and its first token comes 0.05 s after its
    request: each TTFT is from a request to its first token, the set-up is `connect_s`."""
    t = [0.0]
    watch = Stopwatch(clock=lambda: t[0])
    t[0] = 0.4
    watch.sent()
    t[0] = 0.5
    watch.text(4)
    assert watch.ttft_s == pytest.approx(0.1)
    stopped = watch.stopped(1)
    assert stopped.ttft_s == pytest.approx(0.1) and stopped.connect_s == pytest.approx(0.4)
    t[0] = 1.0
    watch.again(0.5)  # the retry begins after 0.5 s of backoff
    t[0] = 1.8
    watch.sent()
    t[0] = 1.85
    watch.text(4)
    t[0] = 2.0
    watch.text(4)
    watch.done()
    m = watch.metrics(2)
    assert m.attempt == 2 and m.ttft_s == pytest.approx(0.05)
    assert m.connect_s == pytest.approx(0.3) and m.duration_s == pytest.approx(2.0)
    assert m.tokens_per_s == pytest.approx(1 / 0.15)  # the pace is untouched by where TTFT starts


def test_an_attempt_never_told_it_was_sent_is_timed_from_its_start():
    t = [0.0]
    watch = Stopwatch(clock=lambda: t[0])
    t[0] = 0.2
    watch.text(4)
    watch.done()
    m = watch.metrics(1)
    assert m.ttft_s == pytest.approx(0.2) and m.connect_s is None


def backlogged(late_s: float, server_tps: float = 10_000, tokens: int = 3000,
               window: int = 430, reader_tps: float = 40_000) -> tuple[list, set[int]]:
    """The arrivals of a reply the server sends at `server_tps` from t=0.15 to a reader that
    comes `late_s` after the first token was sent: its first read finds only a window's
    worth (the server holds the rest back until the reader makes room) and the reads after
    it catch up as fast as the reader goes (`reader_tps`, a window a read) until one takes
    all there was; from there on each read (every 2 ms) takes what came since. Returns the
    arrivals (when, characters) and which of them were read behind (a full window)."""
    t, got, arrivals, behind = 0.15 + late_s, 0, [], set()
    while got < tokens:
        take = min(window, int((t - 0.15) * server_tps) + 1 - got, tokens - got)
        if take == window:
            behind.add(len(arrivals))
        arrivals.append((t, 4 * take))
        got += take
        t += take / reader_tps if take == window else 0.002
    return arrivals, behind


def test_reads_far_behind_a_fast_stream_never_set_its_pace():
    """A run's first read came 200 ms late (the machine was busy): it found a full receive
    window, and the reads after it caught up as fast as the reader went, which the rate took
    for the server's pace (a responses run read 24,748 for a 10,000 tok/s server). Those
    reads count in the tokens, never in the pace; a reply read behind from start to end has
    no rate rather than a wrong one."""
    arrivals, behind = backlogged(late_s=0.2)
    assert len(behind) >= 5 and len(arrivals) - len(behind) >= 10
    assert pace(arrivals, 3000) > 20_000  # every arrival a point: the reader's pace
    rate = pace(arrivals, 3000, behind)
    assert rate is not None and abs(rate - 10_000) / 10_000 < 0.05, rate
    late, all_behind = backlogged(late_s=0.35)  # the reply ended before the reader caught up
    assert len(late) - len(all_behind) <= 1 and pace(late, 3000, all_behind) is None
    for reads, flags, expected in ((arrivals, behind, rate), (late, all_behind, None)):
        t = [0.0]  # the stopwatch, told of each read whether it was behind
        watch = Stopwatch(clock=lambda t=t: t[0])
        for i, (when, chars) in enumerate(reads):
            t[0] = when
            watch.read(i in flags)
            watch.text(chars)
        watch.done()
        assert watch.metrics(3000).tokens_per_s == expected
    on_time = Stopwatch(clock=lambda: t[0])  # a reader that never says: on time throughout
    for when, chars in arrivals:
        t[0] = when
        on_time.text(chars)
    assert on_time.metrics(3000).tokens_per_s == pace(arrivals, 3000)


# ---- client over httpx.MockTransport: endpoint shapes the simulator does not offer ----------

import httpx  # noqa: E402

from spark_pair.protocol.client import ModelClient  # noqa: E402
from spark_pair.protocol.events import Completed, Failed, Message, TransportChanged, TurnRequest  # noqa: E402

CHAT_SSE = (b'data: {"id":"c1","choices":[{"delta":{"content":"Hello"}}]}\n\n'
            b'data: {"id":"c1","choices":[{"delta":{"content":", world"},'
            b'"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n')


def mock_client(handler, transport="auto", **kw) -> ModelClient:
    opts = ClientOptions(base_url="http://mock", api_key="k", model="m", transport=transport,
                         **kw)
    c = ModelClient(opts)
    c._candidates = [t for t in c._candidates if t != "ws"]  # no socket server here
    c._http = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    return c


def turn() -> TurnRequest:
    return TurnRequest("sys", [Message("user", "hi there")])


async def test_chat_without_usage_counts_tokens_itself():
    def handler(req: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"},
                              content=CHAT_SSE)

    async with mock_client(handler, "chat") as c:
        done = await c.complete(turn())
    assert done.text == "Hello, world" and done.usage.estimated
    assert done.usage.output_tokens == 3 and done.usage.input_tokens > 0


async def test_auto_moves_to_chat_when_responses_is_404():
    seen = []

    def handler(req: httpx.Request) -> httpx.Response:
        seen.append(req.url.path)
        if req.url.path == "/v1/responses":
            return httpx.Response(404, json={"error": {"message": "Not found"}})
        return httpx.Response(200, headers={"content-type": "text/event-stream"},
                              content=CHAT_SSE)

    async with mock_client(handler) as c:
        events = [e async for e in c.stream(turn())]
        assert c.transport == "chat"
    assert [(e.old, e.new) for e in events if isinstance(e, TransportChanged)] == [
        ("responses", "chat")]
    assert isinstance(events[-1], Completed) and seen == ["/v1/responses", "/v1/chat/completions"]


async def test_explicit_transport_404_fails_with_the_url():
    def handler(req: httpx.Request) -> httpx.Response:
        return httpx.Response(404, json={"error": {"message": "Not found"}})

    async with mock_client(handler, "responses") as c:
        events = [e async for e in c.stream(turn())]
    assert isinstance(events[-1], Failed) and isinstance(events[-1].error, EndpointError)
    assert "http://mock/v1/responses" in events[-1].error.message


@pytest.mark.parametrize("exc, cls, attempts", [
    (httpx.ConnectError("[Errno -2] Name or service not known"), ConnectionFailed, 1),
    (httpx.ConnectError("[Errno 111] Connection refused"), ConnectionFailed, 1),
    (httpx.ConnectTimeout("timed out"), StreamTimeout, 3),
])
async def test_dns_and_refusal_fail_at_once_but_a_connect_timeout_is_retried(exc, cls, attempts):
    calls = []

    def handler(req: httpx.Request) -> httpx.Response:
        calls.append(req.url.path)
        raise exc

    async with mock_client(handler, "chat", max_retries=2) as c:
        c.clock = SkippingClock()
        events = [e async for e in c.stream(turn())]
    err = events[-1].error
    assert isinstance(events[-1], Failed) and isinstance(err, cls) and len(calls) == attempts
    assert len(c.clock.waits) == attempts - 1  # 1 s, then 2 s, each jittered up to 25 %
    assert all(2 ** i <= wait <= 1.25 * 2 ** i for i, wait in enumerate(c.clock.waits))
    assert "http://mock/v1/chat/completions" in err.message
    if cls is StreamTimeout:
        assert "connect timeout" in err.message and "gave up after 2 retries" in err.message


async def test_stream_cut_before_done_is_a_drop():
    def handler(req: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"},
                              content=CHAT_SSE[:60])

    async with mock_client(handler, "chat", max_retries=0) as c:
        events = [e async for e in c.stream(turn())]
    assert events[-1].error.kind == "dropped"


async def test_a_drop_given_up_on_says_so_and_what_to_do():
    """Shown only once the retries are spent: the hint never promises another one."""
    def handler(req: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"},
                              content=CHAT_SSE[:60])

    async with mock_client(handler, "chat", max_retries=2) as c:
        c.clock = SkippingClock()
        events = [e async for e in c.stream(turn())]
    err = events[-1].error
    assert err.kind == "dropped" and "gave up after 2 retries" in err.message
    assert "retries and resends" not in err.hint and "again" in err.hint


def _chat_sse(*pieces: str) -> bytes:
    import json as _json

    out = b"".join(
        b"data: "
        + _json.dumps({"id": "c", "choices": [{"delta": {"content": p}}]}).encode()
        + b"\n\n"
        for p in pieces
    )
    return out + _CHAT_FINISH + b"data: [DONE]\n\n"


_CHAT_FINISH = b'data: {"id": "c", "choices": [{"delta": {}, "finish_reason": "stop"}]}\n\n'


async def _stream_with_a_cut_first_attempt(second: bytes) -> list:
    calls = []

    def handler(req: httpx.Request) -> httpx.Response:
        calls.append(1)
        body = _chat_sse("--- a/x\n", "+++ b/x\n", "@@ old\n") if len(calls) == 1 else second
        if len(calls) == 1:
            body = body[: body.rindex(_CHAT_FINISH)]  # cut before the finish: a drop
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    async with mock_client(handler, "chat") as c:
        c.clock = SkippingClock()
        return [e async for e in c.stream(turn())]


async def test_a_retry_that_replays_the_same_text_continues_without_rewind():
    from spark_pair.protocol.events import Rewound, TextDelta

    events = await _stream_with_a_cut_first_attempt(
        _chat_sse("--- a/x\n+++ b/x\n", "@@ old\n", "-a\n"))
    shown = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert not any(isinstance(e, Rewound) for e in events)
    assert shown == events[-1].text == "--- a/x\n+++ b/x\n@@ old\n-a\n"


async def test_a_retry_that_answers_differently_rewinds_what_was_shown():
    from spark_pair.protocol.events import Rewound, TextDelta

    events = await _stream_with_a_cut_first_attempt(_chat_sse("--- a/x\n+++ b/x\n", "@@ new\n+b\n"))
    rewinds = [e for e in events if isinstance(e, Rewound)]
    assert [r.keep for r in rewinds] == [len("--- a/x\n+++ b/x\n@@ ")]
    shown = ""
    for e in events:  # a consumer that honours Rewound ends with exactly the final text
        if isinstance(e, TextDelta):
            shown += e.text
        elif isinstance(e, Rewound):
            shown = shown[: e.keep]
    assert shown == events[-1].text == "--- a/x\n+++ b/x\n@@ new\n+b\n"


@pytest.mark.parametrize("status, content_type", [(502, "text/plain"), (200, "text/html")])
async def test_a_key_of_any_shape_in_a_raw_body_is_redacted_before_the_excerpt(
        status, content_type):
    """A 32-character gateway token (no sk- prefix) deep in a non-JSON body: the excerpt is cut
    at 200 characters, and no piece of the key may survive the cut."""
    import json

    key = "Zq7Xw2Lm9Pt4Rv8Ks1Hd6Jf3Gb5Nc0Ya"
    body = "upstream gateway failure: " + "." * 140 + f" token={key} rejected by the proxy"

    def handler(req: httpx.Request) -> httpx.Response:
        return httpx.Response(status, headers={"content-type": content_type}, content=body)

    opts = ClientOptions(base_url="http://mock", api_key=key, model="m", transport="chat",
                         reconnect_attempts=0, retry_deadline_s=0.1)
    async with ModelClient(opts) as c:
        c._http = httpx.AsyncClient(transport=httpx.MockTransport(handler))
        events = [e async for e in c.stream(turn())]
    error = events[-1].error
    shown = [error.message, error.describe(), json.dumps(error.to_dict()), str(error.body)]
    for text in shown:
        assert not any(key[i:i + 6] in text for i in range(len(key) - 5)), text
    assert "***" in error.message or "***" in str(error.body)


@pytest.mark.parametrize("api, body, why", [
    ("chat", b'data: {"id":"c","choices":[{"delta":{"content":"--- a/x"},'
             b'"finish_reason":"content_filter"}]}\n\ndata: [DONE]\n\n',
     "the server's content filter stopped it"),
    ("responses", b'data: {"type":"response.output_text.delta","delta":"--- a/x"}\n\n'
                  b'data: {"type":"response.completed","response":{"id":"r","status":'
                  b'"incomplete","incomplete_details":{"reason":"max_output_tokens"},'
                  b'"max_output_tokens":7}}\n\n',
     "the output limit of 7 tokens was reached"),
])
async def test_a_reply_the_server_cut_is_completed_with_the_cut_named(api, body, why):
    def handler(req: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    async with mock_client(handler, api) as c:
        events = [e async for e in c.stream(turn())]
    done = events[-1]
    assert isinstance(done, Completed) and done.text == "--- a/x"
    assert done.cut is not None and done.cut.kind == "incomplete" and why in done.cut.message


@pytest.mark.parametrize("line", [
    b'data: {"error":{"message":"engine died","type":"InternalServerError","param":null,'
    b'"code":500}}\n\n',  # vLLM's Responses stream: an error object without a type
    b'{"error":{"message":"engine died","type":"api_error","param":null,"code":null}}\n',
])
async def test_a_responses_stream_failure_without_a_type_is_the_servers_error(line):
    body = (b'data: {"type":"response.created","response":{"id":"r"}}\n\n'
            b'data: {"type":"response.output_text.delta","delta":"--- a/x"}\n\n' + line)

    def handler(req: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    async with mock_client(handler, "responses", max_retries=0) as c:
        events = [e async for e in c.stream(turn())]
    err = events[-1].error
    assert isinstance(err, ServerError) and "engine died" in err.message


async def test_a_lone_surrogate_in_the_history_is_sent_escaped_not_a_crash():
    import json

    seen = []

    def handler(req: httpx.Request) -> httpx.Response:
        seen.append(json.loads(req.content))
        return httpx.Response(200, headers={"content-type": "text/event-stream"},
                              content=CHAT_SSE)

    request = TurnRequest("sys", [Message("user", "again, é")],
                          history=[Message("assistant", "a broken \ud800 reply")])
    async with mock_client(handler, "chat") as c:
        done = await c.complete(request)
    assert done.text == "Hello, world"
    assert [m["content"] for m in seen[0]["messages"]][1:] == ["a broken \ud800 reply", "again, é"]


def _outcome(parse, text: str) -> tuple[str, object]:
    try:
        return "value", parse(text)
    except ValueError as exc:
        return type(exc).__name__, str(exc)


_JSONISH = st.one_of(
    st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                 lambda inner: st.lists(inner, max_size=3)
                 | st.dictionaries(st.text(max_size=4), inner, max_size=3), max_leaves=6)
    .map(json.dumps),
    st.text(alphabet=' \t\n{}[]":,0123456789.eE+-abnrtuflsNIfy\\\ufeff', max_size=30))


@settings(max_examples=400, deadline=None)
@given(_JSONISH, st.sampled_from(["", " ", "\n", "x", ",1", "}"]),
       st.sampled_from(["", " ", "\t"]))
def test_a_message_parses_as_json_loads_parses_it(text: str, after: str, before: str) -> None:
    whole = before + text + after
    assert _outcome(fastjson.loads, whole) == _outcome(json.loads, whole)


@pytest.mark.parametrize("output, cap, counted, says, limit", [
    (4096, 4096, True, "the output limit of 4,096 tokens was reached", True),
    (3833, 4096, True, "stopped it after 3,833 output tokens (below the max_tokens of 4,096)",
     False),
    (3833, None, True, "stopped it after 3,833 output tokens (no max_tokens was sent)", False),
    # an estimate (characters / 4) may be a third off: near the cap it cannot tell which
    (3833, 4096, False, "the output limit of 4,096 tokens was reached, or the server's context "
                        "window ended it (about 3,833 tokens came)", True),
    (1500, 4096, False, "stopped it after about 1,500 output tokens", False),
    (2, 7, False, "the output limit of 7 tokens was reached, or the server's", True),  # tiny
])
def test_a_length_cut_says_whose_limit_ended_it(output, cap, counted, says, limit):
    from spark_pair.protocol import errors_map

    first = errors_map.incomplete("http://h/v1/chat/completions", "length", cap)
    err = errors_map.counted_cut(first, output, counted)
    assert says in err.message
    assert errors_map.output_limit_reached(err) is limit
    assert ("raising max_tokens will not help" in err.hint) is (not limit)
    assert "raise max_tokens" in first.hint  # before the count: the output limit, as sent


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab\u00e9\U0001f600", max_size=40),
       st.text(alphabet="ab\u00e9\U0001f600", max_size=40), st.booleans())
def test_common_prefix_is_the_length_of_the_shared_start(a: str, b: str, prefixed: bool) -> None:
    """A retry's replay is checked against the text shown: equal texts, one a start of the
    other (the fast path) and texts that part anywhere all give the shared start's length."""
    from spark_pair.protocol.client import _common_prefix
    if prefixed:
        b = a + b  # a is a prefix of b
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    assert _common_prefix(a, b) == n
    assert _common_prefix(b, a) == n
    assert _common_prefix(a, a[:]) == len(a)
