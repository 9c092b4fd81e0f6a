"""Servers that break the wire protocol itself (support/wire_server.py, a real process on
127.0.0.1) against real `run` processes in real git repositories: a chunk size that is no
number or negative, two Content-Lengths that disagree, an answer that is no HTTP, a masked or
reserved-bit WebSocket frame, text that is not UTF-8, a close code no endpoint may send. A
violation is not a dropped connection: the run ends at once (one request, well inside its
--timeout, while the server still holds the connection open) naming what the server did; a
real drop is still retried. A plain web server's 501 page is not retried and gets the hint
that the base URL is not the API."""

from __future__ import annotations

import json
import subprocess

import pytest
from support.measured import run_measured, the_error
from support.runs import check_schema, cli, home, lines_of, repo  # noqa: F401 (fixtures)
from support.wire import Wire, wire, wire_env  # noqa: F401 (fixtures)

from spark_pair.protocol.errors_map import HTML_HINT
from spark_pair.sim.process import SimProcess

HELD_S = 30  # the hostile server keeps the connection open this long after its answer
TIMEOUT_S = 20  # the run's --timeout: a violation ends it far sooner
FAST_S = 6  # a violation's run ends within this (start-up included, on a loaded machine)


@pytest.mark.parametrize(("wire", "transport", "said"), [
    (("badchunk", HELD_S), "chat", "broke the HTTP protocol: illegal chunk header: b'zz"),
    (("negchunk", HELD_S), "responses", "broke the HTTP protocol: illegal chunk header: b'-5"),
    (("twolengths", HELD_S), "responses", "conflicting Content-Length headers"),
    (("nothttp", HELD_S), "chat", "illegal status line: b'SSH-2.0-OpenSSH_9.6'"),
    (("wsmasked", HELD_S), "ws", "breaks the WebSocket protocol (incorrect masking)"),
    (("wsrsv", HELD_S), "ws", "breaks the WebSocket protocol (reserved bits must be 0)"),
    (("wsbadutf8", HELD_S), "ws", "a text message that is not UTF-8 (invalid start byte"),
    (("wsbadclose", HELD_S), "ws", "breaks the WebSocket protocol (invalid status code)"),
], indirect=["wire"])
def test_a_protocol_violation_ends_the_run_at_once_naming_it(
        sim: SimProcess, repo, home, wire: Wire, transport: str, said: str) -> None:
    code, out, err, took, _ = run_measured(repo, wire_env(home, sim, wire, ""), "--transport",
                                           transport, "--timeout", str(TIMEOUT_S))
    error = the_error(out)
    assert code == 4, err
    assert error["kind"] == "protocol" and said in error["message"], error
    assert took < FAST_S, took
    assert len(wire.requests()) == 1, out  # not retried: the same answer would come again
    assert not any(ln["type"] == "retry" for ln in lines_of(out)), out
    assert "Traceback" not in err and "--timeout" not in err
    assert error["hint"] and said not in error["hint"]  # said once: the hint says what to do


@pytest.mark.parametrize("wire", [("wsrsv", HELD_S)], indirect=True)
def test_under_auto_a_broken_websocket_falls_back_once_to_http(
        sim: SimProcess, repo, home, wire: Wire) -> None:
    code, out, err, took, _ = run_measured(repo, wire_env(home, sim, wire, ""), "--transport",
                                           "auto", "--timeout", str(TIMEOUT_S))
    lines = lines_of(out)
    check_schema(lines)
    changes = [ln for ln in lines if ln["type"] == "transport_changed"]
    assert changes and changes[0]["old"] == "ws", lines
    assert "reserved bits must be 0" in changes[0]["reason"], changes
    assert not any(ln["type"] == "retry" for ln in lines), lines
    assert code == 4 and took < FAST_S, (code, took, err)


@pytest.mark.parametrize("wire", [("wsdrop", 0)], indirect=True)
def test_a_real_drop_is_still_retried(sim: SimProcess, repo, home, wire: Wire) -> None:
    # (5 s: the first retry comes after a back-off of 1-1.25 s; the rest need not be waited out)
    code, out, err, _, _ = run_measured(repo, wire_env(home, sim, wire, ""), "--transport",
                                        "ws", "--timeout", "5")
    lines = lines_of(out)
    check_schema(lines)
    retries = [ln for ln in lines if ln["type"] == "retry"]
    assert retries and all(r["reason"] == "dropped" for r in retries), lines
    upgrades = [r for r in wire.requests() if any(h.lower().startswith("upgrade:")
                                                  for h in r["headers"])]
    assert len(upgrades) >= 2, wire.requests()
    assert code != 0 and "Traceback" not in err


@pytest.mark.parametrize("wire", [("plainweb", 0)], indirect=True)
def test_a_plain_web_servers_501_page_is_not_retried(sim: SimProcess, repo, home,
                                                     wire: Wire) -> None:
    code, out, err, took, _ = run_measured(repo, wire_env(home, sim, wire, ""), "--transport",
                                           "chat", "--timeout", str(TIMEOUT_S))
    error = the_error(out)
    assert code == 4, err
    assert error["status"] == 501 and "with an HTML page, not the API" in error["message"]
    assert "Unsupported method ('POST')" in error["message"], error
    assert error["hint"] == HTML_HINT and "overloaded" not in err
    assert len(wire.requests()) == 1 and took < FAST_S, (wire.requests(), took)


@pytest.mark.parametrize(("wire", "said"), [
    (("badchunk", HELD_S), "broke the HTTP protocol: illegal chunk header: b'zz"),
    (("nothttp", HELD_S), "broke the HTTP protocol: illegal status line"),
], indirect=["wire"])
def test_doctor_names_a_protocol_violation_not_a_broken_connection(
        sim: SimProcess, repo, home, wire: Wire, said: str) -> None:
    env = wire_env(home, sim, wire, "")
    done = subprocess.run(cli() + ["doctor", "--json", "--check-timeout", "5"], env=env,
                          cwd=repo, capture_output=True, text=True, timeout=60)
    report = json.loads(done.stdout)
    failed = next(r for r in report["checks"] if r["status"] == "fail")
    assert failed["error_class"] == "protocol" and said in failed["detail"], failed
    assert "run doctor again" not in failed["hint"]
