"""A one-shot run on each transport, end to end: real `run` processes against the simulator
process, in real git repositories. The reply is read in batches (protocol.batches): what has
arrived is taken in one wake-up, once per short period after the reply's first messages, yet
the first text is timed as it comes, the tok/s is the server's pace, and `--json --deltas`
still shows one delta per server message."""

from __future__ import annotations

import pytest
from support.runs import A_NEW, MULTI_DIFF, NEW_PY, check_schema, home, lines_of, repo, run  # noqa: F401

from spark_pair.protocol.batches import UNPACED_MESSAGES
from spark_pair.protocol.request import user_agent
from spark_pair.sim.process import SimProcess

TRANSPORTS = ("ws", "responses", "chat")


def model_requests(sim: SimProcess) -> list[dict]:
    """The requests a run made to the model (a refused WebSocket upgrade counts as one)."""
    return [e for e in sim.requests() if e["transport"] in TRANSPORTS]


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_run_applies_its_turn_with_one_request(sim: SimProcess, repo, home,
                                                 transport: str) -> None:
    sim.configure(replies=[{"match": "MULTI", "text": MULTI_DIFF}])
    res = run(repo, home, sim, "MULTI change", "--apply", "--allow-delete", "--allow-rename",
              "--json", "--transport", transport)
    assert res.returncode == 0, res.stderr
    check_schema(lines_of(res.stdout))
    assert [e["transport"] for e in model_requests(sim)] == [transport]
    assert (repo / "a.py").read_text() == A_NEW and (repo / "main.py").read_text() == NEW_PY


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_drop_mid_stream_is_retried_and_applied_once(sim: SimProcess, repo, home,
                                                       transport: str) -> None:
    sim.configure(replies=[{"match": "MULTI", "text": MULTI_DIFF}])
    sim.set_faults([{"kind": "drop", "after_tokens": 10, "times": 1}])
    res = run(repo, home, sim, "MULTI change", "--apply", "--allow-delete", "--allow-rename",
              "--json", "--transport", transport)
    assert res.returncode == 0, res.stderr
    lines = lines_of(res.stdout)
    check_schema(lines)
    assert [ln["reason"] for ln in lines if ln["type"] == "retry"] == ["dropped"]
    assert len(model_requests(sim)) == 2  # one request per attempt, never one more
    assert {e["user_agent"] for e in sim.requests()} == {user_agent()}
    assert (repo / "a.py").read_text() == A_NEW and (repo / "main.py").read_text() == NEW_PY
    assert len([ln for ln in lines if ln["type"] == "applied"]) == 1


# failure -> (simulator config, faults, flags, exit code, the error line's kind or None)
FAILURES = {
    "wrong key": ({"api_key": "sk-the-right-one"}, [], (), 4, "auth"),
    "unknown model": ({}, [], ("--model", "no-such-model"), 4, "model_not_found"),
    "rate limited": ({}, [{"kind": "rate_limit", "retry_after": 0, "times": -1}], (), 4,
                     "rate_limit"),
    "server error once": ({}, [{"kind": "server_error", "status": 503, "times": 1}], (), 0,
                          None),
}


@pytest.mark.parametrize("failure", FAILURES)
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_failing_answer_reads_the_same_on_every_transport(sim: SimProcess, repo, home,
                                                            transport: str,
                                                            failure: str) -> None:
    config, faults, flags, code, kind = FAILURES[failure]
    sim.configure(replies=[{"match": "MULTI", "text": MULTI_DIFF}], **config)
    sim.set_faults(faults)
    res = run(repo, home, sim, "MULTI change", "--json", "--transport", transport, *flags)
    lines = lines_of(res.stdout)
    check_schema(lines)
    assert res.returncode == code, res.stderr
    assert [ln["kind"] for ln in lines if ln["type"] == "error"] == ([kind] if kind else [])
    assert "Traceback" not in res.stderr
    assert lines[-1]["exit_code"] == code


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
        sim: SimProcess, repo, home, transport: str) -> None:
    # long enough that the reader reads at most once per period after its first messages
    old, new, diff = long_edit(280)
    (repo / "big.py").write_text(old)
    tps = 2000
    sim.configure(replies=[{"match": "LONG", "text": diff}], tps=tps, ttft_ms=100)
    res = run(repo, home, sim, "LONG change", "-f", "big.py", "--apply", "--json",
              "--transport", transport)
    assert res.returncode == 0, res.stderr
    lines = lines_of(res.stdout)
    check_schema(lines)
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


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_no_time_in_the_json_lines_is_longer_than_the_run(sim: SimProcess, repo, home,
                                                          transport: str) -> None:
    sim.configure(replies=[{"match": "MULTI", "text": MULTI_DIFF}])
    res = run(repo, home, sim, "MULTI change", "--json", "--transport", transport)
    assert res.returncode == 0, res.stderr
    lines = lines_of(res.stdout)
    end = lines[-1]
    metrics = next(ln for ln in lines if ln["type"] == "metrics")
    assert metrics["ttft_ms"] <= metrics["duration_ms"] <= end["duration_ms"]
    assert metrics["duration_ms"] / 1000 <= end["t"]
