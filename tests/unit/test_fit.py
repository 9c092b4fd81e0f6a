"""What the review leaves out at once: operations (or hunks) that can not be applied to the
files as they are, checked on real files."""

from __future__ import annotations

from pathlib import Path

from spark_pair.edits.parser import parse_diff
from spark_pair.ui.fit import WHOLE, unfit, unfit_all

OLD = "".join(f"line {n}\n" for n in range(1, 31))

TWO_HUNKS = """--- a/f.txt
+++ b/f.txt
@@ -2,3 +2,3 @@
 line 2
-line 3
+line three
 line 4
@@ -20,3 +20,3 @@
 line 20
-line 21
+line twenty-one
 line 22
"""


def test_a_modify_that_fits_has_no_problem(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text(OLD)
    assert unfit(tmp_path, parse_diff(TWO_HUNKS)[0]) == {}


def test_only_the_hunk_whose_lines_are_gone_is_left_out(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text(OLD.replace("line 3\n", "line 3 (mine)\n"))
    problems = unfit(tmp_path, parse_diff(TWO_HUNKS)[0])
    assert list(problems) == [0]
    # the row names the hunk itself; the reason names its line that is nowhere in the file
    assert problems[0] == ('its lines are not in the file; line 2 of the hunk (line 3 by its @@ '
                           'line) is nowhere in the file: "line 3"')


def test_a_modify_none_of_whose_hunks_fits_is_left_out_whole(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text(OLD.replace("line 3\n", "x\n").replace("line 21\n", "y\n"))
    assert unfit(tmp_path, parse_diff(TWO_HUNKS)[0]) == {
        WHOLE: 'none of its 2 hunks fits the file (the first: its lines are not in the file; '
               'line 2 of the hunk (line 3 by its @@ line) is nowhere in the file: "line 3")'}


def test_a_create_of_a_file_that_exists_and_a_missing_target(tmp_path: Path) -> None:
    (tmp_path / "new.txt").write_text("mine\n")
    ops = parse_diff("--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+theirs\n"
                     "--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-old\n"
                     "--- /dev/null\n+++ b/fine.txt\n@@ -0,0 +1 @@\n+ok\n")
    found = unfit_all(tmp_path, list(enumerate(ops)))
    assert [(i, sorted(p, key=str)) for i, _, p in found] == [(0, [WHOLE]), (1, [WHOLE])]
    assert "already exists" in found[0][2][WHOLE]
    assert "does not exist" in found[1][2][WHOLE]
    assert not (tmp_path / "fine.txt").exists()  # a check writes nothing
