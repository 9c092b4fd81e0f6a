"""The chat reader against what real servers put on the wire: llama.cpp's server, vLLM, Ollama
and gateways. Each body is what such a server sends (read from its source or its issue
tracker), played to the model client through an httpx transport handler; both read paths
share the SSE parser and the chat reader these bodies exercise."""

from __future__ import annotations

import json

import httpx
import pytest
from support.clock import SkippingClock

from spark_pair.base.errors import BadRequest, ProtocolError, ServerError, StreamDropped
from spark_pair.protocol.client import ClientOptions, ModelClient
from spark_pair.protocol.events import Completed, Failed, Message, TurnRequest

URL = "http://mock/v1/chat/completions"


def chunk(content: str | None = None, reason: str | None = None, **extra) -> bytes:
    choice = {"index": 0, "delta": {} if content is None else {"content": content},
              "finish_reason": reason}
    body = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [choice], **extra}
    return b"data: " + json.dumps(body).encode() + b"\n\n"


USAGE = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
USAGE_CHUNK = (b'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[],'
               b'"usage":' + json.dumps(USAGE).encode() + b"}\n\n")
DONE = b"data: [DONE]\n\n"


async def read(body: bytes, max_retries: int = 0) -> tuple[list, int]:
    """The client's events for a chat answer with `body`, and how many requests were sent."""
    calls = []

    def handler(req: httpx.Request) -> httpx.Response:
        calls.append(req)
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    opts = ClientOptions(base_url="http://mock", api_key="k", model="m", transport="chat",
                         max_retries=max_retries)
    async with ModelClient(opts) as c:
        c.clock = SkippingClock()
        c._http = httpx.AsyncClient(transport=httpx.MockTransport(handler))
        events = [e async for e in c.stream(TurnRequest("sys", [Message("user", "hi")]))]
    return events, len(calls)


async def completed(body: bytes) -> Completed:
    events, _ = await read(body)
    done = events[-1]
    assert isinstance(done, Completed), done
    return done


# ---- shapes that were read right already (kept so) ------------------------------------------

async def test_a_last_chunk_with_empty_choices_carries_the_usage() -> None:
    """vLLM, Ollama and llama.cpp (stream_options.include_usage): choices [] and the usage."""
    done = await completed(chunk("--- a") + chunk(" b", "stop") + USAGE_CHUNK + DONE)
    assert done.text == "--- a b" and (done.usage.input_tokens, done.usage.output_tokens) == (11, 7)
    assert not done.usage.estimated and done.cut is None


async def test_the_finish_reason_on_a_chunk_with_content_keeps_the_content() -> None:
    done = await completed(chunk("one ") + chunk("two", "stop") + DONE)
    assert done.text == "one two" and done.cut is None


async def test_the_usage_on_the_finish_chunk_itself() -> None:
    """Older llama.cpp builds: usage (and timings) on the chunk with the finish reason."""
    done = await completed(chunk("x") + chunk(None, "stop", usage=USAGE, timings={"n": 1})
                           + DONE)
    assert done.usage.output_tokens == 7 and not done.usage.estimated


async def test_comments_data_without_a_space_and_crlf_line_ends() -> None:
    """`: keep-alive` / `: PROCESSING` comments (gateways), `data:{...}`, CRLF (some proxies)."""
    body = (b": keep-alive\r\n\r\n" + chunk("a").replace(b"data: ", b"data:")
            + b": OPENROUTER PROCESSING\n\n"
            + chunk("b", "stop").replace(b"\n", b"\r\n") + USAGE_CHUNK + b"data:[DONE]\r\n\r\n")
    done = await completed(body)
    assert done.text == "ab" and done.usage.output_tokens == 7


async def test_a_role_chunk_with_null_content_and_a_stream_without_done() -> None:
    """Ollama and llama.cpp open with `content: null`; ik_llama.cpp ends without [DONE]."""
    first = (b'data: {"id":"c","choices":[{"index":0,"delta":{"role":"assistant",'
             b'"content":null},"finish_reason":null}]}\n\n')
    done = await completed(first + chunk("z", "stop") + USAGE_CHUNK)
    assert done.text == "z"


