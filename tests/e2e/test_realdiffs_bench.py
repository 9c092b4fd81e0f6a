"""The real-diffs benchmark's plumbing on a case built here (no prepared corpus): every tool
applies a clean diff to the same bytes, a refusal has a cause, a missing cache says what to
fetch."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCH))

from bench_realdiffs import _excuse_syntax, compare, run_case, summary  # noqa: E402
from realdiffs_tools import Outcome  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("patch") is None, reason="GNU patch is missing")

FILE = "".join(f"def f{i}(x):\n    if x:\n        return {i}\n    return -{i}\n\n\n"
               for i in range(20))

DIFF = """\
Here is the fix.

```diff
--- a/pkg/mod.py
+++ b/pkg/mod.py
@@ -41,4 +41,6 @@ def f10(x):
 def f10(x):
     if x:
         return 10
+    elif x is None:
+        return 0
     return -10
```
"""


def case(tmp_path: Path, diff: str) -> dict:
    d = tmp_path / "case"
    (d / "files" / "pkg").mkdir(parents=True)
    (d / "files" / "pkg" / "mod.py").write_text(FILE)
    return {"id": "m/t-1", "model": "m", "split": "tuning", "repo": "o/r", "dir": d,
            "diff": diff.split("```diff\n")[1].split("```")[0], "reply": diff}


def test_a_clean_diff_applies_alike_with_every_tool(tmp_path: Path) -> None:
    row = run_case(case(tmp_path, DIFF), timeout=20)
    for kind in ("diff", "reply"):
        for tool, res in row[kind].items():
            assert res["applied"], (kind, tool, res)
            assert not res["wrong"], (kind, tool, res)
            assert res.get("same_as_spark", True), (kind, tool)
    s = summary([row], "diff")
    assert s["spark-pair"]["applied"] == 1 and s["spark-pair"]["wrong"] == 0


def test_a_diff_whose_lines_are_not_in_the_file_is_refused_with_a_cause(tmp_path: Path) -> None:
    row = run_case(case(tmp_path, DIFF.replace("return 10", "return 11")), timeout=20)
    sp = row["diff"]["spark-pair"]
    assert not sp["applied"]
    assert sp["cause"].startswith("conflict:") and "not in the file" in sp["cause"]
    assert summary([row], "diff")["refusals"] == {sp["cause"]: 1}


def test_without_a_cache_it_says_what_to_fetch_and_how_to_prepare(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, str(BENCH / "bench_realdiffs.py"), "--cache",
                           str(tmp_path / "none")], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "sympy/sympy" in done.stderr and "--prepare --mirror" in done.stderr
    assert "Traceback" not in done.stderr


def test_compare_names_the_cases_whose_outcome_changed(tmp_path: Path) -> None:
    right = run_case(case(tmp_path, DIFF), timeout=20)
    refused = run_case(case(tmp_path / "b", DIFF.replace("return 10", "return 11")), timeout=20)
    refused["id"] = right["id"]
    lines = compare([right], {"engine": "before", "cases": [refused]})
    assert any(line.strip().startswith("- -> +") and "m/t-1" in line for line in lines), lines
    assert compare([right], {"cases": [right]})[-1].strip() == "none"


def test_a_result_that_does_not_compile_is_excused_only_by_a_tool_that_writes_as_typed() -> None:
    broken = {"mod.py": b"def f(:\n"}
    problem = "mod.py: the result does not compile"
    for witness, excused in (("git-apply", True), ("patch-fuzz2", True),
                             ("git-apply-lenient", False)):
        res = {"wrong": [problem]}
        outs = {"spark-pair": Outcome(True, dict(broken)), witness: Outcome(True, dict(broken))}
        _excuse_syntax(res, "spark-pair", outs)
        assert (res["wrong"] == []) is excused, witness
        assert bool(res.get("notes")) is excused
    res = {"wrong": [problem]}
    _excuse_syntax(res, "spark-pair", {"spark-pair": Outcome(True, dict(broken)),
                                       "git-apply": Outcome(False)})
    assert res["wrong"] == [problem]  # a tool that refused is no witness
