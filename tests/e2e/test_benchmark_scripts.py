"""The in-process benchmarks still run against the current APIs (a tiny size each): a
benchmark that no longer runs measures nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.mark.parametrize("args", [
    ["bench_protocol.py", "--tokens", "200", "--runs", "1"],
    ["bench_session.py", "--tokens", "200", "--rounds", "1"],
    ["bench_parse.py", "--tokens", "200", "--rounds", "1"],
])
def test_benchmark_runs(args: list[str]) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPARK_PAIR_")}
    done = subprocess.run([sys.executable, *args], cwd=BENCH, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "tok/s" in done.stdout
