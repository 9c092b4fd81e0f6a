"""The request a one-shot run sends first, against a tiny server process on 127.0.0.1
(tests/support/wire_server.py) that logs each request line and answers in one odd way: the request
line and the answers must be what the normal transports send and say, a connect or an
upgrade that hangs is one attempt of the run's time (never a second wait), and Ctrl-C during
it ends the run as it always did."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest
from support.runs import MULTI_DIFF, cli, env_for, home, lines_of, repo, run  # noqa: F401 (fixtures)
from support.sendfirst import Wire, sent_ahead, wire, wire_env  # noqa: F401 (fixtures)

from spark_pair.sim.process import SimProcess


def before_the_client(pid: int) -> bool:
    """Whether process `pid` has not loaded asyncio yet (its C part is not mapped): a request
    it has sent went out ahead (protocol.sendfirst), the model client does not exist yet."""
    maps = Path(f"/proc/{pid}/maps")
    if not maps.exists():
        pytest.skip("needs /proc to see what a process has loaded")
    return "/_asyncio." not in maps.read_text()


def _sigint_default() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize("wire", [("notfound", 0)], indirect=True)
@pytest.mark.parametrize("transport", ["ws", "responses", "chat"])
def test_a_base_path_beyond_ascii_is_escaped_as_the_normal_transport_does(
        sim: SimProcess, repo: Path, home: Path, wire: Wire, transport: str) -> None:
    said = []
    for env in ({}, {"GIT_DIR": str(repo / ".git")}):  # first, then the normal way
        before = len(wire.requests())
        res = subprocess.run(cli() + ["run", "MULTI change", "--json", "--transport", transport],
                             cwd=repo, env={**wire_env(home, sim, wire, "/gw€ é b"), **env},
                             capture_output=True, text=True, timeout=60)
        assert "Traceback" not in res.stderr, res.stderr
        got = wire.requests()[before]
        said.append((res.returncode, got["line"], sent_ahead(home)[-1]))
    (code, line, first), (normal_code, normal_line, normal_first) = said
    assert first and not normal_first
    assert line == normal_line and code == normal_code
    assert "/gw%E2%82%AC" in line


@pytest.mark.parametrize("wire", [("gzip404", 0)], indirect=True)
def test_a_compressed_error_body_reads_as_it_does_the_normal_way(
        sim: SimProcess, repo: Path, home: Path, wire: Wire) -> None:
    said = []
    for env in ({}, {"GIT_DIR": str(repo / ".git")}):
        res = subprocess.run(cli() + ["run", "MULTI change", "--json", "--transport", "chat"],
                             cwd=repo, env={**wire_env(home, sim, wire, ""), **env},
                             capture_output=True, text=True, timeout=60)
        errors = [ln for ln in lines_of(res.stdout) if ln["type"] == "error"]
        said.append((res.returncode, [e["message"] for e in errors]))
    assert said[0] == said[1]
    assert "no such route here" in " ".join(said[0][1])
    assert sent_ahead(home) == [True, False]
    assert "Accept-Encoding: identity" in wire.requests()[0]["headers"]


@pytest.mark.parametrize("wire", [("slowhead", 30)], indirect=True)
def test_an_upgrade_that_hangs_takes_the_timeout_once_with_one_request(
        sim: SimProcess, repo: Path, home: Path, wire: Wire) -> None:
    start = time.monotonic()
    res = subprocess.run(cli() + ["run", "MULTI change", "--json", "--transport", "ws",
                                   "--timeout", "3"],
                         cwd=repo, env=wire_env(home, sim, wire, ""), capture_output=True,
                         text=True, timeout=60)
    took = time.monotonic() - start
    end = lines_of(res.stdout)[-1]
    assert end["type"] == "end" and end["status"] == "cancelled", res.stdout
    assert len(wire.requests()) == 1  # the attempt that hung, not a second upgrade after it
    assert took < 5.5  # the run's 3 s, once (twice would be 6 s and more)


@pytest.mark.parametrize("wire", [("slowhead", 30)], indirect=True)
def test_ctrl_c_while_the_first_request_waits_ends_the_run_with_its_json_lines(
        sim: SimProcess, repo: Path, home: Path, wire: Wire) -> None:
    # as from a terminal: a test run started in the background inherits SIGINT ignored
    proc = subprocess.Popen(cli() + ["run", "MULTI change", "--json", "--transport", "ws"],
                            cwd=repo, env=wire_env(home, sim, wire, ""), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=_sigint_default)
    try:
        deadline = time.monotonic() + 20
        while not wire.requests() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(wire.requests()) == 1 and before_the_client(proc.pid)  # it waits there
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    lines = lines_of(out)
    assert [ln["type"] for ln in lines] == ["error", "end"]
    assert lines[0]["kind"] == "cancelled" and "Ctrl-C" in lines[0]["message"]
    assert err.count("nothing was written") == 1, err  # said once, in the hint
    assert lines[1]["status"] == "cancelled" and lines[1]["exit_name"] == "INTERRUPTED"


@pytest.mark.parametrize("transport", ["ws", "responses", "chat"])
def test_no_time_in_the_json_lines_is_longer_than_the_run(sim: SimProcess, repo: Path,
                                                          home: Path, transport: str) -> None:
    sim.configure(replies=[{"match": "MULTI", "text": MULTI_DIFF}])
    res = run(repo, home, sim, "MULTI change", "--json", "--transport", transport)
    assert res.returncode == 0, res.stderr
    lines = lines_of(res.stdout)
    end = lines[-1]
    metrics = next(ln for ln in lines if ln["type"] == "metrics")
    assert metrics["ttft_ms"] <= metrics["duration_ms"] <= end["duration_ms"]
    assert metrics["duration_ms"] / 1000 <= end["t"]


@pytest.mark.parametrize("wire", [("slowhead", 30)], indirect=True)
def test_an_upgrade_that_hangs_is_the_first_attempts_connect_timeout(wire: Wire) -> None:
    import asyncio

    from spark_pair.errors import StreamTimeout
    from spark_pair.protocol import sendfirst
    from spark_pair.protocol.responses_ws import WsSession

    url = f"ws://127.0.0.1:{wire.port}/v1/responses"
    start = time.monotonic()
    sent = sendfirst.send_ws(url, "m", "{}", None, 0.5)
    assert sent is not None and sent.timed_out == 0.5 and sent.sock is None
    assert time.monotonic() - start < 5

    async def adopt() -> None:
        await WsSession(f"http://127.0.0.1:{wire.port}", None, connect_timeout_s=10,
                        read_timeout_s=10).adopt(sent)

    with pytest.raises(StreamTimeout, match="within 0.5 s"):
        asyncio.run(adopt())


@pytest.mark.parametrize("wire", [("chunked403", 10)], indirect=True)
def test_a_chunked_refusal_of_the_upgrade_is_read_whole_and_de_chunked(wire: Wire) -> None:
    from spark_pair.protocol import sendfirst

    start = time.monotonic()
    sent = sendfirst.send_ws(f"ws://127.0.0.1:{wire.port}/v1/responses", "m", "{}", None, 5)
    assert sent is not None and sent.refusal is not None
    assert sent.refusal.status == 403
    assert json.loads(sent.refusal.body)["error"]["message"] == "no such route here"
    assert time.monotonic() - start < 4  # the last chunk ends it, not the close
