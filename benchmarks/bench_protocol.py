"""Model client speed against the unthrottled simulator.

    .venv/bin/python benchmarks/bench_protocol.py [--tokens 20000] [--runs 20]

Per transport: end-to-end client throughput (sim + client), pure client parse throughput
(recorded wire bytes replayed with no network; target >= 20,000 tok/s), client-added TTFT over a
raw socket baseline (sim TTFT 0; target <= 3 ms on a warm WS connection), and the time of a short
turn on a warm WS socket vs a new HTTP request.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time

import httpx
import websockets

from spark_pair.protocol.chat import stream_chat
from spark_pair.protocol.client import ClientOptions, ModelClient, _common_prefix
from spark_pair.protocol.events import Completed, Message, TextDelta, TurnRequest
from spark_pair.protocol.http_common import post_sse
from spark_pair.protocol.items import Deltas
from spark_pair.protocol.responses_sse import handle_event, stream_responses
from spark_pair.protocol.responses_ws import BETA_HEADER, ws_url
from spark_pair.sim.process import SimProcess

MODEL = "gpt-5.3-codex-spark"


def request(text: str = "go") -> TurnRequest:
    return TurnRequest("bench", [Message("user", text)], max_tokens=None, task="bench")


def options(base: str, transport: str) -> ClientOptions:
    return ClientOptions(base_url=base, api_key="bench", model=MODEL, transport=transport,
                         max_tokens=None, max_retries=0)


async def end_to_end(base: str, transport: str, runs: int) -> float:
    """Median tok/s of whole streams (server unthrottled + client parsing)."""
    rates = []
    async with ModelClient(options(base, transport)) as c:
        for _ in range(runs):
            t0 = time.perf_counter()
            done = await c.complete(request())
            rates.append(done.usage.output_tokens / (time.perf_counter() - t0))
    return statistics.median(rates)


async def capture(base: str, path: str, body: dict) -> bytes:
    async with httpx.AsyncClient() as http:
        resp = await http.post(base + path, json=body)
        return resp.content


async def parse_only(base: str, transport: str, tokens: int) -> float:
    """tok/s of the client's parse path over recorded wire bytes (no network, no server)."""
    if transport == "ws":
        messages: list[str] = []
        async with websockets.connect(ws_url(base), additional_headers=[BETA_HEADER],
                                      max_size=None) as ws:
            await ws.send(json.dumps({"type": "response.create", "model": MODEL,
                                      "input": [{"role": "user", "content": "go"}]}))
            while True:
                messages.append(await ws.recv())
                if '"response.completed"' in messages[-1]:
                    break
        t0 = time.perf_counter()
        n = 0
        for raw in messages:
            item = handle_event(json.loads(raw), "ws", MODEL, None)
            n += isinstance(item, Deltas)
        return n / (time.perf_counter() - t0)
    path = "/v1/chat/completions" if transport == "chat" else "/v1/responses"
    body = {"model": MODEL, "stream": True}
    body.update({"messages": [{"role": "user", "content": "go"}],
                 "stream_options": {"include_usage": True}} if transport == "chat"
                else {"input": [{"role": "user", "content": "go"}]})
    raw = await capture(base, path, body)
    chunks = [raw[i:i + 16384] for i in range(0, len(raw), 16384)]

    def handler(_req: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"},
                              stream=ByteStream(chunks))

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
        url = "http://replay" + path
        t0 = time.perf_counter()
        source = post_sse(http, url, body, api_key=None, model=MODEL, read_timeout_s=10)
        items = (stream_chat(source, url, body, api_key=None, model=MODEL)
                 if transport == "chat" else
                 stream_responses(source, url, api_key=None, model=MODEL))
        n = 0
        async for item in items:
            n += len(item.texts) if isinstance(item, Deltas) else 0
        return n / (time.perf_counter() - t0)


class ByteStream(httpx.AsyncByteStream):
    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks

    async def __aiter__(self):
        for c in self.chunks:
            yield c


