"""What the second look costs: time to the diff's first line when the model asks for a file
first (`NEED: pkg/util.py`, one follow-up request) against the same turn with the file sent up
front. Prints numbers.

    .venv/bin/python benchmarks/bench_look.py [--runs 5] [--context-tokens 6000]
        [--transport ws|chat|both]

The simulator runs as a process on 127.0.0.1 at the spark pace (1,200 tok/s, 150 ms to the
first token, its prefill model: 1 s per 20,000 input tokens the connection has not processed).
A runtime (real client, workspace, automatic context) opens a repository with a module of
about --context-tokens tokens given in the context (-f) and the small module the edit needs,
pkg/util.py. Two turns, interleaved, each in a fresh runtime whose connection is open already:
  given: pkg/util.py is in the context too; the model answers with the diff at once.
  look:  it is not; the model answers `NEED: pkg/util.py`, the follow-up carries the file
         (chained on the WebSocket: only the new part goes; over HTTP the whole conversation),
         and the model answers with the diff.
Measured: turn start to the diff's first line (its first file parsed), the turn's input and
output tokens (both requests for `look`) and the tokens the look added. One run of each comes
first and is not counted (a process's first turn loads code).

The look pays one round trip: the model's first token, its few NEED tokens, and the
follow-up's first token. It saves a failed turn (no diff, or a wrong one) and a person adding
the file by hand and sending again; and against sending more context up front to every turn,
it costs tokens only when the model asks.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from spark_pair.edits.parse_events import FileStarted
from spark_pair.session.approval import PolicyApprover
from spark_pair.session.events import Looked, TurnFinished
from spark_pair.session.runtime import open_runtime
from spark_pair.sim.process import SimProcess

UTIL = ("def slugify(text):\n    return text.lower().replace(' ', '-')\n\n\n"
        "def shout(text):\n    return text.upper()\n")
DIFF = ("--- a/pkg/util.py\n+++ b/pkg/util.py\n@@ -1,2 +1,2 @@\n def slugify(text):\n"
        "-    return text.lower().replace(' ', '-')\n"
        "+    return text.strip().lower().replace(' ', '-')\n")
PROMPT = "trim the input before making the url part"
REPLIES = [{"match": "You asked for: ", "text": DIFF},
           {"match": "pkg/util.py", "text": DIFF},  # the file is in the context: the diff
           {"match": "trim", "text": "NEED: pkg/util.py\n"}]


def make_repo(root: Path, tokens: int) -> None:
    import subprocess

    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "util.py").write_text(UTIL)
    lines, size, n = [], 0, 0
    while size < tokens * 4:  # the simulator counts 4 characters a token
        line = f"def helper_{n}(value):\n    return value * {n} + {n % 7}\n\n"
        lines.append(line)
        size += len(line)
        n += 1
    (root / "helpers.py").write_text("".join(lines))
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "base"]):
        subprocess.run(["git", "-c", "user.name=b", "-c", "user.email=b@b", "-c",
                        "commit.gpgsign=false", *args], cwd=root, check=True,
                       capture_output=True, timeout=30)


async def one_turn(sim: SimProcess, root: Path, transport: str, given: bool
                   ) -> tuple[float, int, int, int]:
    """(seconds to the diff's first line, input tokens, output tokens, tokens the look added)."""
    overrides = {"model.base_url": sim.base_url, "model.name": "gpt-5.3-codex-spark",
                 "session.transport": transport, "context.budget_tokens": "12000"}
    files = ["helpers.py", *(["pkg/util.py"] if given else [])]
    prompt = PROMPT + (" in pkg/util.py" if given else "")
    first, added, usage = None, 0, None
    async with open_runtime(root, approver=PolicyApprover(), overrides=overrides,
                            env={"SPARK_PAIR_API_KEY": "bench"}, prewarm=True,
                            watch=False) as rt:
        await rt.warmed()
        t0 = time.perf_counter()
        async for event in rt.session.turn(prompt, files):
            if first is None and isinstance(event, FileStarted):
                first = time.perf_counter() - t0
            elif isinstance(event, Looked):
                added = event.tokens
            elif isinstance(event, TurnFinished):
                usage = event.result.usage
                if event.result.error is not None:
                    sys.exit(f"the turn failed: {event.result.error.message}")
    assert first is not None and usage is not None, "no diff"
    assert given or added, "the model did not look"
    return first, usage.input_tokens, usage.output_tokens, added


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--context-tokens", type=int, default=6000)
    ap.add_argument("--transport", choices=("ws", "chat", "both"), default="both")
    args = ap.parse_args()
    transports = ["ws", "chat"] if args.transport == "both" else [args.transport]
    with tempfile.TemporaryDirectory() as tmp, SimProcess(tps=1200, ttft_ms=150) as sim:
        os.environ["SPARK_PAIR_HOME"] = str(Path(tmp) / "home")
        root = Path(tmp) / "repo"
        make_repo(root, args.context_tokens)
        sim.configure(replies=REPLIES)
        print(f"bench_look: {args.runs} runs, a {args.context_tokens:,}-token module in the "
              "context, the simulator at 1,200 tok/s, 150 ms TTFT, prefill 20,000 tok/s")
        for transport in transports:
            got: dict[bool, list[tuple[float, int, int, int]]] = {True: [], False: []}
            for n in range(args.runs + 1):
                for given in (True, False):  # interleaved
                    one = asyncio.run(one_turn(sim, root, transport, given))
                    if n:  # the first of each is not counted
                        got[given].append(one)
            ms = {g: statistics.median(r[0] for r in got[g]) * 1000 for g in got}
            tok_in = {g: statistics.median(r[1] for r in got[g]) for g in got}
            tok_out = {g: statistics.median(r[2] for r in got[g]) for g in got}
            added = statistics.median(r[3] for r in got[False])
            print(f"  {transport}:")
            print(f"    file given up front: diff's first line {ms[True]:7.0f} ms, "
                  f"in {tok_in[True]:,.0f} / out {tok_out[True]:,.0f} tok")
            print(f"    second look:         diff's first line {ms[False]:7.0f} ms, "
                  f"in {tok_in[False]:,.0f} / out {tok_out[False]:,.0f} tok "
                  f"(the look sent {added:,.0f} tok)")
            print(f"    the look adds {ms[False] - ms[True]:,.0f} ms "
                  f"({ms[False] / ms[True]:.2f}x) and {tok_in[False] - tok_in[True]:,.0f} "
                  "input tokens")


if __name__ == "__main__":
    main()
