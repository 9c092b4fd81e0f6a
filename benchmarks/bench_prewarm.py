"""First-token time of a turn typed at a human pace, with and without pre-warm. Prints numbers.

    .venv/bin/python benchmarks/bench_prewarm.py [--runs 3] [--context-tokens 6000]
        [--transport ws|responses|chat]

The simulator runs as a process on 127.0.0.1 with its default prefill model (input not yet
processed on the connection costs 1 s per 20,000 tokens before the first token, on top of its
150 ms TTFT). A runtime (real client, WebSocket, workspace) opens the demo project plus a
module of about --context-tokens tokens in the context; the instruction is typed a key at a
time (110 ms a key, a 400 ms pause after every third word, 500 ms still before enter), the
draft handed to the pre-warmer as the app does. Two turns per run: the first, and a follow-up
chained on it. The time measured is enter (the turn's start) to its first token.
One run each way comes first and is not counted (the first turn of a process loads code).
Target: at least 40 % lower with pre-warm on the first turn. A follow-up is chained already
(it sends only the new instruction and what changed), so pre-warm has little left to save
there: its numbers are printed for the record. Runs alternate on/off (A/B interleaved).

Also printed: the pre-warms sent and skipped (a draft whose request differs from the last
pre-warm's only in its instruction is not sent), their input tokens a turn, and from the
simulator's log the share of each request's prompt that the server had processed before on
the connection (its prompt cache), for a pre-warm after a pre-warm, a turn after a pre-warm and
a turn after a turn.
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

from spark_pair.cli.commands.demo import make_repo
from spark_pair.protocol.events import FirstToken
from spark_pair.session.approval import PolicyApprover
from spark_pair.session.runtime import open_runtime
from spark_pair.sim.demo_project import CONTEXT_FILES, MATCH, reply_text
from spark_pair.sim.process import SimProcess

KEY_S = 0.110
WORD_PAUSE_S = 0.400
STILL_S = 0.500
TARGET = 0.40
PROMPTS = ("validate input lines and add an optional discount to the order total",
           "also keep the discount when the total is zero, and say so in the changelog")


def pad_module(tokens: int) -> str:
    """A module of about `tokens` tokens (4 characters each, as the simulator counts)."""
    lines, size, n = [], 0, 0
    while size < tokens * 4:
        line = f"def helper_{n}(value):\n    return value * {n} + {n % 7}\n\n"
        lines.append(line)
        size += len(line)
        n += 1
    return "".join(lines)


async def type_prompt(text: str, on_draft) -> None:
    """Type `text` a key at a time, handing every draft over (as the prompt widget does)."""
    draft = ""
    for w, word in enumerate(text.split(" ")):
        for ch in (" " if draft else "") + word:
            draft += ch
            on_draft(draft)
            await asyncio.sleep(KEY_S)
        if w % 3 == 2:
            await asyncio.sleep(WORD_PAUSE_S)
    await asyncio.sleep(STILL_S)


async def one_run(sim: SimProcess, root: Path, files: list[str], prewarm: bool,
                  transport: str = "ws") -> list[float]:
    """Enter-to-first-token (s) of each prompt of one session."""
    overrides = {"model.base_url": sim.base_url, "model.name": "gpt-5.3-codex-spark",
                 "session.transport": transport, "context.auto": "false"}
    out = []
    async with open_runtime(root, approver=PolicyApprover(), overrides=overrides,
                            env={"SPARK_PAIR_API_KEY": "bench"}, prewarm=True) as rt:
        await rt.warmed()
        warmer = rt.warm_drafts(300 if prewarm else 0)

        async def files_for(text: str) -> list[str]:
            return files

        for prompt in PROMPTS:
            await type_prompt(prompt, lambda d: warmer.draft_changed(d, files_for))
            t_enter = time.perf_counter()
            first = None
            async for event in rt.session.turn(prompt, files):
                if first is None and isinstance(event, FirstToken):
                    first = time.perf_counter() - t_enter
            assert first is not None, "no first token"
            out.append(first)
        if prewarm:
            hits, prefix, misses = warmer.counts
            print(f"    pre-warms sent {warmer.sent} (skipped {warmer.skipped}), turns that met "
                  f"one: {hits} hit, {prefix} prefix, {misses} miss; their input "
                  f"~{warmer.tokens} tokens (~{warmer.tokens // len(PROMPTS)} a turn)")
    return out


def cached_shares(entries: list[dict]) -> dict[str, list[tuple[float, int]]]:
    """From the simulator's log of one run (oldest first): for each request after another on
    its connection, the share of its prompt processed before (1 - unseen / prompt) and the
    tokens not processed before, by what came before it and what it is ("pre-warm -> turn")."""
    out: dict[str, list[tuple[float, int]]] = {}
    last: dict[int, str] = {}
    for e in entries:
        body = e.get("body") or {}
        if not e.get("prompt_tokens") or not body.get("input") and "previous_response_id" \
                not in body:
            continue  # the socket's start-up pre-warm (no input), or a request not read
        kind = "pre-warm" if body.get("generate") is False else "turn"
        before = last.get(e["connection_id"])
        if before is not None:
            share = 1 - e["unseen_tokens"] / e["prompt_tokens"]
            out.setdefault(f"{before} -> {kind}", []).append((share, e["unseen_tokens"]))
        last[e["connection_id"]] = kind
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--context-tokens", type=int, default=6000)
    parser.add_argument("--transport", default="ws", choices=("ws", "responses", "chat"),
                        help="an HTTP transport sends no pre-warm: what is left is the prefix "
                             "share of a turn after a turn")
    args = parser.parse_args()
    print(f"load before: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} "
          f"{os.getloadavg()[2]:.2f}")
    results: dict[bool, list[list[float]]] = {False: [], True: []}
    shares: dict[str, list[tuple[float, int]]] = {}
    with tempfile.TemporaryDirectory() as tmp, SimProcess(tps=1200, ttft_ms=150) as sim:
        os.environ["SPARK_PAIR_HOME"] = str(Path(tmp) / "home")
        sim.configure(replies=[{"match": MATCH, "text": reply_text()},
                               {"match": "discount", "text": reply_text()}])
        root = make_repo(Path(tmp))
        files = list(CONTEXT_FILES)
        if args.context_tokens > 0:
            (root / "helpers.py").write_text(pad_module(args.context_tokens))
            files.append("helpers.py")
        # the first turn in a process loads the turn's code (parser, apply, watcher) after its
        # request: one run each way first, not counted
        for prewarm in (True, False):
            asyncio.run(one_run(sim, root, files, prewarm, args.transport))
        for run in range(args.runs):
            for prewarm in (run % 2 == 0, run % 2 == 1):  # A/B, alternating which goes first
                seen = len(sim.requests())
                firsts = asyncio.run(one_run(sim, root, files, prewarm, args.transport))
                results[prewarm].append(firsts)
                for pair, got in cached_shares(sim.requests()[seen:]).items():
                    shares.setdefault(pair, []).extend(got)
                print(f"  run {run + 1} pre-warm {'on ' if prewarm else 'off'}: " + ", ".join(
                    f"{label} {s * 1000:.0f} ms" for label, s in zip(("first turn", "follow-up"),
                                                                     firsts, strict=True)))
    print(f"load after: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} "
          f"{os.getloadavg()[2]:.2f}")
    for pair, got in sorted(shares.items()):
        print(f"{pair}: the share of the prompt the server had processed before on the "
              f"connection, median {statistics.median(s for s, _ in got):.3f}; tokens not "
              f"processed before, median {statistics.median(t for _, t in got):.0f} "
              f"(n={len(got)})")
    if not shares:
        print("no two requests on one connection: the simulator keeps what a connection "
              "processed, and an HTTP connection closed while the next turn was typed")
    ok = True
    for i, label in enumerate(("first turn", "follow-up")):
        off = statistics.median(r[i] for r in results[False])
        on = statistics.median(r[i] for r in results[True])
        lower = 1 - on / off
        target = f"target >= {TARGET:.0%}" if i == 0 else "chained already: no target"
        ok &= lower >= TARGET or i > 0
        print(f"{label}: enter to first token, median of {args.runs}: off {off * 1000:.0f} ms, "
              f"on {on * 1000:.0f} ms: {lower:.0%} lower ({target})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