async def raw_ws_ttft(base: str, runs: int) -> float:
    """Median seconds from send to the first delta message on a raw warm socket."""
    out = []
    async with websockets.connect(ws_url(base), additional_headers=[BETA_HEADER],
                                  max_size=None, compression=None) as ws:
        for i in range(runs + 2):
            t0 = time.perf_counter()
            await ws.send(json.dumps({"type": "response.create", "model": MODEL,
                                      "input": [{"role": "user", "content": "go"}]}))
            first = None
            while True:
                msg = await ws.recv()
                if first is None and "output_text.delta" in msg:
                    first = time.perf_counter() - t0
                if '"response.completed"' in msg:
                    break
            if i >= 2:
                out.append(first)
    return statistics.median(out)


async def client_ttft(base: str, transport: str, runs: int) -> float:
    out = []
    async with ModelClient(options(base, transport)) as c:
        for i in range(runs + 2):
            t0 = time.perf_counter()
            first = None
            async for ev in c.stream(request()):
                if first is None and isinstance(ev, TextDelta):
                    first = time.perf_counter() - t0
            if i >= 2:
                out.append(first)
    return statistics.median(out)


async def turn_time(base: str, transport: str, runs: int, fresh: bool) -> float:
    """Median seconds of a short turn; fresh=True opens a new client (connection) every turn."""
    out = []
    c = ModelClient(options(base, transport))
    try:
        for i in range(runs + 2):
            if fresh:
                await c.aclose()
                c = ModelClient(options(base, transport))
            t0 = time.perf_counter()
            done = await c.complete(request())
            assert isinstance(done, Completed)
            if i >= 2:
                out.append(time.perf_counter() - t0)
    finally:
        await c.aclose()
    return statistics.median(out)


def replay_check(tokens: int) -> tuple[float, float]:
    """Seconds the client spends checking a retry's replay against the text already shown:
    a stream of `tokens` 4-character deltas, and the same text as one gathered read."""
    text = "".join(chr(97 + (i * 7) % 26) for i in range(tokens * 4))
    t0 = time.perf_counter()
    for before in range(0, len(text), 4):
        _common_prefix(text[before:before + 4], text[before:before + 4])
    per_delta = time.perf_counter() - t0
    again = text[:-1] + text[-1]  # the same text, another string (no identity shortcut)
    t0 = time.perf_counter()
    _common_prefix(again, text)
    return per_delta, time.perf_counter() - t0


async def main(args: argparse.Namespace) -> None:
    with SimProcess(tps=0, ttft_ms=0) as sim:
        base = sim.base_url
        sim.configure(tokens=args.tokens)
        rows = []
        for t in ("ws", "responses", "chat"):
            rows.append([t, await end_to_end(base, t, 3), await parse_only(base, t, args.tokens)])
        sim.configure(tokens=20)
        raw = await raw_ws_ttft(base, args.runs)
        ttft = {t: await client_ttft(base, t, args.runs) for t in ("ws", "responses", "chat")}
        warm = {t: await turn_time(base, t, args.runs, False) for t in ("ws", "responses", "chat")}
        cold = {t: await turn_time(base, t, args.runs, True) for t in ("responses", "chat")}
    print(f"spark-pair protocol bench: unthrottled simulator, {args.tokens} tokens per stream, "
          f"medians of {args.runs} runs")
    print(f"{'transport':<10} {'e2e tok/s':>10} {'parse tok/s':>12} {'TTFT ms':>8} "
          f"{'+raw ms':>8} {'turn ms':>8} {'new conn':>9}")
    for t, e2e, parse in rows:
        cold_ms = f"{cold[t] * 1000:9.2f}" if t in cold else f"{'-':>9}"
        print(f"{t:<10} {e2e:>10,.0f} {parse:>12,.0f} {ttft[t] * 1000:>8.2f} "
              f"{(ttft[t] - raw) * 1000:>8.2f} {warm[t] * 1000:>8.2f} {cold_ms}")
    print(f"raw WS socket TTFT baseline: {raw * 1000:.2f} ms (target: ws +raw <= 3 ms; "
          "parse >= 20,000 tok/s)")
    print("turn ms = a 20-token turn on a kept client (warm WS socket / pooled HTTP); "
          "new conn = a new client and TCP connection per turn")
    per_delta, gathered = replay_check(args.tokens)
    print(f"a retry's replay of {args.tokens} tokens checked against the shown text: "
          f"{per_delta * 1000:.2f} ms per delta, {gathered * 1e6:.1f} us as one read")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--tokens", type=int, default=20000)
    parser.add_argument("--runs", type=int, default=20)
    asyncio.run(main(parser.parse_args()))
