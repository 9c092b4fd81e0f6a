"""Simulator throughput and pacing, measured with raw clients (no SDK parsing in the way).

    .venv/bin/python benchmarks/bench_sim.py [--tokens 20000] [--runs 5]

Prints, per transport, the unthrottled server throughput in tokens/s (target >= 20,000), and
the paced duration of 2,000 tokens at 1,000 tok/s (target ~2.0 s plus TTFT, no drift).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from urllib.parse import urlsplit

import websockets

from spark_pair.sim.process import SimProcess

MODEL = "gpt-5.3-codex-spark"
CHAT_MARK = b'"delta":{"content":'
RESP_MARK = b"event: response.output_text.delta\n"


async def http_raw(base_url: str, path: str, body: dict, mark: bytes) -> tuple[int, float, float]:
    """(tokens, seconds to the first token, seconds in all) over one raw HTTP/1.1 connection."""
    url = urlsplit(base_url)
    payload = json.dumps(body).encode()
    start = time.perf_counter()
    reader, writer = await asyncio.open_connection(url.hostname, url.port)
    writer.write(
        f"POST {path} HTTP/1.1\r\nHost: {url.netloc}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(payload)}\r\nConnection: close\r\n\r\n".encode() + payload)
    await writer.drain()
    tokens, first, tail = 0, 0.0, b""
    while True:
        chunk = await reader.read(1 << 16)
        if not chunk:
            break
        data = tail + chunk
        found = data.count(mark)
        if found and not tokens:
            first = time.perf_counter() - start
        tokens += found
        tail = data[-len(mark) + 1:]
    writer.close()
    return tokens, first, time.perf_counter() - start


async def ws_raw(base_url: str, body: dict) -> tuple[int, float, float]:
    url = base_url.replace("http://", "ws://") + "/v1/responses"
    async with websockets.connect(url, proxy=None, max_size=None) as ws:
        start = time.perf_counter()
        await ws.send(json.dumps({"type": "response.create", **body}))
        tokens, first = 0, 0.0
        while True:
            message = await ws.recv()
            if '"response.output_text.delta"' in message:
                if not tokens:
                    first = time.perf_counter() - start
                tokens += 1
            elif '"response.completed"' in message or '"type":"error"' in message:
                break
        return tokens, first, time.perf_counter() - start


def run(base_url: str, transport: str, tokens: int | None) -> tuple[int, float, float]:
    limit = {} if tokens is None else {"max_tokens": tokens}
    if transport == "chat":
        body = {"model": MODEL, "stream": True, **limit,
                "messages": [{"role": "user", "content": "go"}]}
        return asyncio.run(http_raw(base_url, "/v1/chat/completions", body, CHAT_MARK))
    body = {"model": MODEL, "input": "go"}
    if tokens is not None:
        body["max_output_tokens"] = tokens
    if transport == "responses":
        return asyncio.run(http_raw(base_url, "/v1/responses", {**body, "stream": True},
                                    RESP_MARK))
    return asyncio.run(ws_raw(base_url, body))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    print(f"unthrottled throughput ({args.tokens} tokens per response, {args.runs} runs)")
    with SimProcess("--tokens", str(args.tokens), tps=0, ttft_ms=0) as sim:
        for transport in ("chat", "responses", "ws"):
            rates = []
            for _ in range(args.runs):
                got, _first, seconds = run(sim.base_url, transport, None)
                assert got == args.tokens, f"{transport}: {got} tokens"
                rates.append(got / seconds)
            print(f"  {transport:<10} median {statistics.median(rates):>10,.0f} tok/s   "
                  f"best {max(rates):>10,.0f} tok/s")

    print("paced: 2,000 tokens at 1,000 tok/s, TTFT 150 ms (ideal: first 0.150 s, all 2.149 s)")
    with SimProcess("--tokens", "2000", tps=1000, ttft_ms=150) as sim:
        for transport in ("chat", "responses", "ws"):
            got, first, seconds = run(sim.base_url, transport, None)
            assert got == 2000, f"{transport}: {got} tokens"
            print(f"  {transport:<10} first token {first:.3f} s   all {seconds:.3f} s   "
                  f"drift {seconds - 2.149:+.3f} s")


if __name__ == "__main__":
    main()
