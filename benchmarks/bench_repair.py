"""What the repair round costs a turn: the look after the stream (`session.repair.survey`, in a
worker thread before the write) next to the check the apply step makes anyway (`check_each`),
for a reply that fits and one with a hunk that matches nowhere; and the candidate search in a
large file (bounded to MAX_SCAN lines around the stated line). Real files. Prints numbers and
ratios.

    .venv/bin/python benchmarks/bench_repair.py [--lines 5000] [--hunks 5] [--rounds 20]
                                                [--big-lines 400000]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from spark_pair.edits.apply import check_each
from spark_pair.edits.ops import Hunk, Modify
from spark_pair.session import repair


def ms(work: Callable[[], object], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        work()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def hunk(lines: list[str], at: int, invented: bool = False) -> Hunk:
    first = "    an invented line" if invented else lines[at]
    return Hunk(at + 1, 3, at + 1, 3, [" " + first, "-" + lines[at + 1], "+    changed()",
                                       " " + lines[at + 2]])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=5000)
    ap.add_argument("--hunks", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--big-lines", type=int, default=400_000)
    args = ap.parse_args()
    lines = [f"    value_{i} = compute({i})" for i in range(args.lines)]
    at = [args.lines * (k + 1) // (args.hunks + 1) for k in range(args.hunks)]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "big.py").write_text("\n".join(lines) + "\n")
        fits = [Modify("big.py", [hunk(lines, a) for a in at])]
        missed = [Modify("big.py", [hunk(lines, a, invented=a == at[-1]) for a in at])]
        print(f"a {args.lines}-line file, {args.hunks} hunks, median of {args.rounds}:")
        for name, ops in (("fits", fits), ("one hunk matches nowhere", missed)):
            check = ms(lambda ops=ops: check_each(root, ops), args.rounds)
            look = ms(lambda ops=ops: repair.survey(root, ops), args.rounds)
            print(f"  {name}: check_each {check:.2f} ms, survey {look:.2f} ms "
                  f"(x{look / check:.1f} the check)")
        misses = repair.survey(root, missed).misses
        ask = ms(lambda: repair.ask_text(misses), args.rounds)
        print(f"  the repair request's text: {ask:.2f} ms, "
              f"{len(repair.ask_text(misses)):,} chars")
    big = [f"row {i}" for i in range(args.big_lines)]
    old = [big[args.big_lines * 3 // 4], "an invented line", big[args.big_lines * 3 // 4 + 2]]
    found = ms(lambda: repair.candidate(big, old, args.big_lines * 3 // 4 + 1), 5)
    whole = ms(lambda: repair.candidate(big, old, 1), 5)
    print(f"candidate place in a {args.big_lines:,}-line file: {found:.2f} ms near the stated "
          f"line, {whole:.2f} ms when it is far off (at most {repair.MAX_SCAN} lines are read)")


if __name__ == "__main__":
    main()
