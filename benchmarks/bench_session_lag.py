"""Event-loop lag during a real turn, and how many events a screen is woken for. Prints numbers.

    .venv/bin/python benchmarks/bench_session_lag.py [--runs 3] [--tokens 4000] [--tps 5000]

The simulator runs as a process on 127.0.0.1 and streams a ~4,000-token unified diff over 50
files at 5,000 tok/s; the turn runs through runtime.open_runtime (real client, watcher, workspace,
journal) with --apply flags, so it ends in a 50-file apply. A 1 ms ticker task measures how late
the loop wakes it (lag = actual wake-up - due time) from the request to TurnFinished.
Target: max lag <= 20 ms (a screen repainting at 30 fps never stalls on the session).

The same turn is run two ways: `session.turn()` (every event delivered) and
`session.frames()` (coalesced, 1/30 s); events (or frames) delivered per second of streaming
are printed for both.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from spark_pair.protocol.events import Completed, Started
from spark_pair.session.approval import PolicyApprover
from spark_pair.session.events import Frame, TurnFinished, TurnStatus
from spark_pair.session.runtime import open_runtime
from spark_pair.sim.process import SimProcess

FILES = 50
TARGET_MS = 20.0


def _files(changed: list[int]) -> tuple[dict[str, str], str]:
    """FILES modules and a diff changing `changed[n]` lines of module n."""
    files, hunks = {}, []
    for n, per_file in enumerate(changed):
        lines = [f"value_{n}_{i} = compute({i}, 'item {i:05d}')\n" for i in range(per_file + 8)]
        files[f"mod_{n:02d}.py"] = "".join(lines)
        body = [f" {lines[0]}", f" {lines[1]}"]
        body += [f"-{ln}+{ln.replace('compute(', 'compute_fast(')}" for ln in lines[2:2 + per_file]]
        body += [f" {lines[2 + per_file]}"]
        count = per_file + 3
        hunks.append(f"--- a/mod_{n:02d}.py\n+++ b/mod_{n:02d}.py\n"
                     f"@@ -1,{count} +1,{count} @@\n" + "".join(body))
    return files, "".join(hunks)


def make_repo(root: Path, tokens: int) -> str:
    """A committed repo of FILES modules; returns a reply of about `tokens` tokens (4
    characters each, as the simulator counts, never more) changing every one of them."""
    changed = [1] * FILES
    n = 0
    while len(_files([c + (i == n % FILES) for i, c in enumerate(changed)])[1]) // 4 <= tokens:
        changed[n % FILES] += 1
        n += 1
    files, reply = _files(changed)
    for name, text in files.items():
        (root / name).write_text(text)
    for args in (["init", "-q"], ["add", "."],
                 ["-c", "user.name=b", "-c", "user.email=b@b", "commit", "-q", "-m", "base"]):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)
    return reply


class Ticker:
    """A task that asks to wake every 1 ms and records how late each wake-up is."""

    def __init__(self) -> None:
        self.lags: list[float] = []
        self.on = False

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            due = loop.time() + 0.001
            await asyncio.sleep(0.001)
            if self.on:
                self.lags.append(max(0.0, loop.time() - due))


async def one_turn(root: Path, base_url: str, coalesce: bool) -> tuple[list[float], int, float]:
    """(lags, deliveries during the stream, stream seconds) of one applied turn."""
    ticker = Ticker()
    tick = asyncio.create_task(ticker.run())
    overrides = {"model.base_url": base_url, "model.name": "gpt-5.3-codex-spark",
                 "session.transport": "ws"}
    approver = PolicyApprover(apply=True)
    delivered, t_start, t_end = 0, 0.0, 0.0
    try:
        async with open_runtime(root, approver=approver, overrides=overrides,
                                env={"SPARK_PAIR_API_KEY": "sk-bench-not-secret"}) as rt:
            files = [p.name for p in sorted(root.glob("mod_*.py"))]
            ticker.on = True
            result = None
            if coalesce:
                async for frame in rt.session.frames("BENCH", files):
                    assert isinstance(frame, Frame)
                    if t_start and not t_end:
                        delivered += 1
                    for event in frame.events:
                        t_start, t_end, result = _mark(event, t_start, t_end, result)
            else:
                async for event in rt.session.turn("BENCH", files):
                    if t_start and not t_end:
                        delivered += 1
                    t_start, t_end, result = _mark(event, t_start, t_end, result)
            ticker.on = False
            assert result is not None
            if result.status != TurnStatus.APPLIED or len(result.changed) != FILES:
                raise SystemExit(f"the turn ended {result.status}: {result.error}")
    finally:
        tick.cancel()
    return ticker.lags, delivered, t_end - t_start


async def idle_lags(seconds: float) -> list[float]:
    """The ticker alone for as long as a turn takes: the machine's own lag (other processes)."""
    ticker = Ticker()
    ticker.on = True
    tick = asyncio.create_task(ticker.run())
    await asyncio.sleep(seconds)
    tick.cancel()
    return ticker.lags


