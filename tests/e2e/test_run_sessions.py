"""Stored sessions headless: `run` then `run --continue` / `--session NAME`, real processes
against the simulator process in a real git repository."""

from __future__ import annotations

import sqlite3
import subprocess
import time
from pathlib import Path

from support.runs import (  # noqa: F401 (fixtures)
    A_NEW,
    VALIDATOR,
    check_schema,
    cli,
    copy_repo,
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
    with sqlite3.connect(home / "data" / "sessions.sqlite3") as db:  # let go by each run
        assert db.execute("SELECT owner FROM sessions").fetchall() == [("",)]
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


def _cli(repo: Path, home: Path, sim: SimProcess, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cli() + list(args), cwd=repo, env=env_for(home, sim),
                          capture_output=True, text=True, timeout=60)


def test_sessions_lists_and_prunes(sim: SimProcess, repo: Path, home: Path) -> None:
    sim.configure(replies=[{"match": "FSTRING", "text": GREET_DIFF}])
    assert run(repo, home, sim, "FSTRING one", "--session", "first").returncode == 0
    assert run(repo, home, sim, "FSTRING two").returncode == 0
    listed = _cli(repo, home, sim, "sessions")
    assert listed.returncode == 0, listed.stderr
    rows = listed.stdout.splitlines()
    assert len(rows) == 2 and rows[1].startswith("first") and "1 turn" in rows[1]
    assert "FSTRING one" in rows[1] and "FSTRING two" in rows[0]
    other = copy_repo(repo, repo.parent / "other")  # another repository's session stays
    assert run(other, home, sim, "FSTRING elsewhere").returncode == 0
    pruned = _cli(repo, home, sim, "sessions", "--prune", "0")
    assert pruned.returncode == 0 and "2 sessions removed" in pruned.stderr, pruned.stderr
    assert _cli(repo, home, sim, "sessions", "--json").stdout == ""
    assert "FSTRING elsewhere" in _cli(other, home, sim, "sessions").stdout
    everywhere = _cli(repo, home, sim, "sessions", "--all", "--prune", "0")
    assert "1 session removed" in everywhere.stderr and "other" in everywhere.stdout
    assert _cli(other, home, sim, "sessions", "--json").stdout == ""
    bad = _cli(repo, home, sim, "sessions", "--prune", "-1")
    assert bad.returncode == ExitCode.USAGE and "Traceback" not in bad.stderr


def test_a_damaged_store_is_moved_aside_and_the_run_goes_on(sim: SimProcess, repo: Path,
                                                           home: Path) -> None:
    sim.configure(replies=[{"match": "FSTRING", "text": GREET_DIFF}])
    store = home / "data" / "sessions.sqlite3"
    store.parent.mkdir(parents=True, exist_ok=True)
    store.write_bytes(b"not a database at all" * 200)
    done = run(repo, home, sim, "FSTRING after damage", "--json")
    assert done.returncode == 0, done.stderr
    aside = [p for p in store.parent.iterdir() if p.name.startswith("sessions.sqlite3.damaged")]
    assert len(aside) == 1 and aside[0].read_bytes() == b"not a database at all" * 200
    assert str(aside[0]) in done.stderr and "nothing was deleted" in done.stderr
    assert lines_of(done.stdout)[0]["session_name"]  # a new store holds this run's session


def test_the_history_benchmark_runs_and_the_rule_saves() -> None:
    import os
    import re
    import sys

    bench = Path(__file__).resolve().parents[2] / "benchmarks"
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPARK_PAIR_")}
    done = subprocess.run([sys.executable, "bench_history.py", "--turns", "6",
                           "--reply-lines", "20"], cwd=bench, env=env, capture_output=True,
                          text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    total = re.search(r"total\s+([\d,]+)\s+([\d,]+)", done.stdout)
    assert total is not None, done.stdout
    with_rule, without = (int(g.replace(",", "")) for g in total.groups())
    assert 0 < with_rule < without


def test_continue_without_a_terminal_says_the_app_needs_one_and_what_works_instead(
        tmp_path: Path) -> None:
    from click.testing import CliRunner

    from spark_pair.cli.main import main

    for args in (["-c"], ["--resume", "brisk-otter"], ["--resume"]):
        result = CliRunner().invoke(main, args, env={"SPARK_PAIR_HOME": str(tmp_path)})
        assert result.exit_code == 2, result.output
        assert "needs a terminal" in result.output and "run --continue" in result.output
        assert "Traceback" not in result.output


def test_continue_says_how_many_earlier_turns_go(sim: SimProcess, repo: Path, home: Path,
                                                 monkeypatch) -> None:
    from spark_pair.store.sessions import SessionStore, StoredTurn

    monkeypatch.setenv("SPARK_PAIR_HOME", str(home))
    with SessionStore() as store:  # one applied turn, then a stopped one (never resent)
        info = store.create(repo, name="half-done")
        store.add_turn(info.id, StoredTurn("FIRST", reply="done", status="applied",
                                           changed=["a.py"]))
        store.add_turn(info.id, StoredTurn("SECOND", reply="half", status="cancelled"))
    done = run(repo, home, sim, "hello", "--continue")  # (the reply holds no diff: exit 4)
    assert ("session half-done: carrying on after 2 earlier turns; 1 goes with the next "
            "request") in " ".join(done.stderr.split())


def test_the_name_said_is_the_name_stored_when_most_names_are_taken(
        sim: SimProcess, repo: Path, home: Path) -> None:
    """Every adjective-animal pair but two is taken in this repository: the `session` line
    names the session the run's turn is stored in (not a taken name of another one)."""
    from spark_pair.store import names
    from spark_pair.store.sessions import SessionStore

    free = {"tidy-yak", "wise-zebra"}
    with SessionStore(home / "data" / "sessions.sqlite3") as store:
        for adj in names._ADJECTIVES:
            for noun in names._NOUNS:
                if f"{adj}-{noun}" not in free:
                    store.create(repo, name=f"{adj}-{noun}")
    sim.configure(replies=[{"match": "FSTRING", "text": GREET_DIFF}])
    done = run(repo, home, sim, "FSTRING in greet", "-f", "a.py", "--json")
    assert done.returncode == 0, done.stderr
    said = lines_of(done.stdout)[0]["session_name"]
    with sqlite3.connect(home / "data" / "sessions.sqlite3") as db:
        kept = db.execute("SELECT s.name FROM sessions s JOIN turns t ON t.session = s.id"
                          " WHERE t.instruction = 'FSTRING in greet'").fetchall()
    assert kept == [(said,)], done.stderr
    assert "taken meanwhile" not in done.stderr


def test_continue_and_session_together_answer_in_json_too(sim: SimProcess, repo: Path,
                                                          home: Path) -> None:
    done = run(repo, home, sim, "FSTRING in greet", "--continue", "--session", "x", "--json")
    assert done.returncode == ExitCode.USAGE
    lines = lines_of(done.stdout)
    for line in lines:
        VALIDATOR.validate(line)
    assert [line["type"] for line in lines] == ["error", "end"]
    assert "--continue and --session" in lines[0]["message"]
    assert lines[-1]["exit_code"] == ExitCode.USAGE
    assert "--continue and --session" in done.stderr and not sim.requests()


def test_a_turn_undone_with_spark_pair_undo_is_stored_told_and_counted_as_undone(
        sim: SimProcess, repo: Path, home: Path) -> None:
    """`spark-pair undo` outside the app, as the app's /undo: the stored session lists the turn
    undone, `run -c` tells the model so, `stats` leaves it out of the applied turns; `redo`
    makes it applied again."""
    def cmd(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(cli() + list(args), cwd=repo, env=env_for(home, sim),
                              capture_output=True, text=True, timeout=60)

    def statuses() -> list[str]:
        with sqlite3.connect(home / "data" / "sessions.sqlite3") as db:
            return [s for (s,) in db.execute("SELECT status FROM turns ORDER BY seq")]

    def turns() -> dict:
        stats = cmd("stats", "--json")
        assert stats.returncode == 0, stats.stderr
        return __import__("json").loads(stats.stdout)["turns"]

    sim.configure(replies=[{"match": "FSTRING", "text": GREET_DIFF}])
    first = run(repo, home, sim, "FSTRING in greet", "-f", "a.py", "--apply", "--json")
    assert first.returncode == 0, first.stderr
    assert statuses() == ["applied"] and turns()["undone_turns"] == 0

    undone = cmd("undo")
    assert undone.returncode == 0, undone.stderr
    assert "return 'hello ' + name" in (repo / "a.py").read_text()
    assert statuses() == ["undone"]
    assert turns()["undone_turns"] == 1 and turns()["applied_turns"] == 0
    sim.clear_requests()
    second = run(repo, home, sim, "now add a docstring", "-f", "a.py", "--continue", "--json")
    assert second.returncode != ExitCode.USAGE, second.stderr
    assert "then undone by the user" in _text(_inputs(sim)[-1])

    redone = cmd("redo")
    assert redone.returncode == 0, redone.stderr
    assert statuses()[0] == "applied"
    assert turns()["undone_turns"] == 0


def test_a_turn_refused_for_its_model_leaves_the_sessions_model_as_it_was(
        sim: SimProcess, repo: Path, home: Path) -> None:
    """A model the server does not have: the turn is stored (its error too), and the session
    keeps the model that answered, so carrying it on does not start from the missing one."""
    import json

    sim.configure(replies=[{"match": "FSTRING", "text": GREET_DIFF}])
    assert run(repo, home, sim, "FSTRING one", "--session", "m1").returncode == 0
    failed = run(repo, home, sim, "FSTRING two", "--session", "m1", "--model", "no-such-model")
    assert failed.returncode != 0 and "no-such-model" in failed.stderr, failed.stderr
    listed = [json.loads(line) for line in
              _cli(repo, home, sim, "sessions", "--json").stdout.splitlines()]
    (m1,) = [s for s in listed if s["name"] == "m1"]
    assert m1["turns"] == 2 and m1["model"] != "no-such-model", m1
