"""A run against a tiny server process on 127.0.0.1 (tests/support/wire_server.py) that logs each
request line and answers in one odd way: the request line is escaped as a client must, an
answer's body is read whole (compressed, chunked), a connect or an upgrade that hangs is one
attempt of the run's time (never a second wait), and Ctrl-C or SIGTERM during it ends the run
cleanly (exit 130, its JSON lines)."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.runs import cli, env_for, home, lines_of, repo  # noqa: F401 (fixtures)
from support.wire import SERVER, Wire, run_wire, sigint_default, wire, wire_env  # noqa: F401

from spark_pair.sim.process import SimProcess


@pytest.mark.parametrize("wire", [("notfound", 0)], indirect=True)
@pytest.mark.parametrize("transport", ["ws", "responses", "chat"])
def test_a_base_path_beyond_ascii_is_escaped(sim: SimProcess, repo: Path, home: Path, wire: Wire,
                                             transport: str) -> None:
    res = run_wire(repo, wire_env(home, sim, wire, "/gw€ é b"), "--transport", transport)
    assert "Traceback" not in res.stderr, res.stderr
    line = wire.requests()[0]["line"]
    assert line.split(" ")[1] == "/gw%E2%82%AC%20%C3%A9%20b/v1/" + (
        "chat/completions" if transport == "chat" else "responses")
    assert res.returncode == 4


@pytest.mark.parametrize("wire", [("gzip404", 0)], indirect=True)
def test_a_compressed_error_body_is_read(sim: SimProcess, repo: Path, home: Path,
                                         wire: Wire) -> None:
    res = run_wire(repo, wire_env(home, sim, wire, ""), "--transport", "chat")
    errors = [ln for ln in lines_of(res.stdout) if ln["type"] == "error"]
    assert res.returncode == 4
    assert "no such route here" in " ".join(e["message"] for e in errors)


@pytest.mark.parametrize("wire", [("slowhead", 30)], indirect=True)
def test_an_upgrade_that_hangs_takes_the_timeout_once_with_one_request(
        sim: SimProcess, repo: Path, home: Path, wire: Wire) -> None:
    start = time.monotonic()
    res = run_wire(repo, wire_env(home, sim, wire, ""), "--transport", "ws", "--timeout", "3")
    took = time.monotonic() - start
    end = lines_of(res.stdout)[-1]
    assert end["type"] == "end" and end["status"] == "cancelled", res.stdout
    assert len(wire.requests()) == 1  # the attempt that hung, not a second upgrade after it
    assert took < 5.5  # the run's 3 s, once (twice would be 6 s and more)


@pytest.mark.parametrize("wire", [("slowhead", 30)], indirect=True)
@pytest.mark.parametrize(("sig", "words", "transport"), [
    (signal.SIGINT, "interrupted (Ctrl-C)", "ws"),
    (signal.SIGTERM, "terminated (SIGTERM)", "ws"),
    (signal.SIGTERM, "terminated (SIGTERM)", "chat"),
])
def test_a_stop_while_the_first_request_waits_ends_the_run_with_its_json_lines(
        sim: SimProcess, repo: Path, home: Path, wire: Wire, sig: int, words: str,
        transport: str) -> None:
    # as from a terminal: a test run started in the background inherits SIGINT ignored
    proc = subprocess.Popen(cli() + ["run", "MULTI change", "--json", "--transport", transport],
                            cwd=repo, env=wire_env(home, sim, wire, ""), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=sigint_default)
    try:
        deadline = time.monotonic() + 20
        while not wire.requests() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(wire.requests()) == 1  # it waits for the answer there
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=20)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    lines = lines_of(out)
    types = [ln["type"] for ln in lines]
    assert types[:2] == ["session", "turn"] and types[-2:] == ["error", "end"], lines
    assert types.count("error") == 1 and "applied" not in types
    assert lines[-2]["kind"] == "cancelled" and words in lines[-2]["message"]
    assert err.count("nothing was written") == 1, err  # said once, in the hint
    assert lines[-1]["status"] == "cancelled" and lines[-1]["exit_name"] == "INTERRUPTED"


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_stop_before_the_run_starts_its_turn_ends_it_cleanly(sim: SimProcess, repo: Path,
                                                               home: Path, sig: int) -> None:
    """Ctrl-C or SIGTERM while the command line is parsed and the run loads (before any
    request): noted, and the run stops as soon as it begins, with its JSON lines."""
    boot = ("import os, signal, sys\n"
            "sys.argv = ['spark-pair', *sys.argv[1:]]\n"
            "from spark_pair import entry\n"
            "import spark_pair.cli.main as cli\n"
            "real = cli.main\n"
            "def main(**kwargs):\n"
            f"    os.kill(os.getpid(), {int(sig)})  # while the command line is parsed\n"
            "    real(**kwargs)\n"
            "cli.main = main\n"
            "entry.main()\n")
    res = subprocess.run([sys.executable, "-c", boot, "run", "MULTI change", "--json"],
                         cwd=repo, env=env_for(home, sim), capture_output=True, text=True,
                         timeout=60, preexec_fn=sigint_default)
    assert res.returncode == 130, res.stderr
    assert "Traceback" not in res.stderr and "Aborted" not in res.stderr
    lines = lines_of(res.stdout)
    assert [ln["type"] for ln in lines] == ["error", "end"], lines
    assert lines[1]["exit_name"] == "INTERRUPTED"
    assert sim.requests() == []


@pytest.mark.parametrize("wire", [("slowhead", 30)], indirect=True)
def test_an_upgrade_that_hangs_is_a_connect_timeout(wire: Wire) -> None:
    from spark_pair.base.errors import StreamTimeout
    from spark_pair.protocol.responses_ws import WsSocket

    async def open_it() -> None:
        await WsSocket(f"http://127.0.0.1:{wire.port}", None, connect_timeout_s=0.5,
                       read_timeout_s=10).open()

    start = time.monotonic()
    with pytest.raises(StreamTimeout, match="within 0.5 s"):
        asyncio.run(open_it())
    assert time.monotonic() - start < 5


@pytest.mark.parametrize("wire", [("chunked403", 10)], indirect=True)
def test_a_chunked_refusal_of_the_upgrade_is_read_whole_and_de_chunked(wire: Wire) -> None:
    from spark_pair.base.errors import AuthError
    from spark_pair.protocol.responses_ws import WsSocket

    async def open_it() -> None:
        await WsSocket(f"http://127.0.0.1:{wire.port}", None, connect_timeout_s=5,
                       read_timeout_s=10).open()

    start = time.monotonic()
    with pytest.raises(AuthError) as caught:
        asyncio.run(open_it())
    assert caught.value.status == 403
    assert json.loads(caught.value.body)["error"]["message"] == "no such route here"
    assert time.monotonic() - start < 4  # the last chunk ends it, not the close
