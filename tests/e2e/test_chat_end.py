"""A reply whose stream is never marked as ended: the last chunk carries the finish reason (and
the usage, if the server sends it), but no `data: [DONE]` follows and the server keeps the
connection open (some servers and gateways do this). The reply is complete at its finish
reason; a usage chunk that was asked for gets a short grace, then the local count stands in.

Real `run` processes and the model client against the simulator process (fault `no_done`). The
read timeout is 30 s and the run's --timeout 10 s: the old wait never passes."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from support.runs import A_NEW, MULTI_DIFF, NEW_PY, check_schema, home, lines_of, repo, run  # noqa: F401

from spark_pair.base.exitcodes import ExitCode
from spark_pair.protocol.client import ClientOptions, ModelClient
from spark_pair.protocol.events import Completed, Message, TurnRequest
from spark_pair.sim.process import SimProcess

pytestmark = pytest.mark.timeout(60)
OPEN_END = [{"kind": "no_done", "seconds": 600, "times": -1}]
FAST_S = 5.0  # the finished reply ends the run well before this (the old wait: the timeout)


def _timed_run(repo: Path, home: Path, sim: SimProcess, *args: str):
    (repo / ".spark-pair.toml").write_text("[request]\ntimeout_ms = 30000\n")
    t0 = time.monotonic()
    res = run(repo, home, sim, *args, "--json", "--timeout", "10")
    return res, time.monotonic() - t0


@pytest.fixture(scope="module")
def llama() -> SimProcess:
    """A server that sends no usage chunk (llama.cpp's profile)."""
    with SimProcess(tps=0, ttft_ms=0, profile="llama.cpp") as server:
        yield server


@pytest.mark.parametrize("transport", ["chat", "responses"])
def test_a_reply_left_open_ends_at_its_finish_and_applies(sim: SimProcess, repo: Path,
                                                          home: Path, transport: str) -> None:
    sim.configure(replies=[{"match": "MULTI", "text": MULTI_DIFF}])
    sim.set_faults(OPEN_END)
    res, took = _timed_run(repo, home, sim, "MULTI change", "--apply", "--allow-delete",
                           "--allow-rename", "--transport", transport)
    assert res.returncode == 0, res.stderr
    lines = lines_of(res.stdout)
    check_schema(lines)
    assert len(sim.requests()) == 1
    assert (repo / "a.py").read_text() == A_NEW and (repo / "main.py").read_text() == NEW_PY
    usage = next(ln for ln in lines if ln["type"] == "usage")
    assert not usage["estimated"]  # the server's usage came with the finish
    assert usage["output_tokens"] == sim.requests()[-1]["output_tokens"]
    assert took < FAST_S, took


def test_without_the_usage_it_asked_for_the_reply_ends_after_a_short_grace(
        llama: SimProcess, repo: Path, home: Path) -> None:
    llama.reset()
    llama.configure(replies=[{"match": "MULTI", "text": MULTI_DIFF}])
    llama.set_faults(OPEN_END)
    res, took = _timed_run(repo, home, llama, "MULTI change", "--apply", "--allow-delete",
                           "--allow-rename", "--transport", "chat")
    assert res.returncode == 0, res.stderr
    lines = lines_of(res.stdout)
    check_schema(lines)
    assert len(llama.requests()) == 1
    assert (repo / "main.py").read_text() == NEW_PY
    usage = next(ln for ln in lines if ln["type"] == "usage")
    assert usage["estimated"]  # counted here: a token per piece, as llama.cpp sends them
    assert usage["output_tokens"] == llama.requests()[-1]["output_tokens"]
    assert took < FAST_S, took


def test_a_reply_cut_at_the_limit_and_left_open_is_still_cut_and_not_applied(
        sim: SimProcess, repo: Path, home: Path) -> None:
    sim.configure(replies=[{"match": "MULTI", "text": MULTI_DIFF}])
    sim.set_faults(OPEN_END)
    before = {p.name: p.read_bytes() for p in repo.iterdir() if p.is_file()}
    (repo / ".spark-pair.toml").write_text("[request]\ntimeout_ms = 30000\nmax_tokens = 30\n")
    t0 = time.monotonic()
    res = run(repo, home, sim, "MULTI change", "--apply", "--allow-delete", "--allow-rename",
              "--json", "--timeout", "10", "--transport", "chat")
    took = time.monotonic() - t0
    assert res.returncode == ExitCode.MODEL, res.stderr
    lines = lines_of(res.stdout)
    check_schema(lines)
    assert {e["class"] for e in lines if e["type"] == "error"} == {"IncompleteReply"}
    assert "the output limit of 30 tokens was reached" in res.stderr
    assert not [ln for ln in lines if ln["type"] == "applied"]
    after = {p.name: p.read_bytes() for p in repo.iterdir() if p.is_file()}
    after.pop(".spark-pair.toml")
    assert after == before
    assert took < FAST_S, took


async def test_the_model_client_ends_the_open_reply_and_serves_the_next_turn(sim: SimProcess
                                                                             ) -> None:
    """The app's turns read chat through the model client's HTTP path."""
    sim.configure(default="--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n")
    sim.set_faults(OPEN_END)
    opts = ClientOptions(base_url=sim.base_url, api_key="k", model="gpt-5.3-codex-spark",
                         transport="chat", timeout_s=10.0, max_retries=0)
    request = TurnRequest("You edit code.", [Message("user", "change x")])
    async with ModelClient(opts) as c:
        for _ in range(2):
            t0 = time.monotonic()
            done = await c.complete(request)
            assert isinstance(done, Completed) and done.text.endswith("+b\n")
            assert done.usage is not None and not done.usage.estimated
            assert time.monotonic() - t0 < FAST_S


INTERRUPTED = [{"kind": "interrupt", "after_tokens": 12, "times": -1}]


def test_a_reply_ended_by_done_without_a_finish_reason_is_dropped_not_applied(
        sim: SimProcess, repo: Path, home: Path) -> None:
    """llama.cpp's server ends a reply it gave up (a newer request took its slot) with
    `data: [DONE]` alone: what came is part of a reply, never a finished one. (One retry, as
    `[request] max_retries` sets: the default four wait about 18 s between them.)"""
    sim.configure(replies=[{"match": "MULTI", "text": MULTI_DIFF}])
    sim.set_faults(INTERRUPTED)
    (repo / ".spark-pair.toml").write_text("[request]\nmax_retries = 1\n")
    before = {p.name: p.read_bytes() for p in repo.iterdir() if p.is_file()}
    res = run(repo, home, sim, "MULTI change", "--apply", "--allow-delete", "--allow-rename",
              "--json", "--timeout", "45", "--transport", "chat")
    assert res.returncode == ExitCode.MODEL, res.stderr
    lines = lines_of(res.stdout)
    check_schema(lines)
    assert {e["class"] for e in lines if e["type"] == "error"} == {"StreamDropped"}
    assert "no finish reason" in res.stderr
    assert not [ln for ln in lines if ln["type"] == "applied"]
    assert {p.name: p.read_bytes() for p in repo.iterdir() if p.is_file()} == before
    assert len(sim.requests()) == 2  # a dropped stream is retried, as any drop is (once here)
    assert "gave up after 1 retry" in res.stderr
