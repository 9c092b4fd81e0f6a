"""A `run --json` process against a hostile server, measured: its exit, output, time and peak
memory, and the one error it ended with."""

from __future__ import annotations

import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from .runs import check_schema, cli, lines_of

PEAK_MB = 150  # a run's memory stays below this, whatever these servers send


def peak_mb(pid: int) -> float:
    """The peak memory of process `pid` since its exec, while it runs (VmHWM; a forked
    child's ru_maxrss would count the parent's pages it started with)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def run_measured(repo: Path, env: dict[str, str], *args: str
                 ) -> tuple[int, str, str, float, float]:
    """A `run --json` process: (exit code, stdout, stderr, seconds, peak memory in MB)."""
    if not Path("/proc/self/status").exists():
        pytest.skip("needs /proc to see a process's memory")
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.monotonic()
        proc = subprocess.Popen(cli() + ["run", "MULTI change", "--json", *args], cwd=repo,
                                env=env, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        peak = 0.0
        try:
            while proc.poll() is None:
                try:
                    peak = max(peak, peak_mb(proc.pid))
                except (OSError, ValueError):  # exiting
                    pass
                time.sleep(0.01)
        finally:
            proc.kill()
        took = time.monotonic() - start
        out.seek(0)
        err.seek(0)
        return proc.returncode, out.read().decode(), err.read().decode(), took, peak


def the_error(stdout: str) -> dict:
    lines = lines_of(stdout)
    check_schema(lines)
    errors = [ln for ln in lines if ln["type"] == "error"]
    assert len(errors) == 1, lines
    return errors[0]
