"""The repair round end to end: `spark-pair run` against the simulator process, in a real git
repository, with scripted replies (the first reply's hunk has context that is not in the file;
the repair request is answered by the reply scripted for it)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from support.runs import (  # noqa: F401 (fixtures)
    A_NEW,
    A_PY,
    check_schema,
    cli,
    env_for,
    home,
    lines_of,
    repo,
    run,
    tree,
)

from spark_pair.base.exitcodes import ExitCode
from spark_pair.session.repair import ASK_MARK
from spark_pair.sim.process import SimProcess

WRONG = """Here is the change:

```diff
--- a/a.py
+++ b/a.py
@@ -1,3 +1,3 @@
 def greet(name):
-    return "hello " + name
+    return f'hello {name}'
 
```
"""
RIGHT = """```diff
--- a/a.py
+++ b/a.py
@@ -1,2 +1,2 @@
 def greet(name):
-    return 'hello ' + name
+    return f'hello {name}'
```
"""
STILL_WRONG = RIGHT.replace(" def greet(name):", " def greet(person):")  # not in the file


def _script(sim: SimProcess, repair_reply: str) -> None:
    sim.configure(replies=[{"match": ASK_MARK, "text": repair_reply},
                           {"match": "GREET", "text": WRONG}], ttft_ms=0)


def test_a_hunk_whose_context_is_wrong_is_repaired_and_applied(
        sim: SimProcess, repo: Path, home: Path) -> None:
    _script(sim, RIGHT)
    done = run(repo, home, sim, "GREET with an f-string", "-f", "a.py", "--apply", "--json")
    assert done.returncode == 0, done.stderr
    lines = lines_of(done.stdout)
    check_schema(lines)
    repair = [ln for ln in lines if ln["type"] == "repair"]
    assert len(repair) == 1
    assert repair[0]["outcome"] == "fixed"
    assert repair[0]["hunks"] == [{"index": 0, "hunk": 0, "path": "a.py", "fixed": True,
                                   "cause": ""}]
    assert (repo / "a.py").read_text() == A_NEW
    assert "repair: a.py hunk 1: fixed" in done.stderr
    # the turn's tokens count the repair request's too
    metrics = next(ln for ln in lines if ln["type"] == "metrics")
    usage = next(ln for ln in lines if ln["type"] == "usage")
    assert usage["output_tokens"] == metrics["output_tokens"] + repair[0]["output_tokens"]
    # the repair request showed the file's real line and said which line is not there
    asked = [r for r in sim.requests() if ASK_MARK in json.dumps(r.get("body", ""))]
    assert len(asked) == 1
    text = json.dumps(asked[0]["body"])
    assert "return 'hello ' + name" in text and 'return \\"hello \\" + name' in text
    # the request log keeps both requests, the repair under its own task label
    stats = subprocess.run(cli() + ["stats", "--json", "--by", "task"], cwd=repo,
                           env=env_for(home, sim), capture_output=True, text=True, timeout=60)
    assert stats.returncode == 0, stats.stderr
    report = json.loads(stats.stdout)
    assert {g["key"]: g["requests"] for g in report["by"]["task"]} == {"edit": 1, "repair": 1}
    assert report["forms"] == [{"model": "gpt-5.3-codex-spark", "replies": 1, "as_sent": 0,
                                "tolerance": 0, "repaired": 1, "refused": 0,
                                "as_sent_share": 0.0, "tolerance_share": 0.0,
                                "repaired_share": 1.0, "refused_share": 0.0}]


def test_a_repair_that_still_does_not_apply_is_refused_after_one_round(
        sim: SimProcess, repo: Path, home: Path) -> None:
    _script(sim, STILL_WRONG)
    before = tree(repo)
    done = run(repo, home, sim, "GREET with an f-string", "-f", "a.py", "--apply", "--json")
    assert done.returncode == ExitCode.CONFLICT, done.stderr
    lines = lines_of(done.stdout)
    check_schema(lines)
    repair = [ln for ln in lines if ln["type"] == "repair"]
    assert [r["outcome"] for r in repair] == ["refused"]
    assert repair[0]["hunks"][0]["fixed"] is False
    assert "still does not apply" in repair[0]["hunks"][0]["cause"]
    assert "its lines are not in the file" in repair[0]["hunks"][0]["cause"]
    assert tree(repo) == before
    assert sum(ASK_MARK in json.dumps(r.get("body", "")) for r in sim.requests()) == 1
    assert lines[-1]["status"] == "conflict"


def test_no_repair_sends_no_second_request(sim: SimProcess, repo: Path, home: Path) -> None:
    _script(sim, RIGHT)
    before = tree(repo)
    done = run(repo, home, sim, "GREET with an f-string", "-f", "a.py", "--apply", "--json",
               "--no-repair")
    assert done.returncode == ExitCode.CONFLICT, done.stderr
    lines = lines_of(done.stdout)
    check_schema(lines)
    assert not [ln for ln in lines if ln["type"] == "repair"]
    assert not any(ASK_MARK in json.dumps(r.get("body", "")) for r in sim.requests())
    assert len(sim.requests()) >= 1
    assert tree(repo) == before
    assert (repo / "a.py").read_text() == A_PY


def test_a_dry_run_prints_the_repaired_diff(sim: SimProcess, repo: Path, home: Path) -> None:
    _script(sim, RIGHT)
    before = tree(repo)
    done = run(repo, home, sim, "GREET with an f-string", "-f", "a.py")
    assert done.returncode == 0, done.stderr
    assert "-    return 'hello ' + name" in done.stdout
    assert '"hello "' not in done.stdout
    assert tree(repo) == before
