"""The repair round end to end: `spark-pair run` against the simulator process, in a real git
repository, with scripted replies (the first reply's hunk has context that is not in the file;
the repair request is answered by the reply scripted for it)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from support.runs import (  # noqa: F401 (fixtures)
    A_DIFF,
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
RIGHT = A_DIFF
# its removed line is not in the file (an edge context line alone would be left out and placed)
STILL_WRONG = RIGHT.replace("-    return 'hello ' + name", "-    return 'hey ' + name")


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


# ---- an answer that holds more than the missed hunks ------------------------------------------

R_TXT = "a = 0\nfoo()\nbar()\nb = 1\nfoo()\nbar()\nc = 2\nd = 3\ne = 4\n"
ADD_BAZ = "@@ -2,2 +2,3 @@\n foo()\n bar()\n+baz()\n"
TWO = ("```diff\n--- a/r.txt\n+++ b/r.txt\n" + ADD_BAZ
       + "@@ -8,2 +9,2 @@\n d = 3\n-e = 5 (BUMP)\n+e = 5\n```\n")
# the usual answer: the whole corrected diff again, the hunk that fitted included
WHOLE_AGAIN = ("Here is the corrected diff:\n```diff\n--- a/r.txt\n+++ b/r.txt\n" + ADD_BAZ
               + "@@ -8,2 +9,2 @@\n d = 3\n-e = 4\n+e = 5\n```\n")
# the missed hunk mended, and a hunk and a file never asked about
SNEAKY = ("```diff\n--- a/r.txt\n+++ b/r.txt\n@@ -8,2 +8,2 @@\n d = 3\n-e = 4\n+e = 5\n"
          "@@ -1,2 +1,2 @@\n-a = 0\n+a = 'SNEAKY'\n foo()\n"
          "--- a/util.py\n+++ b/util.py\n@@ -1,2 +1,2 @@\n def helper():\n-    return 42\n"
          "+    return 'SNEAKY'\n```\n")


def _bump(sim: SimProcess, repo: Path, home: Path, answer: str
          ) -> tuple[subprocess.CompletedProcess[str], dict]:
    (repo / "r.txt").write_text(R_TXT)
    sim.configure(replies=[{"match": ASK_MARK, "text": answer},
                           {"match": "BUMP", "text": TWO}], ttft_ms=0)
    done = run(repo, home, sim, "BUMP e", "-f", "r.txt", "--apply", "--json")
    lines = lines_of(done.stdout)
    check_schema(lines)
    repair = [ln for ln in lines if ln["type"] == "repair"]
    assert len(repair) == 1, done.stdout
    return done, repair[0]


def test_a_whole_diff_resent_by_the_repair_writes_each_hunk_once(
        sim: SimProcess, repo: Path, home: Path) -> None:
    done, repair = _bump(sim, repo, home, WHOLE_AGAIN)
    assert done.returncode == 0, done.stderr
    assert (repo / "r.txt").read_text() == R_TXT.replace("bar()\n", "bar()\nbaz()\n", 1
                                                         ).replace("e = 4", "e = 5")
    assert repair["outcome"] == "fixed"
    assert repair["ignored"] == ["r.txt answer hunk 1 (at line 2) repeats hunk 1, which was "
                                 "not asked about: not written"]
    assert "repair: r.txt hunk 2: fixed" in done.stderr
    assert "repeats hunk 1" in done.stderr


def test_a_hunk_or_file_the_repair_was_not_asked_about_is_never_written(
        sim: SimProcess, repo: Path, home: Path) -> None:
    before = tree(repo)
    done, repair = _bump(sim, repo, home, SNEAKY)
    assert done.returncode == 0, done.stderr
    assert (repo / "r.txt").read_text() == R_TXT.replace("bar()\n", "bar()\nbaz()\n", 1
                                                         ).replace("e = 4", "e = 5")
    assert (repo / "util.py").read_bytes() == before["util.py"]
    assert "SNEAKY" not in json.dumps(tree(repo), default=str)
    assert repair["outcome"] == "fixed"
    assert repair["ignored"] == ["util.py: not asked about, not written",
                                 "r.txt answer hunk 2 (at line 1) replaces no hunk that was "
                                 "asked about: not written"]
    said = done.stderr.splitlines()
    assert "spark-pair: repair: util.py: not asked about, not written" in said
    # every line says whose it is, or goes on the one before (indented)
    assert all(line.startswith(("spark-pair: ", " ")) for line in said), said
