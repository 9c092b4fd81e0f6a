"""Apply and undo time for a 50-file turn (real files, real fsyncs). Prints numbers.

    .venv/bin/python benchmarks/bench_apply.py [--files 50] [--lines 300] [--rounds 5] [--dir D]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from spark_pair.edits.apply import apply_hunks, apply_turn
from spark_pair.edits.journal import Journal
from spark_pair.edits.ops import Create, Hunk, Modify, content_hash


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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=50)
    ap.add_argument("--lines", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--dir", help="where to make the scratch repos (default: the system temp dir)")
    args = ap.parse_args()
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