# ---- shapes that were misread -----------------------------------------------------------------

async def test_done_with_spaces_around_it_ends_the_stream() -> None:
    """`data:  [DONE] ` (a proxy that pads it) is still the end, not a chunk that is not JSON."""
    done = await completed(chunk("a") + chunk("b", "stop") + b"data:  [DONE] \n\n")
    assert done.text == "ab"


async def test_llama_cpp_error_field_is_the_servers_error_not_an_empty_reply() -> None:
    """llama.cpp builds through 2025 send a failure as an `error:` SSE field, then [DONE]."""
    message = "the request exceeds the available context size, try increasing it"
    body = (b'error: {"code":400,"message":"' + message.encode()
            + b'","type":"exceed_context_size_error"}\n\n' + DONE)
    events, calls = await read(body, max_retries=2)
    assert isinstance(events[-1], Failed), events[-1]
    err = events[-1].error
    assert isinstance(err, BadRequest) and message in err.message and calls == 1


async def test_vllm_in_stream_error_keeps_its_status() -> None:
    """vLLM: `data: {"error": {..., "code": <HTTP status>}}` then [DONE]; a 500 is a server
    error (retried), a 400 the request's fault (not retried)."""
    def error(code: int, kind: str) -> bytes:
        err = {"object": "error", "message": f"engine said {code}", "type": kind,
               "param": None, "code": code}
        return chunk("--- a") + b"data: " + json.dumps({"error": err}).encode() + b"\n\n" + DONE

    events, calls = await read(error(500, "InternalServerError"), max_retries=1)
    assert isinstance(events[-1].error, ServerError) and calls == 2
    assert "engine said 500" in events[-1].error.message
    events, calls = await read(error(400, "BadRequestError"), max_retries=1)
    assert isinstance(events[-1].error, BadRequest) and calls == 1


async def test_an_error_object_at_the_top_of_a_chunk() -> None:
    """Older vLLM: the ErrorResponse itself as the chunk (`"object": "error"`)."""
    err = {"object": "error", "message": "prompt too long", "type": "BadRequestError",
           "param": None, "code": 400}
    events, _ = await read(chunk("x") + b"data: " + json.dumps(err).encode() + b"\n\n" + DONE)
    assert isinstance(events[-1], Failed) and "prompt too long" in events[-1].error.message


async def test_ollama_mid_stream_error_line_without_data() -> None:
    """Ollama writes a failure after the stream began as a bare JSON line (no `data:`), then
    ends the body: its message is the error, not 'the stream ended'."""
    line = (b'{"error":{"message":"model runner has unexpectedly stopped","type":"api_error",'
            b'"param":null,"code":null}}\n')
    events, _ = await read(chunk("--- a") + line)
    err = events[-1].error
    assert isinstance(err, ServerError) and "model runner has unexpectedly stopped" in err.message


async def test_an_error_given_as_a_string() -> None:
    events, _ = await read(chunk("x") + b'data: {"error":"upstream overloaded"}\n\n')
    assert isinstance(events[-1], Failed) and "upstream overloaded" in events[-1].error.message


async def test_an_empty_data_line_is_skipped() -> None:
    """Some proxies keep a stream alive with an empty `data:` line."""
    done = await completed(b"data:\n\n" + chunk("a") + b"data: \n\n" + chunk("b", "stop") + DONE)
    assert done.text == "ab"


@pytest.mark.parametrize("payload", [b'"text"', b"42", b"[1, 2]", b"null"])
async def test_a_chunk_that_is_json_but_not_an_object_is_a_protocol_error(payload) -> None:
    events, _ = await read(chunk("a") + b"data: " + payload + b"\n\n" + DONE)
    err = events[-1].error
    assert isinstance(err, ProtocolError) and payload.decode() in err.message


