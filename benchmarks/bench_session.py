"""The session loop's own cost per streamed token, in process. Prints numbers.

    .venv/bin/python benchmarks/bench_session.py [--tokens 20000] [--rounds 5]

A scripted client streams a ~20,000-token unified diff as one-token (4-character) deltas, as
fast as the event loop runs it (it yields to the loop after each delta, as a socket read would).
Three timings over the same deltas (best of --rounds):
- client alone: the stream consumed by a bare `async for`;
- parser alone: the deltas fed straight to DiffParser (what any consumer of the reply pays);
- session turn: Session.turn() end to end (dry run, no watcher): queue, cancel check, parse,
  decisions, events out.
The session loop's share is turn - client - parser per token; at 20,000 tok/s a token lasts
50 us, and the loop should take < 5 % of that (target).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

from bench_run import make_repo

from spark_pair.edits.ops import content_hash
from spark_pair.edits.parser import DiffParser
from spark_pair.protocol import events as pe
from spark_pair.session.approval import Action, Decision, PolicyApprover
from spark_pair.session.session import Session

RATE = 20_000.0  # tok/s the target refers to


class InstantClient:
    """Streams the reply in one-token deltas with no pacing."""

    transport = "ws"

    def __init__(self, chunks: list[str]) -> None:
        self.chunks = chunks

    async def stream(self, request: pe.TurnRequest, *, gather: bool = False
                     ) -> AsyncIterator[object]:
        yield pe.Started("req_bench", "ws", "m", "ws://127.0.0.1:1/v1/responses")
        sleep = asyncio.sleep
        for chunk in self.chunks:
            yield pe.TextDelta(chunk)
            await sleep(0)  # a socket read gives the loop a turn between messages
        usage = pe.Usage(100, len(self.chunks))
        yield usage
        text = "".join(self.chunks)
        yield pe.Completed("resp_bench", text, usage, pe.Metrics(0.0, 0.0, len(self.chunks), None))


class FixedContext:
    """The smallest WorkspaceLike: one request, the file's hash; no history."""

    def __init__(self, root: Path) -> None:
        self.hashes = {"big.py": content_hash((root / "big.py").read_bytes())}

    def build(self, prompt: str, files: Sequence[str], *, followup: bool
              ) -> tuple[pe.TurnRequest, dict[str, str | None]]:
        return pe.TurnRequest("bench", [pe.Message("user", prompt)]), dict(self.hashes)

    def build_now(self, prompt: str, files: Sequence[str], *, followup: bool
                  ) -> tuple[pe.TurnRequest, dict[str, str | None]]:
        return self.build(prompt, files, followup=followup)

    def finish(self, request: pe.TurnRequest, reply: str, applied: Sequence[str],
               review: str = "") -> None:
        pass


async def time_client(chunks: list[str]) -> float:
    t = time.perf_counter()
    async for _ in InstantClient(chunks).stream(pe.TurnRequest("", [])):
        pass
    return time.perf_counter() - t


def time_parser(chunks: list[str]) -> float:
    t = time.perf_counter()
    parser = DiffParser()
    for chunk in chunks:
        parser.feed(chunk)
    parser.close()
    return time.perf_counter() - t


class RejectAll:
    """Says no to every operation: the turn ends after the stream, with no apply or check step,
    so the timing is the loop's alone (the dry run's check is timed on its own)."""

    async def decide(self, op: object) -> Decision:
        return Decision(Action.REJECT, "bench")


async def time_session(root: Path, chunks: list[str], approver: object
                       ) -> tuple[float, str, int]:
    session = Session(root, InstantClient(chunks), approver, workspace=FixedContext(root))
    t = time.perf_counter()
    events = 0
    result = None
    async for event in session.turn("BENCH", ["big.py"]):
        events += 1
        result = getattr(event, "result", result)
    took = time.perf_counter() - t
    assert result is not None
    return took, result.status, events


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tokens", type=int, default=20_000)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        root = Path(d)
        reply, _ = make_repo(root, args.tokens)  # the 47-hunk reply
        chunks = [reply[i:i + 4] for i in range(0, len(reply), 4)]
        n = len(chunks)
        client, parser, turn, dry = [], [], [], []
        status, events = "", 0
        for _ in range(args.rounds):
            client.append(asyncio.run(time_client(chunks)))
            parser.append(time_parser(chunks))
            took, status, events = asyncio.run(time_session(root, chunks, RejectAll()))
            turn.append(took)
            dry_took, dry_status, _ = asyncio.run(
                time_session(root, chunks, PolicyApprover(False, False, False)))
            dry.append(dry_took)
        if status != "rejected" or dry_status != "dry_run":
            raise SystemExit(f"the benchmark turns ended {status!r} / {dry_status!r}, "
                             "not rejected / dry_run")
        c, p, s = min(client), min(parser), min(turn)
        loop_us = max(0.0, s - c - p) / n * 1e6
        budget_us = 1e6 / RATE
        print(
            f"{n} one-token deltas, {events} session events, best of {args.rounds} "
            f"(median turn {statistics.median(turn) * 1000:.1f} ms), "
            f"Python {sys.version.split()[0]}"
        )
        print(f"client alone   {c * 1000:7.1f} ms  {n / c:>10,.0f} tok/s")
        print(f"parser alone   {p * 1000:7.1f} ms  {n / p:>10,.0f} tok/s")
        print(f"session turn   {s * 1000:7.1f} ms  {n / s:>10,.0f} tok/s")
        print(f"dry-run turn   {min(dry) * 1000:7.1f} ms  (the turn plus checking that the "
              f"diff applies: +{(min(dry) - s) * 1000:.1f} ms)")
        print(
            f"session loop   {loop_us:7.2f} us/token  "
            f"{1e6 / loop_us if loop_us else float('inf'):>10,.0f}"
            f" tok/s  = {loop_us / budget_us * 100:.1f} % of a token at {RATE:,.0f} tok/s "
            f"(target < 5 %)"
        )


if __name__ == "__main__":
    main()
