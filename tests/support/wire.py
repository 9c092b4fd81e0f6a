"""A tiny server process on 127.0.0.1 (wire_server.py) that logs each request line and answers
in one odd way (a redirect, a compressed or endless body, a hung upgrade, ...), and how a run
is pointed at it."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from spark_pair.sim.process import SimProcess

from .runs import cli, env_for

SERVER = Path(__file__).with_name("wire_server.py")


class Wire:
    def __init__(self, log: Path, port: int, proc: subprocess.Popen[str]) -> None:
        self.log, self.port, self.proc = log, port, proc

    def requests(self) -> list[dict]:
        if not self.log.exists():
            return []
        return [json.loads(ln) for ln in self.log.read_text().splitlines() if ln.strip()]


@pytest.fixture
def wire(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Wire]:
    """The server in the mode `request.param` names: (mode, delay) or (mode, delay, options)."""
    mode, delay, *options = request.param
    log = tmp_path / "wire.jsonl"
    args = [sys.executable, str(SERVER), str(log), mode, str(delay), "60"]
    if options:
        (tmp_path / "wire-options.json").write_text(json.dumps(options[0]))
        args.append(str(tmp_path / "wire-options.json"))
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        yield Wire(log, int(proc.stdout.readline()), proc)
    finally:
        proc.kill()
        proc.wait(5)
        proc.stdout.close()  # type: ignore[union-attr]


def sigint_default() -> None:
    """For a run started from a suite that may have SIGINT ignored: as from a terminal."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def wire_env(home: Path, sim: SimProcess, wire: Wire, path: str, **extra: str) -> dict[str, str]:
    return {**env_for(home, sim), "SPARK_PAIR_BASE_URL": f"http://127.0.0.1:{wire.port}{path}",
            **extra}


def run_wire(repo: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cli() + ["run", "MULTI change", "--json", *args], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=60)
