"""Each look reads a file once: the review's fit check (and the repair round's look it asks
for), the repair round's survey and its merge of the answer; the commit plan asks git for
HEAD's copy of a file once. Real files, a real git repository; the reads and git calls are
counted as they happen. The write step still reads the file as it is then."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from support.runs import make_repo

from spark_pair.base import git as base_git
from spark_pair.edits.apply import apply_turn
from spark_pair.edits.journal import Journal
from spark_pair.edits.ops import Hunk, Modify, content_hash
from spark_pair.session import repair
from spark_pair.session.commit import plan_commit
from spark_pair.ui import fit

OLD = "".join(f"line {n}\n" for n in range(1, 31))
MISSES = [Hunk(2, 3, 2, 3, [" line 2", "-line 3 NOT THERE", "+line three", " line 4"]),
          Hunk(12, 3, 12, 3, [" line 12", "-line 13 NOT THERE", "+line 13!", " line 14"]),
          Hunk(20, 3, 20, 3, [" line 20", "-line 21", "+line twenty-one", " line 22"])]


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """How many times each file's bytes are read (by name)."""
    counted: Counter[str] = Counter()
    read_bytes = Path.read_bytes

    def counting(self: Path) -> bytes:
        counted[self.name] += 1
        return read_bytes(self)

    monkeypatch.setattr(Path, "read_bytes", counting)
    return counted


def test_the_fit_check_and_its_repair_look_read_the_file_once(tmp_path: Path,
                                                              reads: Counter[str]) -> None:
    (tmp_path / "f.txt").write_text(OLD)
    op = Modify("f.txt", MISSES, content_hash(OLD.encode()))
    found = fit.unfit_all(tmp_path, [(0, op)])  # checked whole, then hunk by hunk
    assert [sorted(p) for _, _, p in found] == [[0, 1]]
    assert reads["f.txt"] == 1
    seen: dict[str, Any] = {}  # the review's look: the fit, then what the repair will ask
    fit.unfit_all(tmp_path, [(0, op)], seen)
    assert fit.mendable(tmp_path, [(0, op)], seen) == {0}
    assert reads["f.txt"] == 2


def test_the_repair_survey_and_merge_each_read_the_file_once(tmp_path: Path,
                                                             reads: Counter[str]) -> None:
    (tmp_path / "f.txt").write_text(OLD)
    ops = [Modify("f.txt", MISSES, content_hash(OLD.encode()))]
    found = repair.survey(tmp_path, ops)
    assert [m.hunk_index for m in found.misses] == [0, 1]
    assert reads["f.txt"] == 1
    answer = ("--- a/f.txt\n+++ b/f.txt\n@@ -12,3 +12,3 @@\n line 12\n-line 13\n+line 13!\n"
              " line 14\n@@ -2,3 +2,3 @@\n line 2\n-line 3\n+line three\n line 4\n")
    out = repair.merge(tmp_path, ops, found.misses, answer)  # (out of order: put in order)
    assert out.fixed, out.lines()
    assert reads["f.txt"] == 2  # the answer's look: once, as the file is now
    applied = apply_turn(tmp_path, [out.ops[0]], journal=Journal(tmp_path))
    assert applied.changed == ["f.txt"] and reads["f.txt"] >= 3  # the write reads it again
    assert "line three\n" in (tmp_path / "f.txt").read_text()


def test_the_commit_plan_asks_git_for_heads_copy_once(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPARK_PAIR_HOME", str(tmp_path / "home"))
    root = make_repo(tmp_path / "repo", {"f.txt": OLD})
    mine = OLD.replace("line 25\n", "line 25 (mine)\n")
    (root / "f.txt").write_text(mine)  # the person's own edit, then the turn
    op = Modify("f.txt", [MISSES[2]], content_hash(mine.encode()))
    turn = apply_turn(root, [op], journal=Journal(root))
    asked: list[tuple[str, ...]] = []
    git_ok = base_git.git_ok

    def counting(root: Path, *args: str, **kw: Any) -> Any:
        asked.append(args)
        return git_ok(root, *args, **kw)

    monkeypatch.setattr(base_git, "git_ok", counting)
    plan = plan_commit(root, [turn.turn_id])
    assert plan.mixed == {"f.txt": "held your own uncommitted edits before the turn"}
    assert plan.befores["f.txt"] == OLD.encode()  # HEAD's copy, for the diff
    assert len([a for a in asked if a[:1] == ("cat-file",)]) == 1
