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


def test_the_cold_run_benchmark_skips_a_missing_peer_and_says_why() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPARK_PAIR_")}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep)
                                  if not (Path(p) / "codex").exists())
    done = subprocess.run([sys.executable, "bench_cold.py", "--tokens", "300", "--runs", "1"],
                          cwd=BENCH, env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "peer: skipped: no `codex` on PATH" in done.stdout
    assert "floor (python + asyncio + httpx + TLS context + one POST)" in done.stdout
    assert "start -> request       spark-pair" in done.stdout
