"""`spark-pair run` with replies that match only loosely (issue 30): the printed diff and the
`--json` operation lines say which hunks were placed loosely and how; --apply writes the
re-based lines (a real process against the simulator process, in a real git repo)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from support.loose import RATES, RATES_AFTER, SHORT
from support.runs import check_schema, home, lines_of, make_repo, run, tree  # noqa: F401 (fixture)

from spark_pair.base.exitcodes import ExitCode
from spark_pair.sim.process import SimProcess


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", {"rates.py": RATES})


def test_a_re_indented_hunk_is_re_based_and_said_so(sim: SimProcess, repo: Path,
                                                     home: Path) -> None:
    sim.configure(default=SHORT)
    before = tree(repo)
    p = run(repo, home, sim, "add an else", "-f", "rates.py")
    assert p.returncode == ExitCode.OK, p.stderr
    assert "@@ -3,3 +3,5 @@ ~ loose: re-based by +4 columns\n" in p.stdout
    assert tree(repo) == before
    p = run(repo, home, sim, "add an else", "-f", "rates.py", "--apply", "--json")
    lines = lines_of(p.stdout)
    check_schema(lines)
    (op,) = [ln for ln in lines if ln["type"] == "operation"]
    assert op["loose"] == [{"hunk": 0, "line": 3, "how": ["rebased"], "shift": 4,
                            "note": "re-based by +4 columns"}]
    written = (repo / "rates.py").read_text()
    assert written == RATES_AFTER
    ast.parse(written)


def test_a_revised_second_block_is_applied_in_place_of_the_first(sim: SimProcess, repo: Path,
                                                                 home: Path) -> None:
    first = SHORT.replace("    else:\n+        value = 0", "    else:\n+        value = -1")
    second = "\n\nOops, zero:\n" + SHORT.split("\n\n", 1)[1]
    sim.configure(default=first + second)
    p = run(repo, home, sim, "add an else", "-f", "rates.py", "--apply", "--json")
    lines = lines_of(p.stdout)
    check_schema(lines)
    assert lines[-1]["status"] == "applied", p.stderr
    ops = [ln for ln in lines if ln["type"] == "operation"]
    assert [h["how"] for op in ops for h in op["loose"]] == [
        ["superseded"], ["revises", "rebased"]]
    (applied,) = [ln for ln in lines if ln["type"] == "applied"]
    assert any("revises 1 earlier one(s)" in note for note in applied["notes"])
    assert "value = 0" in (repo / "rates.py").read_text()
    assert "value = -1" not in (repo / "rates.py").read_text()