def _mark(event: object, t_start: float, t_end: float, result: object) -> tuple:
    match event:
        case Started():
            t_start = time.perf_counter()
        case Completed():
            t_end = time.perf_counter()
        case TurnFinished(result=r):
            result = r
    return t_start, t_end, result


def undo_all(root: Path) -> None:
    subprocess.run(["git", "checkout", "-q", "--", "."], cwd=root, check=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--tokens", type=int, default=4000)
    ap.add_argument("--tps", type=float, default=5000.0)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        root = Path(d) / "repo"
        root.mkdir()
        os.environ["SPARK_PAIR_HOME"] = str(Path(d) / "home")  # journal and log stay in here
        reply = make_repo(root, args.tokens)
        with SimProcess(tps=args.tps, ttft_ms=50) as sim:
            sim.configure(replies=[{"match": "BENCH", "text": reply}])
            lags: list[float] = []
            rates: dict[bool, list[float]] = {False: [], True: []}
            maxes, idle, turn_s = [], [], []
            for run in range(args.runs + 1):  # the first is a warm-up
                for coalesce in (False, True):
                    t0 = time.perf_counter()
                    got, n, took = asyncio.run(one_turn(root, sim.base_url, coalesce))
                    turn_s.append(time.perf_counter() - t0)
                    undo_all(root)
                    if run:
                        lags += got
                        maxes.append(max(got))
                        rates[coalesce].append(n / took)
                idle += asyncio.run(idle_lags(statistics.median(turn_s)))
    lags.sort()
    p99 = lags[int(len(lags) * 0.99)] * 1000
    worst = max(lags) * 1000
    tokens = len(reply) // 4
    print(f"{tokens:,}-token reply over {FILES} files at {args.tps:,.0f} tok/s, "
          f"{args.runs} runs x 2, Python {sys.version.split()[0]}")
    print(f"loop lag (1 ms ticker), request -> 50-file apply: max {worst:.1f} ms "
          f"(median of run maxima {statistics.median(maxes) * 1000:.1f} ms), "
          f"p99 {p99:.2f} ms, median {statistics.median(lags) * 1000:.2f} ms "
          f"(target max <= {TARGET_MS:.0f} ms: {'met' if worst <= TARGET_MS else 'NOT met'})")
    idle.sort()
    print(
        f"the same ticker with no turn (this machine's own noise): max {max(idle) * 1000:.1f} ms, "
        f"p99 {idle[int(len(idle) * 0.99)] * 1000:.2f} ms"
    )
    every, framed = statistics.median(rates[False]), statistics.median(rates[True])
    print(f"deliveries per second while streaming: every event {every:,.0f}/s, "
          f"frames (1/30 s) {framed:,.0f}/s ({every / framed:,.0f}x fewer wake-ups)")


if __name__ == "__main__":
    main()
