"""The real-diffs benchmark's own checks (benchmarks/realdiffs_checks.py) catch a wrong write
built here and pass the right one; they need no prepared corpus."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from realdiffs_checks import check, parse  # noqa: E402

ORIGINAL = """\
def pick(ground, gens, r):
    if r:
        if ground in ['Z', 'ZZ']:
            return zz(gens)
        else:
            return qq(gens)

    return None
"""

# the model typed the hunk four columns to the left of the file (as a real reply did)
DIFF = """\
--- a/mod.py
+++ b/mod.py
@@ -3,4 +3,6 @@ def pick(ground, gens, r):
     if ground in ['Z', 'ZZ']:
         return zz(gens)
-    else:
+    elif ground in ['Q', 'QQ']:
         return qq(gens)
+    else:
+        return cc(gens)
"""

# context lines kept the file's columns, the added lines the model's: the new elif and else
# now belong to the outer `if r:`; it compiles and means something else
WRONG = """\
def pick(ground, gens, r):
    if r:
        if ground in ['Z', 'ZZ']:
            return zz(gens)
    elif ground in ['Q', 'QQ']:
            return qq(gens)
    else:
        return cc(gens)

    return None
"""

RIGHT = """\
def pick(ground, gens, r):
    if r:
        if ground in ['Z', 'ZZ']:
            return zz(gens)
        elif ground in ['Q', 'QQ']:
            return qq(gens)
        else:
            return cc(gens)

    return None
"""


def verdict(result: str, diff: str = DIFF, original: str = ORIGINAL):
    return check(original, result, parse(diff)["mod.py"])


def test_the_reindented_elif_that_moved_to_the_outer_if_is_a_wrong_write():
    compile(WRONG, "mod.py", "exec")  # it compiles: only the indentation check can tell
    v = verdict(WRONG)
    assert v.wrong
    assert any("added lines were shifted 0 columns but its context +4 columns" in p
               for p in v.problems), v.problems


def test_the_hunk_rebased_by_the_same_offset_as_its_context_is_right():
    v = verdict(RIGHT)
    assert not v.wrong, v.problems
    assert v.loose  # placed with whitespace normalised: the added lines moved with the hunk


def test_a_diff_applied_as_typed_is_right_and_exact():
    head, body = DIFF.split("@@ -3,4 +3,6 @@ def pick(ground, gens, r):\n")
    at_file = "".join(ln[0] + "    " + ln[1:] for ln in body.splitlines(keepends=True))
    v = verdict(RIGHT, head + "@@ -3,4 +3,6 @@\n" + at_file)
    assert not v.wrong and not v.loose, v.problems


def test_a_hunk_written_at_the_wrong_place_fails_placement():
    misplaced = RIGHT.replace("    return None\n", "    return None\n    else:\n")
    v = verdict(misplaced)
    assert any("other lines than the diff's" in p for p in v.problems), v.problems
    elsewhere = ORIGINAL.replace("    return None\n",
                                 "    elif ground in ['Q', 'QQ']:\n    else:\n"
                                 "        return cc(gens)\n    return None\n").replace(
        "        else:\n            return qq", "            return qq")
    v = verdict(elsewhere)
    assert any("not a run in the result" in p or "not next to its context" in p
               for p in v.problems), v.problems


def test_a_result_that_no_longer_compiles_is_flagged():
    broken = RIGHT.replace("        else:\n            return cc",
                           "      else:\n            return cc")
    v = verdict(broken)
    assert any("does not compile" in p for p in v.problems), v.problems


def test_a_file_the_checks_do_not_treat_as_indentation_significant_skips_that_check():
    diff = DIFF.replace("mod.py", "notes.txt")
    v = check(ORIGINAL, WRONG, parse(diff)["notes.txt"])
    assert not any("shifted" in p for p in v.problems)


TWINS = "".join(f"def {name}():\n    x = 1\n    return x\n\n\n" for name in "abcdefgh")
TWIN_DIFF = """\
--- a/twins.py
+++ b/twins.py
@@ -1,3 +1,4 @@
 def a():
     x = 1
+    y = 2
     return x
"""


def test_the_right_lines_next_to_the_right_context_but_in_the_wrong_function_are_wrong():
    fd = parse(TWIN_DIFF)["twins.py"]
    right = TWINS.replace("x = 1\n", "x = 1\n    y = 2\n", 1)
    assert not check(TWINS, right, fd).wrong
    at_g = TWINS.replace("def g():\n    x = 1\n", "def g():\n    x = 1\n    y = 2\n")
    v = check(TWINS, at_g, fd)
    assert any("where no hunk belongs" in p for p in v.problems), v.problems
