"""Streaming parse speed for a ~4,000-token diff fed in 1-token (~4 character) chunks.
Prints numbers.

    .venv/bin/python benchmarks/bench_parse.py [--tokens 4000] [--rounds 20]

Reports: time from the last chunk to the finished parse (close + operations; target <= 5 ms),
throughput in tokens/s (target >= 200,000), and the cost of 1-character feeds vs one whole feed.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time

from spark_pair.edits.parser import DiffParser


def make_diff(tokens: int) -> str:
    """A multi-file reply with prose and fences, about `tokens` * 4 characters long."""
    parts = ["Here is the change you asked for.\n\n```diff\n"]
    size = len(parts[0])
    n = 0
    while size < tokens * 4:
        body = [f"diff --git a/src/mod{n}.py b/src/mod{n}.py\n", f"--- a/src/mod{n}.py\n",
                f"+++ b/src/mod{n}.py\n"]
        for h in range(3):
            body.append(f"@@ -{10 + h * 40},7 +{10 + h * 40},7 @@ def func_{h}():\n")
            body += [f"     value_{i} = compute({i})  # keep\n" for i in range(3)]
            body += [
                f"-    result = old_call({h}, {n})\n",
                f"+    result = new_call({h}, {n}, fast=True)\n",
            ]
            body += [f"     other_{i} = value_{i} * 2\n" for i in range(3)]
        text = "".join(body)
        parts.append(text)
        size += len(text)
        n += 1
    parts.append("```\n\nThat should do it.\n")
    return "".join(parts)


def run(text: str, size: int) -> tuple[float, float]:
    """Total seconds, and seconds from the last chunk to the finished operations."""
    chunks = [text[i:i + size] for i in range(0, len(text), size)]
    p = DiffParser()
    t0 = time.perf_counter()
    for c in chunks[:-1]:
        p.feed(c)
    t1 = time.perf_counter()
    p.feed(chunks[-1])
    p.close()
    p.operations()
    t2 = time.perf_counter()
    return t2 - t0, t2 - t1


class _Nothing:
    def feed(self, delta: str) -> list:
        return []


def call_floor(text: str) -> float:
    """Seconds Python needs just to call a do-nothing feed() once per character."""
    sink = _Nothing()
    t0 = time.perf_counter()
    for ch in text:
        sink.feed(ch)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tokens", type=int, default=4000)
    ap.add_argument("--rounds", type=int, default=20)
    args = ap.parse_args()
    text = make_diff(args.tokens)
    tokens = len(text) / 4
    sizes = (4, 1, len(text))
    runs: dict[int, list[tuple[float, float]]] = {size: [] for size in sizes}
    gc.disable()  # as timeit does: a collection landing in one run is not the parser's cost
    try:
        for _ in range(args.rounds):  # sizes interleaved, so drift on the machine hits all alike
            for size in sizes:
                runs[size].append(run(text, size))
    finally:
        gc.enable()
    results = {size: (statistics.median(r[0] for r in rs), statistics.median(r[1] for r in rs))
               for size, rs in runs.items()}
    total4, tail4 = results[4]
    print(f"diff: {len(text)} chars, ~{tokens:.0f} tokens, {args.rounds} rounds (medians, "
          "sizes interleaved, gc off while timing)")
    print(
        f"4-char chunks: total {total4 * 1000:.2f} ms, last chunk -> parsed {tail4 * 1000:.3f} ms "
        f"(target <= 5 ms)"
    )
    print(f"throughput: {tokens / total4:,.0f} tok/s in 4-char chunks (target >= 200,000)")
    ratio = results[1][0] / results[len(text)][0]
    print(
        f"1-char feeds: {results[1][0] * 1000:.2f} ms, "
        f"whole: {results[len(text)][0] * 1000:.2f} ms, "
        f"ratio {ratio:.2f}x (target <= ~2x)"
    )
    floor = statistics.median(call_floor(text) for _ in range(args.rounds))
    own = (results[1][0] - floor) / results[len(text)][0]
    print(f"  of which calling an empty feed() per char: {floor * 1000:.2f} ms; "
          f"parser work beyond that call cost: {own:.2f}x of whole")
    double = make_diff(args.tokens * 4)
    big = statistics.median(run(double, 1)[0] for _ in range(max(args.rounds // 4, 3)))
    print(f"linearity: 1-char feeds of a 4x longer diff take {big / results[1][0]:.2f}x as long "
          f"(4.00 = linear)")


if __name__ == "__main__":
    main()
