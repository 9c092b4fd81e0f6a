"""The size limits of what a server sends (protocol.limits, docs/headless.md "Size limits") and
the shape checks of its events, unit by unit: the decoder inflates a step at a time and stops
at its limit, the event-stream parser stops at a line or an event over its limit (in linear
time), and a malformed value is a clear ProtocolError or is counted here."""

from __future__ import annotations

import gzip
import time
import zlib
from collections.abc import AsyncIterator

import pytest

from spark_pair.base.errors import ProtocolError, TooLarge
from spark_pair.protocol import limits
from spark_pair.protocol.chat import stream_chat
from spark_pair.protocol.events import count, usage_of
from spark_pair.protocol.items import Deltas, Finished
from spark_pair.protocol.limits import INFLATE_STEP_BYTES, MAX_MESSAGE_BYTES, Inflater
from spark_pair.protocol.responses_sse import stream_responses
from spark_pair.protocol.sse import iter_sse_batches

URL = "http://h/v1/x"


def bomb(size: int, piece: bytes = b"\0") -> bytes:
    z = zlib.compressobj(9, zlib.DEFLATED, 31)
    step = 1 << 20
    return b"".join([*(z.compress(piece * (step // len(piece))) for _ in range(size // step)),
                     z.flush()])


def test_a_small_compressed_piece_is_inflated_a_step_at_a_time_up_to_the_limit() -> None:
    data = bomb(64 << 20)  # 64 MiB of zeros in some 64 kB
    assert len(data) < 100_000
    inflater = Inflater("gzip", URL, 16 << 20, "a reply")
    sizes = []
    with pytest.raises(TooLarge, match="sent a reply of more than 16 MiB"):
        for piece in inflater.feed(data):  # the whole body in one piece
            sizes.append(len(piece))
    assert max(sizes) <= INFLATE_STEP_BYTES and sum(sizes) <= 16 << 20


def test_a_cut_body_ends_at_the_limit_without_an_error() -> None:
    inflater = Inflater("x-gzip", URL, 1000, "an answer", cut=True)
    out = b"".join(inflater.feed(gzip.compress(b"e" * 5000)))
    assert out == b"e" * 1000 and inflater.full


@pytest.mark.parametrize("wbits", [zlib.MAX_WBITS, -zlib.MAX_WBITS])  # zlib-wrapped, raw
def test_deflate_is_read_with_or_without_its_header(wbits: int) -> None:
    z = zlib.compressobj(6, zlib.DEFLATED, wbits)
    data = z.compress(b"data: 1\n\n" * 100) + z.flush()
    inflater = Inflater("deflate", URL, 1 << 20, "a reply")
    assert b"".join(inflater.feed(data[:7])) + b"".join(inflater.feed(data[7:])) \
        == b"data: 1\n\n" * 100


def test_a_broken_or_unknown_encoding_is_a_protocol_error() -> None:
    with pytest.raises(ProtocolError, match="compressed body that is broken"):
        list(Inflater("gzip", URL, 1 << 20, "a reply").feed(b"\x1f\x8bnot gzip at all"))
    with pytest.raises(ProtocolError, match="'br' content encoding"):
        Inflater("br", URL, 1 << 20, "a reply")


async def chunks_of(data: bytes, size: int) -> AsyncIterator[bytes]:
    for i in range(0, len(data), size):
        yield data[i:i + size]


async def test_an_endless_line_stops_at_its_limit_in_linear_time() -> None:
    start = time.monotonic()
    line = b"data: " + b"a" * (MAX_MESSAGE_BYTES + 10)
    with pytest.raises(TooLarge, match="an event line of more than 8 MiB"):
        async for _ in iter_sse_batches(chunks_of(line, 1000), URL):  # 8,000 small chunks
            pass
    assert time.monotonic() - start < 5  # joined once, not once a chunk


async def test_an_event_of_many_data_lines_stops_at_its_limit() -> None:
    event = b"data: " + b"b" * 1000 + b"\n"
    with pytest.raises(TooLarge, match="an event of more than 8 MiB"):
        async for _ in iter_sse_batches(chunks_of(event * 9000, 65536), URL):
            pass


async def test_lines_and_events_under_the_limits_are_read_whole() -> None:
    big = "c" * (1 << 20)
    body = f"data: {big}\n\ndata: x\ndata: y\n\n".encode()
    got = [p async for batch in iter_sse_batches(chunks_of(body, 777), URL) for p in batch]
    assert got == [big, "x\ny"]


@pytest.mark.parametrize(("value", "expected"), [
    (12, 12), (12.0, 12), ("12", 12), (0, 0),
    (float("nan"), None), (float("inf"), None), (-1, None), (1.5, None), (True, None),
    ("\u00b2", None), ("\u0663", None), ("1" * 40, None), ({}, None),
])
def test_a_token_count_is_a_whole_number_or_none(value: object, expected: int | None) -> None:
    assert count(value) == expected


def test_a_usage_with_a_count_that_is_no_number_is_none() -> None:
    assert usage_of({"input_tokens": 3, "output_tokens": float("nan")}, "input_tokens",
                    "output_tokens") is None
    assert usage_of({"input_tokens": 3, "output_tokens": 4}, "input_tokens",
                    "output_tokens").output_tokens == 4
    assert usage_of("lots", "input_tokens", "output_tokens") is None


async def source_of(*payloads: str) -> AsyncIterator[list[str] | None]:
    yield None
    yield list(payloads)


ODD_RESPONSES = {
    "not an object": '["a", "list"]',
    "a delta that is a number": '{"type": "response.output_text.delta", "delta": 5}',
    "a response that is text": '{"type": "response.completed", "response": "done"}',
    "an id that is a number": '{"type": "response.created", "response": {"id": 7}}',
}


@pytest.mark.parametrize("case", ODD_RESPONSES)
async def test_an_odd_responses_event_is_a_protocol_error(case: str) -> None:
    text = '{"type": "response.output_text.delta", "delta": "kept"}'
    stream = stream_responses(source_of(text, ODD_RESPONSES[case]), URL, api_key=None,
                              model="m")
    items = []
    with pytest.raises(ProtocolError, match="that is not an API event") as caught:
        async for item in stream:
            items.append(item)
    assert Deltas(["kept"]) in items  # the text before it goes first
    assert caught.type is ProtocolError


ODD_CHATS = {
    "not an object": "42",
    "a choice that is text": '{"choices": ["x"]}',
    "content that is a number": '{"choices": [{"delta": {"content": 5}}]}',
}


@pytest.mark.parametrize("case", ODD_CHATS)
async def test_an_odd_chat_chunk_is_a_protocol_error(case: str) -> None:
    body = {"messages": [{"role": "user", "content": "hi"}]}
    stream = stream_chat(source_of(ODD_CHATS[case]), URL, body, api_key=None, model="m")
    with pytest.raises(ProtocolError, match="sent a stream chunk that is not an API event"):
        async for _ in stream:
            pass


async def test_a_usage_that_is_no_number_leaves_the_reply_whole() -> None:
    chunk = '{"id": "c", "choices": [{"delta": {"content": "ab"}, "finish_reason": "stop"}]}'
    usage = '{"id": "c", "choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": NaN}}'
    body = {"messages": [{"role": "user", "content": "hi"}],
            "stream_options": {"include_usage": True}}
    start = time.monotonic()
    items = [item async for item in stream_chat(source_of(chunk, usage), URL, body,
                                                api_key=None, model="m")]
    assert Deltas(["ab"]) in items
    assert isinstance(items[-1], Finished) and items[-1].response_id == "c"
    assert items[-1].usage is not None and items[-1].usage.estimated  # counted here
    assert time.monotonic() - start < 0.2  # the usage came (broken): no grace wait for it


def test_the_limits_are_what_the_docs_say() -> None:
    from pathlib import Path

    doc = (Path(__file__).parents[2] / "docs" / "headless.md").read_text()
    section = doc.split("## Size limits", 1)[1].split("\n## ", 1)[0]
    for value in (limits.MAX_MESSAGE_BYTES, limits.MAX_REPLY_BYTES, limits.MAX_BODY_BYTES,
                  limits.MAX_ERROR_BODY_BYTES):
        assert limits._mib(value) in section, value
