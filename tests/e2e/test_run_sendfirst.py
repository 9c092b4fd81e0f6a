"""A one-shot run sends its first request over a socket of its own before the model client
loads, and reads the reply on it (protocol.sendfirst, protocol.adopted). Real `run` processes
against the simulator process, in real git repositories.

Both ways send the same request (the same User-Agent too); which way the first went shows in
the run's request record (`sent_ahead`), and the simulator's log counts the requests. A run
whose repository git must find (GIT_DIR set) goes the normal way from the start: its answers
are what a run said before, and the first-request path must say the same."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from support.runs import A_NEW, MULTI_DIFF, NEW_PY, check_schema, home, lines_of, repo, run  # noqa: F401 (fixtures)
from support.sendfirst import TRANSPORTS, ways

from spark_pair.protocol.request import user_agent
from spark_pair.sim.process import SimProcess


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_the_first_request_goes_out_first_and_the_turn_applies(sim: SimProcess, repo: Path,
                                                               home: Path, transport: str) -> None:
    sim.configure(replies=[{"match": "MULTI", "text": MULTI_DIFF}])
    res = run(repo, home, sim, "MULTI change", "--apply", "--allow-delete", "--allow-rename",
              "--json", "--transport", transport)
    assert res.returncode == 0, res.stderr
    check_schema(lines_of(res.stdout))
    assert ways(sim, home) == ["first"]
    assert (repo / "a.py").read_text() == A_NEW and (repo / "main.py").read_text() == NEW_PY


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_drop_mid_stream_is_retried_the_normal_way_and_applied_once(
        sim: SimProcess, repo: Path, home: Path, transport: str) -> None:
    sim.configure(replies=[{"match": "MULTI", "text": MULTI_DIFF}])
    sim.set_faults([{"kind": "drop", "after_tokens": 10, "times": 1}])
    res = run(repo, home, sim, "MULTI change", "--apply", "--allow-delete", "--allow-rename",
              "--json", "--transport", transport)
    assert res.returncode == 0, res.stderr
    lines = lines_of(res.stdout)
    check_schema(lines)
    assert [ln["reason"] for ln in lines if ln["type"] == "retry"] == ["dropped"]
    assert ways(sim, home) == ["first", "normal"]  # one request per attempt, never one more
    assert {e["user_agent"] for e in sim.requests()} == {user_agent()}  # both ways send it
    assert (repo / "a.py").read_text() == A_NEW and (repo / "main.py").read_text() == NEW_PY
    assert len([ln for ln in lines if ln["type"] == "applied"]) == 1


VARIES = ("t", "turn_id", "duration_ms", "request_id", "response_id", "ttft_ms", "tokens_per_s",
          "delay_s", "connect_ms")


def _said(stdout: str) -> list[dict]:
    """The JSON lines without what differs from run to run (times, ids, rates, jitter)."""
    out = []
    for line in lines_of(stdout):
        line = {k: v for k, v in line.items() if k not in VARIES}
        if "message" in line and isinstance(line["message"], str):
            line["message"] = re.sub(r"\d+(\.\d+)? s\b", "N s", line["message"])
        out.append(line)
    return out


FAILURES = {
    "wrong key": ({"api_key": "sk-the-right-one"}, [], ()),
    "unknown model": ({}, [], ("--model", "no-such-model")),
    "rate limited": ({}, [{"kind": "rate_limit", "retry_after": 0, "times": -1}], ()),
    "server error once": ({}, [{"kind": "server_error", "status": 503, "times": 1}], ()),
}


@pytest.mark.parametrize("failure", FAILURES)
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_failing_answer_reads_as_it_does_the_normal_way(sim: SimProcess, repo: Path,
                                                          home: Path, transport: str,
                                                          failure: str) -> None:
    config, faults, flags = FAILURES[failure]
    sim.configure(replies=[{"match": "MULTI", "text": MULTI_DIFF}], **config)
    said = []
    for env in ({}, {"GIT_DIR": str(repo / ".git")}):  # first, then the normal way
        sim.clear_requests()
        sim.set_faults(faults)
        res = run(repo, home, sim, "MULTI change", "--json", "--transport", transport, *flags,
                  env=env)
        said.append((res.returncode, _said(res.stdout), ways(sim, home)[:1]))
    (code, lines, first), (normal_code, normal_lines, normal_first) = said
    assert first == ["first"] and normal_first == ["normal"]
    assert code == normal_code and _in_order(lines) == _in_order(normal_lines)


def _in_order(lines: list[dict]) -> tuple[list[dict], list[str]]:
    """The lines in their order, but the decisions apart: a decision comes during the stream
    or after it, as fast as the policy answers, so where it falls among the parse lines is
    timing, not behaviour."""
    decisions = sorted(json.dumps(ln, sort_keys=True) for ln in lines if ln["type"] == "decision")
    return [ln for ln in lines if ln["type"] != "decision"], decisions


def long_edit(lines: int) -> tuple[str, str, str]:
    """A file of `lines` lines, the same with every seventh line changed, and the diff between
    them (one hunk per change)."""
    old = [f"value_{i} = compute({i}, 'item {i:05d}')\n" for i in range(lines)]
    new = [line.replace("compute(", "fast(") if i % 7 == 3 else line
           for i, line in enumerate(old)]
    diff = ["--- a/big.py\n", "+++ b/big.py\n"]
    for start in range(0, lines - 6, 7):
        diff.append(f"@@ -{start + 1},7 +{start + 1},7 @@\n")
        for i in range(start, start + 7):
            diff.append(f"-{old[i]}+{new[i]}" if i % 7 == 3 else f" {old[i]}")
    return "".join(old), "".join(new), "".join(diff)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_long_reply_is_whole_timed_at_the_server_pace_and_a_delta_per_message(
        sim: SimProcess, repo: Path, home: Path, transport: str) -> None:
    # long enough that the reader reads at most once per period after its first messages
    from spark_pair.protocol.adopted import UNPACED_MESSAGES

    old, new, diff = long_edit(280)
    (repo / "big.py").write_text(old)
    tps = 2000
    sim.configure(replies=[{"match": "LONG", "text": diff}], tps=tps, ttft_ms=100)
    res = run(repo, home, sim, "LONG change", "-f", "big.py", "--apply", "--json",
              "--transport", transport)
    assert res.returncode == 0, res.stderr
    lines = lines_of(res.stdout)
    check_schema(lines)
    assert ways(sim, home) == ["first"]
    assert (repo / "big.py").read_text() == new
    metrics = next(ln for ln in lines if ln["type"] == "metrics")
    tokens = next(ln for ln in lines if ln["type"] == "usage")["output_tokens"]
    assert tokens > 4 * UNPACED_MESSAGES
    assert metrics["ttft_ms"] >= 100
    assert abs(metrics["tokens_per_s"] - tps) / tps < 0.05, metrics
    # --deltas: a line per server message (one token each), also once the reads are paced
    (repo / "big.py").write_text(old)
    res = run(repo, home, sim, "LONG change", "-f", "big.py", "--json", "--deltas",
              "--transport", transport)
    assert res.returncode == 0, res.stderr
    lines = lines_of(res.stdout)
    deltas = [ln["text"] for ln in lines if ln["type"] == "delta"]
    assert "".join(deltas) == diff
    assert len(deltas) == next(ln for ln in lines if ln["type"] == "usage")["output_tokens"]

