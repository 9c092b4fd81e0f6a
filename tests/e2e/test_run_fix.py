"""`run --apply --check CMD --fix N [--escalate]`: the turn, its check and the fix rounds, as a
real process against the simulator process, in a real git repository."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from support.runs import check_schema, cli, env_for, lines_of, make_repo, run, tree

from spark_pair.base.exitcodes import ExitCode
from spark_pair.sim.process import SimProcess

CALC = "def add(a, b):\n    return 0\n"
CHECK = ('import os, calc\nprint("key", os.environ.get("SPARK_PAIR_API_KEY"))\n'
         'assert calc.add(2, 3) == 5, "add(2, 3) is %r" % calc.add(2, 3)\n')
KEY = "sk-test-e2e-secret-key"


def diff(old: str, new: str) -> str:
    return (f"```diff\n--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n"
            f"-    return {old}\n+    return {new}\n```\n")


def calc(body: str) -> bytes:
    return f"def add(a, b):\n    return {body}\n".encode()


def repo_at(tmp_path: Path, config: str = "") -> Path:
    files = {"calc.py": CALC, "check.py": CHECK}
    if config:
        files[".spark-pair.toml"] = config
    return make_repo(tmp_path / "repo", files)


def bodies(sim: SimProcess) -> list[str]:
    return [json.dumps(r["body"]) for r in sim.requests() if r["path"].endswith(
        ("/responses", "/chat/completions"))]


def undo(repo: Path, home: Path, sim: SimProcess) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cli() + ["undo"], cwd=repo, env=env_for(home, sim),
                          capture_output=True, text=True, timeout=60)


def test_a_round_that_fixes_the_check_ends_green(sim: SimProcess, tmp_path: Path) -> None:
    repo, home = repo_at(tmp_path), tmp_path / "home"
    sim.configure(replies=[
        {"match": "", "check": "add(2, 3) is -1", "text": diff("a - b", "a + b")},
        {"match": "ADD", "text": diff("0", "a - b")}])
    before = tree(repo)
    res = run(repo, home, sim, "ADD numbers in calc.py", "-f", "calc.py", "--apply",
              "--check", f"python3 check.py {KEY}", "--fix", "2", "--json")
    assert res.returncode == 0, res.stderr
    lines = lines_of(res.stdout)
    check_schema(lines)
    checks = [ln for ln in lines if ln["type"] == "check"]
    assert [(c["round"], c["passed"]) for c in checks] == [(0, False), (1, True)]
    assert "add(2, 3) is -1" in checks[0]["output"] and KEY not in res.stdout + res.stderr
    assert checks[0]["command"] == "python3 check.py ***"  # a key written in the command too
    stored = [p.read_bytes() for p in home.rglob("*") if p.is_file()]
    assert stored and not any(KEY.encode() in data for data in stored)
    rounds = [ln for ln in lines if ln["type"] == "round"]
    assert [(r["round"], r["of"], r["escalated"]) for r in rounds] == [(1, 2, False)]
    end = lines[-1]
    assert (end["status"], end["exit_code"]) == ("applied", 0)
    assert tree(repo)["calc.py"] == calc("a + b")
    sent = bodies(sim)
    assert len(sent) == 2
    assert "add(2, 3) is -1" in sent[1] and "check-output" in sent[1]  # the failure went back
    assert "add(2, 3) is -1" not in sent[0]
    assert KEY not in sent[1] and "key ***" in sent[1]  # the check printed it: redacted
    assert "fix round 1 of 2" in res.stderr and "check passed" in res.stderr
    # each round undoes by itself, newest first
    assert undo(repo, home, sim).returncode == 0
    assert tree(repo)["calc.py"] == calc("a - b")
    assert undo(repo, home, sim).returncode == 0
    assert tree(repo) == before


def test_a_check_that_never_passes_exits_9_and_the_last_round_escalates(
        sim: SimProcess, tmp_path: Path) -> None:
    repo = repo_at(tmp_path, '[model]\nstronger = "gpt-5.3-codex"\n')
    home = tmp_path / "home"
    sim.configure(replies=[
        {"match": "", "check": "add(2, 3)", "model": "gpt-5.3-codex", "text": diff("a * b", "b")},
        {"match": "", "check": "add(2, 3)", "text": diff("a - b", "a * b")},
        {"match": "ADD", "text": diff("0", "a - b")}])
    res = run(repo, home, sim, "ADD numbers", "-f", "calc.py", "--apply", "--check",
              "python3 check.py", "--fix", "2", "--escalate", "--json")
    assert res.returncode == ExitCode.CHECK == 9, res.stderr
    lines = lines_of(res.stdout)
    check_schema(lines)
    assert [c["passed"] for c in lines if c["type"] == "check"] == [False, False, False]
    rounds = [ln for ln in lines if ln["type"] == "round"]
    assert [(r["model"], r["escalated"]) for r in rounds] == [
        ("gpt-5.3-codex-spark", False), ("gpt-5.3-codex", True)]
    models = [r["body"]["model"] for r in sim.requests() if "model" in (r["body"] or {})]
    assert models == ["gpt-5.3-codex-spark", "gpt-5.3-codex-spark", "gpt-5.3-codex"]
    end = lines[-1]
    assert (end["status"], end["exit_name"]) == ("check_failed", "CHECK")
    assert end["turn_id"] is not None
    assert tree(repo)["calc.py"] == calc("b")  # the tree keeps the last round
    assert "still fails after 2 fix rounds" in res.stderr and "escalated" in res.stderr
    for expected in (calc("a * b"), calc("a - b"), CALC.encode()):
        assert undo(repo, home, sim).returncode == 0
        assert tree(repo)["calc.py"] == expected
    stats = subprocess.run(cli() + ["stats", "--json"], cwd=repo, env=env_for(home, sim),
                           capture_output=True, text=True, timeout=60)
    (task,) = json.loads(stats.stdout)["tasks"]
    assert task == {"model": "gpt-5.3-codex-spark", "tasks": 1, "green": 0,
                    "median_rounds_to_green": None, "escalated_share": 1.0,
                    "green_first_share": 0.0}


def test_a_hanging_check_is_stopped_and_counts_as_failed(sim: SimProcess,
                                                          tmp_path: Path) -> None:
    repo = repo_at(tmp_path, "[review]\ncheck_timeout_s = 1\n")
    sim.configure(replies=[{"match": "ADD", "text": diff("0", "a + b")}])
    res = run(repo, tmp_path / "home", sim, "ADD", "-f", "calc.py", "--apply", "--check",
              "sleep 30", "--json", timeout=25)
    assert res.returncode == ExitCode.CHECK, res.stderr
    check = next(ln for ln in lines_of(res.stdout) if ln["type"] == "check")
    assert check["timed_out"] and not check["passed"] and check["duration_ms"] < 10_000
    assert "timed out" in res.stderr
    assert tree(repo)["calc.py"] == calc("a + b")  # applied, kept


def test_wrong_flags_say_what_to_do(sim: SimProcess, tmp_path: Path) -> None:
    repo, home = repo_at(tmp_path), tmp_path / "home"
    dry = run(repo, home, sim, "ADD", "--check", "true")
    assert dry.returncode == ExitCode.USAGE and "--check needs --apply" in dry.stderr
    fix = run(repo, home, sim, "ADD", "--apply", "--fix", "2")
    assert fix.returncode == ExitCode.USAGE and "--fix needs --check" in fix.stderr
    as_json = run(repo, home, sim, "ADD", "--apply", "--fix", "2", "--json")
    lines = lines_of(as_json.stdout)
    assert [ln["type"] for ln in lines] == ["error", "end"]
    assert lines[-1]["exit_name"] == "USAGE" and "--fix needs --check" in lines[0]["message"]
    none = run(repo, home, sim, "ADD", "--apply", "--check", "true", "--fix", "1",
               "--escalate")
    assert none.returncode == ExitCode.CONFIG and "[model] stronger" in none.stderr
    assert "Traceback" not in dry.stderr + fix.stderr + none.stderr
    assert not sim.requests()  # nothing was sent


def test_ctrl_c_during_the_check_stops_it_and_keeps_the_applied_turn(
        sim: SimProcess, tmp_path: Path) -> None:
    import signal
    import time

    repo, home = repo_at(tmp_path), tmp_path / "home"
    sim.configure(replies=[{"match": "ADD", "text": diff("0", "a + b")}])
    marker = tmp_path / "check-started"
    proc = subprocess.Popen(
        cli() + ["run", "ADD", "-f", "calc.py", "--apply", "--json", "--fix", "1",
                 "--check", f"touch {marker}; sleep 30"],
        cwd=repo, env=env_for(home, sim), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True)
    deadline = time.monotonic() + 30
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert marker.exists()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == ExitCode.INTERRUPTED, err
    lines = lines_of(out)
    check_schema(lines)
    assert lines[-1]["status"] == "cancelled" and lines[-1]["turn_id"] is not None
    assert "Traceback" not in err
    assert "hint: the turn stays applied: spark-pair undo takes it back" in err  # one round
    assert tree(repo)["calc.py"] == calc("a + b")  # applied before the check; undoable
    assert len(bodies(sim)) == 1  # no fix round after a stop


def test_a_round_is_applied_only_under_the_same_flags(sim: SimProcess, tmp_path: Path) -> None:
    repo, home = repo_at(tmp_path), tmp_path / "home"
    delete_check = ("```diff\n--- a/check.py\n+++ /dev/null\n@@ -1,3 +0,0 @@\n"
                    + "".join(f"-{line}\n" for line in CHECK.splitlines()) + "```\n")
    sim.configure(replies=[{"match": "", "check": "add(2, 3)", "text": delete_check},
                           {"match": "ADD", "text": diff("0", "a - b")}])
    res = run(repo, home, sim, "ADD", "-f", "calc.py", "-f", "check.py", "--apply",
              "--check", "python3 check.py", "--fix", "2", "--json")
    assert res.returncode == ExitCode.POLICY, res.stderr  # the round's delete needs its flag
    lines = lines_of(res.stdout)
    check_schema(lines)
    assert [ln["round"] for ln in lines if ln["type"] == "round"] == [1]
    assert lines[-1]["status"] == "refused"
    assert (repo / "check.py").read_text() == CHECK  # never deleted
    assert tree(repo)["calc.py"] == calc("a - b")  # the first turn stays
    assert "earlier rounds stay applied" in res.stderr


def test_a_reply_cut_by_the_context_window_goes_to_the_stronger_model(
        sim: SimProcess, tmp_path: Path) -> None:
    repo = repo_at(tmp_path, '[model]\nstronger = "gpt-5.3-codex"\n')
    home = tmp_path / "home"
    prose = "Let me think about this change carefully. " * 40  # ~400 tokens before the diff
    sim.configure(replies=[{"match": "ADD", "text": prose + diff("0", "a + b")}],
                  contexts={"gpt-5.3-codex-spark": 600})  # the fast model's window is small
    res = run(repo, home, sim, "ADD", "-f", "calc.py", "--apply", "--check",
              "python3 check.py", "--fix", "1", "--escalate", "--json")
    assert res.returncode == 0, res.stderr
    lines = lines_of(res.stdout)
    check_schema(lines)
    error = next(ln for ln in lines if ln["type"] == "error")
    assert error["kind"] == "incomplete"
    rounds = [ln for ln in lines if ln["type"] == "round"]
    assert [(r["round"], r["model"], r["escalated"]) for r in rounds] == [
        (0, "gpt-5.3-codex", True)]
    assert [c["passed"] for c in lines if c["type"] == "check"] == [True]
    assert "context window" in res.stderr
    assert tree(repo)["calc.py"] == calc("a + b")
    models = [r["body"]["model"] for r in sim.requests() if "model" in (r["body"] or {})]
    assert models == ["gpt-5.3-codex-spark", "gpt-5.3-codex"]
