"""Input tokens of a 10-turn session with and without the history rule, against the simulator.

    .venv/bin/python benchmarks/bench_history.py [--turns 10] [--reply-lines 100]

A real simulator process answers ten instructions in a real git repository, over HTTP (the
Responses SSE transport: every request resends its history, as a resumed session's first
request and every `run --continue` do). Turns 3 and 7 fail (the reply holds no diff), turns 5
and 8 are rejected with a reason, the rest create a file of --reply-lines lines. The same
session runs twice: with the rule ([session] history_tokens 8000: failed attempts left out,
rejected replies replaced by a stand-in, their reasons kept, the newest turns within the
budget) and without it (every earlier turn resent whole); both keep up to 10 turns. Then each
session is reopened from the store (a restart) and one more request is sent.

Prints the input tokens the simulator counted for each request, the totals and the ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from spark_pair.session.approval import Action, Decision, Proposal
from spark_pair.sim.process import SimProcess

FAILED = {3, 7}
REJECTED = {5, 8}


class Reviewer:
    """Accepts every proposal, but those of the turns in REJECTED (with a reason)."""

    def __init__(self) -> None:
        self.turn = 0

    async def decide(self, proposal: Proposal) -> Decision:
        if self.turn in REJECTED:
            return Decision(Action.REJECT, f"turn {self.turn}: keep it in one module instead")
        return Decision(Action.ACCEPT)


def reply(turn: int, lines: int) -> str:
    if turn in FAILED:
        return "I would restructure this module first. " * (lines // 2)
    body = "".join(f"+def helper_{turn}_{i}(value):  # step {i}\n" for i in range(lines))
    return f"--- /dev/null\n+++ b/mod_{turn}.py\n@@ -0,0 +1,{lines} @@\n{body}"


def make_repo(root: Path) -> None:
    root.mkdir(parents=True)
    (root / "app.py").write_text("".join(f"def f{i}():\n    return {i}\n\n" for i in range(40)))
    for args in (["init", "-q"], ["add", "."],
                 ["-c", "user.name=b", "-c", "user.email=b@b", "commit", "-q", "-m", "base"]):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


async def session(root: Path, sim: SimProcess, turns: int, rule: bool, name: str
                  ) -> list[int]:
    """Input tokens per request: `turns` turns, then one more after a restart."""
    from spark_pair.session.runtime import open_runtime
    from spark_pair.session.stored import Pick, StoredSession

    overrides = {"model.base_url": sim.base_url, "model.name": "gpt-5.3-codex-spark",
                 "session.transport": "responses", "session.history_turns": "10"}
    used: list[int] = []
    for opening in (range(1, turns + 1), range(turns + 1, turns + 2)):
        reviewer = Reviewer()
        pick = Pick(name=name, create=True)
        stored = await asyncio.to_thread(StoredSession.open, root, pick)
        try:
            async with open_runtime(root, approver=reviewer, overrides=overrides,
                                    watch=False) as rt:
                stored.attach(rt.session, rt.workspace, max_turns=10, budget_tokens=8000,
                              rule=rule)
                for turn in opening:
                    reviewer.turn = turn
                    result = None
                    async for event in rt.session.turn(f"T{turn}: add step {turn}",
                                                       ["app.py"]):
                        result = getattr(event, "result", result)
                    assert result is not None and result.usage is not None
                    used.append(result.usage.input_tokens)
        finally:
            await asyncio.to_thread(stored.close)
    return used


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--turns", type=int, default=10)
    ap.add_argument("--reply-lines", type=int, default=100)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp, SimProcess(tps=0, ttft_ms=0) as sim:
        os.environ["SPARK_PAIR_HOME"] = str(Path(tmp) / "home")
        os.environ["SPARK_PAIR_API_KEY"] = "bench"
        sim.configure(replies=[{"match": f"T{t}:", "text": reply(t, args.reply_lines)}
                               for t in range(args.turns, 0, -1)])
        results = {}
        for rule in (True, False):
            root = Path(tmp) / f"repo-{rule}"
            make_repo(root)
            results[rule] = asyncio.run(session(root, sim, args.turns, rule, f"bench-{rule}"))
    load = os.getloadavg()[0]
    with_rule, without = results[True], results[False]
    print(f"input tokens per request (load {load:.2f}); turns {sorted(FAILED)} fail, "
          f"{sorted(REJECTED)} are rejected; request {args.turns + 1} follows a restart")
    print(f"{'request':>8} {'with rule':>10} {'without':>10}")
    for i, (a, b) in enumerate(zip(with_rule, without, strict=True), 1):
        print(f"{i:>8} {a:>10,} {b:>10,}")
    total_a, total_b = sum(with_rule), sum(without)
    print(f"{'total':>8} {total_a:>10,} {total_b:>10,}   ratio {total_a / total_b:.2f} "
          f"(saves {100 * (1 - total_a / total_b):.0f} %)")
    print(f"{'last':>8} {with_rule[-1]:>10,} {without[-1]:>10,}   ratio "
          f"{with_rule[-1] / without[-1]:.2f}")


if __name__ == "__main__":
    sys.exit(main())
