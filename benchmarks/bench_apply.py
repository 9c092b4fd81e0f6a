"""Apply and undo time for a 50-file turn (real files, real fsyncs), hunk location in a
large file (a 2,000-line hunk in a 100,000-line file, and crafted worst cases), and the time of
a one-hunk apply with 0, 100 and 1,000 earlier turns in the journal (its cost must not grow with
the history). Prints numbers.

    .venv/bin/python benchmarks/bench_apply.py [--files 50] [--lines 300] [--rounds 5] [--dir D]
                                               [--big-lines 100000] [--hunk-lines 2000]
                                               [--history 0,100,1000] [--history-rounds 30]
                                               [--only history]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from spark_pair.base.errors import ConflictError
from spark_pair.edits.apply import apply_hunks, apply_turn
from spark_pair.edits.journal import Journal
from spark_pair.edits.ops import Create, Hunk, Modify, content_hash
from spark_pair.edits.render import render_op


def make_turn(root: Path, files: int, lines: int) -> list:
    body = "".join(f"    value_{i} = compute({i})  # line {i}\n" for i in range(lines))
    ops = []
    for n in range(files):
        path = root / "src" / f"pkg{n % 5}" / f"mod{n}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body)
        if n % 10 == 9:
            ops.append(Create(f"src/new/gen{n}.py", body[: lines * 10]))
            continue
        hunks = []
        for at in (lines // 5, lines // 2, lines - 5):
            hunks.append(Hunk(at + 3, None, None, None, [  # stated position off by 3
                f"     value_{at} = compute({at})  # line {at}",
                f"-    value_{at + 1} = compute({at + 1})  # line {at + 1}",
                f"+    value_{at + 1} = compute({at + 1}) * 2  # edited",
                f"     value_{at + 2} = compute({at + 2})  # line {at + 2}"]))
        ops.append(Modify(path.relative_to(root).as_posix(), hunks, content_hash(body.encode())))
    return ops


def big_file(lines: int) -> list[str]:
    """Code-like lines: most distinct, with the blank and closing lines real files repeat."""
    out = []
    for i in range(lines):
        out.append(
            ""
            if i % 7 == 6
            else "    }"
            if i % 7 == 5
            else f"    total_{i} = step({i}, total_{i - 1})"
        )
    return out


def locate_cases(lines: int, hunk_lines: int) -> list[tuple[str, str, Hunk]]:
    """(name, file text, hunk): the common case and crafted worst cases."""
    body = big_file(lines)
    at = lines - hunk_lines - 50  # near the end: a scan from the top passes most of the file
    old = body[at:at + hunk_lines]
    common = Hunk(at + 1 + 3, None, None, None,  # stated position off by 3
                  [" " + x for x in old[:-1]] + ["-" + old[-1], "+    done = True"])
    same = ["x"] * lines
    no_match = Hunk(None, None, None, None, [" x"] * (hunk_lines - 1) + ["-y"])
    nearest = Hunk(lines // 2, None, None, None, [" x"] * (hunk_lines - 1) + ["-x", "+z"])
    return [(f"common case: {hunk_lines}-line hunk, {lines:,}-line file", "\n".join(body) + "\n",
             common),
            (f"worst case: {lines:,} identical lines, {hunk_lines}-line hunk that matches nowhere",
             "\n".join(same) + "\n", no_match),
            (f"worst case: {lines:,} identical lines, {hunk_lines}-line hunk with a position",
             "\n".join(same) + "\n", nearest)]


def bench_locate(lines: int, hunk_lines: int, rounds: int) -> None:
    print(f"hunk location and rendering ({rounds} rounds, apply_hunks / render_op)")
    for name, text, hunk in locate_cases(lines, hunk_lines):
        times, shows = [], []
        for _ in range(rounds):
            t0 = time.perf_counter()
            try:
                apply_hunks(text, [hunk], "big.py")
            except ConflictError:
                pass
            times.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            render_op(Modify("big.py", [hunk]), text)
            shows.append(time.perf_counter() - t0)
        print(f"  {name}: locate+apply median {statistics.median(times) * 1000:.1f} ms "
              f"(min {min(times) * 1000:.1f}), render median "
              f"{statistics.median(shows) * 1000:.1f} ms (min {min(shows) * 1000:.1f})")


def spread(xs: list[float]) -> str:
    """min / median / max in milliseconds."""
    return (f"min {min(xs) * 1000:.2f} / median {statistics.median(xs) * 1000:.2f} / "
            f"max {max(xs) * 1000:.2f} ms")


def bench_history(histories: list[int], rounds: int, where: str | None) -> None:
    """A one-hunk edit of one file, applied as `spark-pair run` applies it (a fresh Journal:
    lock, recovery check, journal, write, commit), with n earlier turns in the journal; and the
    recovery check alone (lock + recover)."""
    print(f"one-hunk apply with earlier turns in the journal ({rounds} rounds each; "
          f"load average {', '.join(f'{x:.2f}' for x in os.getloadavg())})")
    base = None
    for n in histories:
        with tempfile.TemporaryDirectory(dir=where) as tmp:
            root, data = Path(tmp) / "repo", Path(tmp) / "data"
            root.mkdir()
            (root / "h.txt").write_text("v0\n")
            (root / "a.py").write_text("".join(f"x_{i} = {i}\n" for i in range(2 * rounds + 9)))
            t0 = time.perf_counter()
            for i in range(n):  # the history: n committed turns
                apply_turn(root, [Modify("h.txt", [Hunk(None, None, None, None,
                                                        [f"-v{i}", f"+v{i + 1}"])])],
                           journal=Journal(root, data))
            made = time.perf_counter() - t0
            applies, checks = [], []
            for r in range(rounds + 1):  # the first round is not timed (a warm-up)
                op = Modify("a.py", [Hunk(None, None, None, None,
                                          [f" x_{2 * r} = {2 * r}",  # a line no round edits
                                           f"-x_{2 * r + 1} = {2 * r + 1}",
                                           f"+x_{2 * r + 1} = {2 * r + 1}  # edited"])])
                t0 = time.perf_counter()
                apply_turn(root, [op], journal=Journal(root, data))
                took = time.perf_counter() - t0
                journal = Journal(root, data)
                t0 = time.perf_counter()
                with journal.locked():
                    journal.recover()
                check = time.perf_counter() - t0
                if r:
                    applies.append(took)
                    checks.append(check)
        ratio = "" if base is None else f" ({statistics.median(applies) / base:.2f}x of 0 turns)"
        base = statistics.median(applies) if base is None else base
        print(f"  {n:>5} turns (made in {made:.1f} s): apply {spread(applies)}{ratio}")
        print(f"  {'':>5}        recovery check (lock + recover): {spread(checks)}")
    print(f"  load average after: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=50)
    ap.add_argument("--lines", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--dir", help="where to make the scratch repos (default: the system temp dir)")
    ap.add_argument("--big-lines", type=int, default=100_000)
    ap.add_argument("--hunk-lines", type=int, default=2_000)
    ap.add_argument("--history", default="0,100,1000",
                    help="numbers of earlier turns in the journal, comma-separated")
    ap.add_argument("--history-rounds", type=int, default=30)
    ap.add_argument("--only", choices=["history"], help="run only this part")
    args = ap.parse_args()
    bench_history([int(n) for n in args.history.split(",")], args.history_rounds, args.dir)
    if args.only == "history":
        return
    bench_locate(args.big_lines, args.hunk_lines, args.rounds)
    applies, undos, pure = [], [], []
    for _ in range(args.rounds):
        with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
            root = Path(tmp) / "repo"
            ops = make_turn(root, args.files, args.lines)
            journal = Journal(root, Path(tmp) / "data")
            text = (root / ops[0].path).read_text()
            t0 = time.perf_counter()
            apply_hunks(text, ops[0].hunks, ops[0].path)
            pure.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            turn = apply_turn(root, ops, journal=journal)
            applies.append(time.perf_counter() - t0)
            assert len(turn.changed) == args.files
            t0 = time.perf_counter()
            journal.undo()
            undos.append(time.perf_counter() - t0)
    ms = lambda xs: f"median {statistics.median(xs) * 1000:.1f} ms, min {min(xs) * 1000:.1f} ms"  # noqa: E731
    print(f"{args.files}-file turn ({args.lines} lines each, 3 hunks per modified file, "
          f"{args.rounds} rounds)")
    print(f"  apply_turn (plan + journal + atomic writes + fsync): {ms(applies)}")
    print(f"  undo (journaled, atomic):                            {ms(undos)}")
    print(f"  apply_hunks, one {args.lines}-line file, 3 hunks:         "
          f"median {statistics.median(pure) * 1e6:.0f} us")


if __name__ == "__main__":
    main()