@pytest.mark.parametrize("reason", ["abort", "max_tokens", "error"])
async def test_a_reply_ended_by_an_abort_or_a_limit_is_cut(reason) -> None:
    """vLLM ends an aborted request with finish_reason "abort"; a gateway may pass on
    "max_tokens": the reply is incomplete and never applied."""
    done = await completed(chunk("--- a/x\n") + chunk(None, reason) + DONE)
    assert done.cut is not None and done.cut.kind == "incomplete"


# ---- the same failures from real server processes (the simulator's profiles) ------------------

@pytest.fixture(scope="module", params=["vllm", "llama.cpp", "ollama"])
def profiled(request):
    """A server that reports a failure mid-stream its own way (sim.profiles.StreamError)."""
    from spark_pair.sim.process import SimProcess

    with SimProcess(tps=0, ttft_ms=0, profile=request.param) as server:
        yield server


@pytest.fixture
def server(profiled):
    from support.runs import MULTI_DIFF

    profiled.reset()
    profiled.configure(replies=[{"match": "MULTI", "text": MULTI_DIFF}])
    return profiled


def run_chat(server, repo, home, *args: str):
    from support.runs import check_schema, lines_of, run

    res = run(repo, home, server, "MULTI change", "--json", "--transport", "chat", *args)
    lines = lines_of(res.stdout)
    check_schema(lines)
    return res, lines


@pytest.fixture
def repo(tmp_path):
    from support.runs import A_PY, OLD_PY, UTIL_PY, make_repo

    return make_repo(tmp_path / "repo", {"a.py": A_PY, "old.py": OLD_PY, "util.py": UTIL_PY})


def test_a_server_failure_mid_stream_is_retried_as_one(server, repo, tmp_path) -> None:
    from support.runs import A_NEW

    server.set_faults([{"kind": "stream_error", "status": 500, "after_tokens": 5, "times": 1}])
    res, lines = run_chat(server, repo, tmp_path / "home", "--apply", "--allow-delete",
                          "--allow-rename")
    assert res.returncode == 0, res.stderr
    assert [ln["reason"] for ln in lines if ln["type"] == "retry"] == ["server"]
    assert (repo / "a.py").read_text() == A_NEW


def test_a_refusal_mid_stream_shows_the_servers_message(server, repo, tmp_path) -> None:
    from spark_pair.base.exitcodes import ExitCode

    before = (repo / "a.py").read_bytes()
    server.set_faults([{"kind": "stream_error", "status": 400, "after_tokens": 5, "times": -1}])
    res, lines = run_chat(server, repo, tmp_path / "home", "--apply")
    assert res.returncode == ExitCode.MODEL, res.stderr
    assert "simulated failure mid-stream (400)" in res.stderr
    assert {ln["class"] for ln in lines if ln["type"] == "error"} == {"BadRequest"}
    assert not [ln for ln in lines if ln["type"] == "retry"]
    assert (repo / "a.py").read_bytes() == before


async def test_done_without_a_finish_reason_is_a_dropped_stream() -> None:
    """llama.cpp's server ends a reply it gave up with [DONE] alone (no finish reason)."""
    events, calls = await read(chunk(None) + chunk("--- a/x\n") + DONE, max_retries=1)
    failed = events[-1]
    assert isinstance(failed, Failed), failed
    assert isinstance(failed.error, StreamDropped)
    assert "no finish reason" in str(failed.error)
    assert calls == 2  # retried like any dropped stream


async def test_without_usage_the_count_is_the_pieces_when_they_are_more_than_the_length_says(
        ) -> None:
    """llama.cpp sends a token per chunk and no usage: ten 2-character tokens are ten, not the
    five that 4 characters a token would make of them."""
    done = await completed(b"".join(chunk("ab") for _ in range(10)) + chunk(None, "stop") + DONE)
    assert done.usage is not None and done.usage.estimated
    assert done.usage.output_tokens == 10
    long = await completed(chunk("x" * 40) + chunk(None, "stop") + DONE)  # a few per piece
    assert long.usage is not None and long.usage.output_tokens == 10
