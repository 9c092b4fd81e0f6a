"""Stored sessions headless: `run` then `run --continue` / `--session NAME`, real processes
against the simulator process in a real git repository."""

from __future__ import annotations

import sqlite3
import subprocess
import time
from pathlib import Path

from support.runs import (  # noqa: F401 (fixtures)
    A_NEW,
    check_schema,
    cli,
    env_for,
    home,
    lines_of,
    repo,
    run,
)

from spark_pair.base.exitcodes import ExitCode
from spark_pair.sim.process import SimProcess

GREET_DIFF = """--- a/a.py
+++ b/a.py
@@ -1,3 +1,3 @@
 def greet(name):
-    return 'hello ' + name
+    return f'hello {name}'
 
"""


def _inputs(sim: SimProcess) -> list[list[dict]]:
    """The input messages of each model request (warm-ups left out)."""
    out = []
    for r in sim.requests():
        body = r.get("body") or {}
        if body.get("generate") is False:
            continue
        out.append(body.get("input") or body.get("messages") or [])
    return out


def _text(messages: list[dict]) -> str:
    return "\n".join(str(m.get("content")) for m in messages)


def test_continue_carries_the_first_instruction_and_its_outcome(sim: SimProcess, repo: Path,
                                                                home: Path) -> None:
    sim.configure(replies=[{"match": "FSTRING", "text": GREET_DIFF}])
    first = run(repo, home, sim, "FSTRING in greet", "-f", "a.py", "--json")
    assert first.returncode == 0, first.stderr
    start = lines_of(first.stdout)[0]
    check_schema(lines_of(first.stdout))
    name = start["session_name"]
    assert name and start["earlier_turns"] == 0

    sim.clear_requests()
    second = run(repo, home, sim, "now add a docstring", "-f", "a.py", "--continue", "--json")
    assert second.returncode != ExitCode.USAGE, second.stderr
    lines = lines_of(second.stdout)
    check_schema(lines)
    assert lines[0]["session_name"] == name and lines[0]["earlier_turns"] == 1
    sent = _text(_inputs(sim)[-1])
    last = [r["body"] for r in sim.requests() if r["body"].get("generate") is not False][-1]
    assert "previous_response_id" not in last  # a new process: the history is sent whole
    assert "FSTRING in greet" in sent  # the first instruction
    assert "return f'hello {name}'" in sent  # its reply
    assert "not applied (a dry run)" in sent  # and what became of it
    assert "sk-test-e2e-secret-key" not in (home / "data" / "sessions.sqlite3").read_bytes().decode(
        "latin-1")


def test_session_name_picks_one_and_a_plain_run_begins_another(sim: SimProcess, repo: Path,
                                                               home: Path) -> None:
    sim.configure(replies=[{"match": "FSTRING", "text": GREET_DIFF}])
    named = run(repo, home, sim, "FSTRING named one", "-f", "a.py", "--session", "parser-work",
                "--apply", "--json")
    assert named.returncode == 0, named.stderr
    assert lines_of(named.stdout)[0]["session_name"] == "parser-work"
    other = run(repo, home, sim, "an unrelated question", "--json")
    assert lines_of(other.stdout)[0]["session_name"] not in (None, "parser-work")

    sim.clear_requests()
    again = run(repo, home, sim, "follow up", "--session", "parser-work", "--json")
    start = lines_of(again.stdout)[0]
    assert start["session_name"] == "parser-work" and start["earlier_turns"] == 1
    sent = _text(_inputs(sim)[-1])
    assert "FSTRING named one" in sent and "applied to a.py" in sent
    assert "an unrelated question" not in sent


def test_continue_with_nothing_to_continue_is_a_usage_error(sim: SimProcess, repo: Path,
                                                            home: Path) -> None:
    done = run(repo, home, sim, "hello", "--continue")
    assert done.returncode == ExitCode.USAGE
    assert "no earlier session" in done.stderr and "Traceback" not in done.stderr
    both = run(repo, home, sim, "hello", "--continue", "--session", "x")
    assert both.returncode == ExitCode.USAGE and "hint:" in both.stderr


def test_kill_mid_turn_loses_only_that_turn(sim: SimProcess, repo: Path, home: Path) -> None:
    sim.configure(replies=[{"match": "FSTRING", "text": GREET_DIFF}])
    first = run(repo, home, sim, "FSTRING first", "-f", "a.py", "--session", "k9")
    assert first.returncode == 0, first.stderr
    sim.set_faults([{"kind": "stall", "after_tokens": 3}])
    proc = subprocess.Popen(cli() + ["run", "second, killed", "--session", "k9"], cwd=repo,
                            env=env_for(home, sim), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while len(_inputs(sim)) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(_inputs(sim)) >= 2, "the second request never reached the simulator"
        time.sleep(0.2)
    finally:
        proc.kill()  # SIGKILL, mid-turn
        proc.wait(timeout=10)
    sim.set_faults([])
    with sqlite3.connect(home / "data" / "sessions.sqlite3") as db:
        rows = db.execute("SELECT t.instruction FROM turns t JOIN sessions s ON s.id = t.session"
                          " WHERE s.name = 'k9' ORDER BY t.seq").fetchall()
    assert rows == [("FSTRING first",)]
    sim.clear_requests()
    third = run(repo, home, sim, "third", "--session", "k9")
    assert third.returncode != ExitCode.USAGE, third.stderr
    sent = _text(_inputs(sim)[-1])
    assert "FSTRING first" in sent and "second, killed" not in sent
