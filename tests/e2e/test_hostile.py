"""Broken and hostile servers (support/wire_server.py, a real process on 127.0.0.1) against real
`run` processes in real git repositories. Whatever comes, a run holds a bounded amount of it
(docs/headless.md, "Size limits") and ends with a clear error (exit 4) naming the limit: a body
that inflates without end, a line that never ends, a huge WebSocket message, an error body that
never ends. A malformed value (a binary WebSocket frame, a usage count that is no number) is a
clear error or is counted here: never Python's own exception text, never a lost reply."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from support.measured import PEAK_MB, run_measured, the_error
from support.runs import A_NEW, MULTI_DIFF, check_schema, home, lines_of, repo  # noqa: F401
from support.wire import Wire, wire, wire_env  # noqa: F401 (fixtures)

from spark_pair.sim.process import SimProcess


@pytest.mark.parametrize(("wire", "transport", "what"), [
    (("gzipbomb", 0), "chat", "an event line of more than 8 MiB"),
    (("gziplines", 0), "responses", "a streamed reply of more than 64 MiB"),
    (("endlessline", 0), "chat", "an event line of more than 8 MiB"),
    (("wshuge", 10), "ws", "a WebSocket message of more than 8 MiB"),
    (("wshugefirst", 10), "ws", "a WebSocket message of more than 8 MiB"),
], indirect=["wire"])
def test_an_answer_over_a_size_limit_ends_the_run_naming_the_limit(
        sim: SimProcess, repo: Path, home: Path, wire: Wire, transport: str, what: str) -> None:
    code, out, err, took, peak_mb = run_measured(repo, wire_env(home, sim, wire, ""),
                                                 "--transport", transport, "--timeout", "60")
    error = the_error(out)
    assert code == 4, err
    assert error["kind"] == "too_large" and what in error["message"], error
    assert "Traceback" not in err and "MemoryError" not in err
    assert len(wire.requests()) == 1, out  # not retried: the same answer would come again
    assert peak_mb < PEAK_MB, peak_mb
    assert took < 8, took  # at once, though the WebSocket server holds the socket for 10 s


@pytest.mark.parametrize("wire", [("endless400", 0)], indirect=True)
def test_an_error_body_that_never_ends_is_read_in_part(sim: SimProcess, repo: Path, home: Path,
                                                       wire: Wire) -> None:
    code, out, err, took, peak_mb = run_measured(repo, wire_env(home, sim, wire, ""),
                                                 "--transport", "responses")
    error = the_error(out)
    assert code == 4, err
    assert error["status"] == 400 and "no such route here" in error["message"], error
    assert len(error.get("body", "")) <= 64 * 1024
    assert took < 15 and peak_mb < PEAK_MB, (took, peak_mb)


@pytest.mark.parametrize("wire", [("wsbinary", 10)], indirect=True)
def test_a_binary_websocket_message_is_a_protocol_error(sim: SimProcess, repo: Path, home: Path,
                                                        wire: Wire) -> None:
    code, out, err, _, _ = run_measured(repo, wire_env(home, sim, wire, ""), "--transport", "ws")
    error = the_error(out)
    assert code == 4, err
    assert error["kind"] == "protocol", error
    assert "sent a binary WebSocket message that is not an API event" in error["message"]
    assert "Traceback" not in err and "TypeError" not in err


USAGE = {"NaN": "NaN", "infinity": "Infinity", "digits beyond ASCII": '"\\u00b2\\u0663"',
         "negative": "-3"}


@pytest.mark.parametrize("value", USAGE)
@pytest.mark.parametrize("transport", ["ws", "responses", "chat"])
def test_a_usage_count_that_is_no_number_costs_no_reply(sim: SimProcess, repo: Path, home: Path,
                                                        tmp_path: Path, transport: str,
                                                        value: str,
                                                        request: pytest.FixtureRequest) -> None:
    names = ("prompt_tokens", "completion_tokens") if transport == "chat" \
        else ("input_tokens", "output_tokens")
    usage = f'{{"{names[0]}": 12, "{names[1]}": {USAGE[value]}}}'
    server = _start(tmp_path, {"text": MULTI_DIFF, "usage": usage})
    try:
        code, out, err, _, _ = run_measured(repo, wire_env(home, sim, server, ""), "--apply",
                                            "--allow-delete", "--allow-rename",
                                            "--transport", transport)
    finally:
        server.proc.kill()
        server.proc.wait(5)
        server.proc.stdout.close()  # type: ignore[union-attr]
    lines = lines_of(out)
    check_schema(lines)
    assert code == 0, err
    assert (repo / "a.py").read_text() == A_NEW  # the whole, valid reply was applied
    assert next(ln for ln in lines if ln["type"] == "usage")["estimated"] is True
    assert "Traceback" not in err


def _start(tmp_path: Path, options: dict) -> Wire:
    """The wire server in `reply` mode (for a test that builds its options itself)."""
    import json
    import sys

    from support.wire import SERVER

    log, opts = tmp_path / "wire.jsonl", tmp_path / "wire-options.json"
    opts.write_text(json.dumps(options))
    proc = subprocess.Popen([sys.executable, str(SERVER), str(log), "reply", "5", "60",
                             str(opts)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    return Wire(log, int(proc.stdout.readline()), proc)
