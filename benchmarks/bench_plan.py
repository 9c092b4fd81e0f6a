"""Context plans per second with a large file edited and not committed. Prints numbers.

    .venv/bin/python benchmarks/bench_plan.py [--seconds 3] [--lines 4000]

A real git repository in a temporary folder: 40 small modules and one of --lines lines,
committed, then the large one edited in three places. The automatic context plans an
instruction again and again (as the app does for each settled draft), with the large file as
the one edited recently; the figure is plans per second and the git processes a plan starts
(counted by wrapping the project's one git runner).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
import time
from pathlib import Path

from spark_pair.base import git as base_git
from spark_pair.workspace.autocontext import AutoContext

ENV = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
       "GIT_AUTHOR_NAME": "Bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
       "GIT_COMMITTER_NAME": "Bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid"}


def make_repo(root: Path, lines: int) -> str:
    for i in range(40):
        (root / f"mod{i}.py").write_text(f"def helper_{i}(x):\n    return x + {i}\n")
    big = "".join(f"def step_{i}(value):\n    return value * {i}\n\n" for i in range(lines // 3))
    (root / "engine.py").write_text(big)
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "start"]):
        subprocess.run(["git", *args], cwd=root, env=ENV, check=True, timeout=30)
    text = (root / "engine.py").read_text().splitlines(keepends=True)
    for at in (10, len(text) // 2, len(text) - 5):
        text[at] = text[at].rstrip("\n") + "  # edited\n"
    (root / "engine.py").write_text("".join(text))
    return "engine.py"


def main(args: argparse.Namespace) -> None:
    calls = [0]
    real = base_git.run_git

    def counted(*a, **kw):  # type: ignore[no-untyped-def]
        calls[0] += 1
        return real(*a, **kw)

    base_git.run_git = counted  # type: ignore[assignment]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        edited = make_repo(root, args.lines)
        auto = AutoContext(root)
        auto.warm()
        instruction = "make step_40 round its value"
        auto.plan(instruction, edited=[edited])  # the first plan loads code
        calls[0] = 0
        plans, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < args.seconds and plans < 100_000:
            plan = auto.plan(instruction, edited=[edited])
            plans += 1
        took = time.perf_counter() - t0
        lines = plan.focus().get(edited, ())
    print(f"plans with {edited} ({args.lines} lines) edited in 3 places: "
          f"{plans / took:,.0f} plans/s ({took / plans * 1000:.2f} ms a plan), "
          f"{calls[0] / plans:.2f} git processes a plan; its focus holds {len(lines)} lines")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--lines", type=int, default=4000)
    main(parser.parse_args())
