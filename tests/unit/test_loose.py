"""Replies that match only loosely (issue 30): each tolerance in the shape real model diffs take
(re-indented hunks, short @@ counts before the fence, blank lines after a hunk, a revised second
block, an edge context line the file does not have), and a refusal wherever the placement would
be a guess. Real files in a real git repository; every loose hunk says how it was placed."""

from __future__ import annotations

import ast
import subprocess
from pathlib import Path

import pytest
from support.disk import snapshot

from spark_pair.base.errors import ConflictError, IncompleteReply, ParseError, StaleError
from spark_pair.edits.apply import apply_hunks, apply_turn, check_each
from spark_pair.edits.journal import Journal
from spark_pair.edits.ops import loose_hunks
from spark_pair.edits.parser import parse_diff
from spark_pair.edits.placement import Loose, Placement, indent_significant

# a method body, indented 8 in the file
PY = """class Rates:
    def rate(self, kind):
        if kind == "day":
            value = 1
        return value

    def other(self):
        return 2
"""
# the model wrote the method's lines 4 columns short (the class level lost), as in the
# wrong write the issue found: its new `elif`/`else` must land inside the method's `if`
PY_SHORT = """```diff
--- a/rates.py
+++ b/rates.py
@@ -3,3 +3,7 @@
     if kind == "day":
         value = 1
+    elif kind == "week":
+        value = 7
+    else:
+        value = 0
     return value
```
"""
PY_AFTER = """class Rates:
    def rate(self, kind):
        if kind == "day":
            value = 1
        elif kind == "week":
            value = 7
        else:
            value = 0
        return value

    def other(self):
        return 2
"""


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def _apply(repo: Path, files: dict[str, str], reply: str, tmp_path: Path) -> list:
    for name, text in files.items():
        (repo / name).write_text(text)
    ops = parse_diff(reply)
    apply_turn(repo, ops, journal=Journal(repo, tmp_path / "data"))
    return ops


def _refused(repo: Path, files: dict[str, str], reply: str, tmp_path: Path, match: str,
             error: type[Exception] = ConflictError) -> None:
    """The turn is refused with `match` in its message, and nothing on disk changed."""
    for name, text in files.items():
        (repo / name).write_text(text)
    before = snapshot(repo)
    with pytest.raises(error, match=match):
        apply_turn(repo, parse_diff(reply), journal=Journal(repo, tmp_path / "data"))
    assert snapshot(repo) == before


# ---- never write wrong: re-based indentation ---------------------------------------------------

def test_a_hunk_indented_short_has_its_added_lines_re_based(repo: Path, tmp_path: Path) -> None:
    ops = _apply(repo, {"rates.py": PY}, PY_SHORT, tmp_path)
    assert (repo / "rates.py").read_text() == PY_AFTER
    ast.parse(PY_AFTER)
    (placement,) = [p for _, _, p in loose_hunks(ops)]
    assert placement.how == (Loose.REBASED,) and placement.shift == 4 and placement.line == 3
    assert placement.describe() == "re-based by +4 columns"


def _indented(reply: str, by: int) -> str:
    """The reply with every hunk line's text moved `by` columns to the right."""
    out = []
    for ln in reply.splitlines():
        if ln[:1] in (" ", "+", "-") and not ln.startswith(("--- ", "+++ ")) and ln[1:].strip():
            ln = ln[0] + " " * by + ln[1:]
        out.append(ln)
    return "\n".join(out) + "\n"


def test_a_hunk_indented_too_deep_is_re_based_back(repo: Path, tmp_path: Path) -> None:
    ops = _apply(repo, {"rates.py": PY}, _indented(PY_SHORT, 8), tmp_path)
    assert (repo / "rates.py").read_text() == PY_AFTER
    (placement,) = [p for _, _, p in loose_hunks(ops)]
    assert placement.how == (Loose.REBASED,) and placement.shift == -4


def test_an_exact_match_is_not_loose(repo: Path, tmp_path: Path) -> None:
    ops = _apply(repo, {"rates.py": PY}, _indented(PY_SHORT, 4), tmp_path)
    assert (repo / "rates.py").read_text() == PY_AFTER
    assert loose_hunks(ops) == []
    assert ops[0].hunks[0].placement == Placement(3)


# lines matching only with their indentation changed by different amounts: the added lines'
# indentation can not be trusted
MIXED = """--- a/rates.py
+++ b/rates.py
@@ -3,3 +3,5 @@
     if kind == "day":
           value = 1
+    else:
+        value = 0
     return value
"""


def test_an_inconsistent_offset_is_refused_in_python_naming_the_line(
        repo: Path, tmp_path: Path) -> None:
    _refused(repo, {"rates.py": PY}, MIXED, tmp_path, r"only with their indentation changed, "
             r"and not by one amount for every line \(line 3 of the file is indented deeper by "
             r"4 spaces from the reply's line, line 4 deeper by 2 spaces\).*indentation is "
             "meaning")


@pytest.mark.parametrize(("name", "significant"), [
    ("a/b.py", True), ("ci.yml", True), ("conf.YAML", True), ("Makefile", True),
    ("rules.mk", True), ("x.coffee", True), ("Main.hs", True), ("m.nim", True),
    ("GNUmakefile", True), ("a.js", False), ("main.go", False), ("README.md", False),
])
def test_indentation_significant_files_by_name(name: str, significant: bool) -> None:
    assert indent_significant(name) is significant


def test_an_inconsistent_offset_elsewhere_applies_flagged() -> None:
    js = "function f(k) {\n    if (k) {\n        v = 1;\n    }\n    return v;\n}\n"
    reply = ("--- a/f.js\n+++ b/f.js\n@@ -2,3 +2,4 @@\n   if (k) {\n         v = 1;\n"
             "+       w = 2;\n   }\n")
    (hunk,) = parse_diff(reply)[0].hunks
    out = apply_hunks(js, [hunk], "f.js")
    assert out == js.replace("        v = 1;\n", "        v = 1;\n       w = 2;\n")
    assert hunk.placement is not None and hunk.placement.how == (Loose.WHITESPACE,)
    assert hunk.placement.mixed and "kept as written" in hunk.placement.describe()


def test_a_stale_file_is_never_matched_loosely(repo: Path, tmp_path: Path) -> None:
    from spark_pair.edits.ops import content_hash

    (repo / "rates.py").write_text(PY)
    ops = parse_diff(PY_SHORT)
    ops[0].base_hash = content_hash(b"what the model saw\n")
    with pytest.raises(StaleError, match="changed since the request"):
        apply_turn(repo, ops, journal=Journal(repo, tmp_path / "data"))


# ---- apply what is unambiguous -----------------------------------------------------------------

TXT = "".join(f"line {i}\n" for i in range(1, 21))


def test_counts_too_small_before_the_fence_are_recounted(repo: Path, tmp_path: Path) -> None:
    # the shape of 6 % of the replies: the last hunk's @@ counts one hunk short
    reply = ("```diff\n--- a/t.txt\n+++ b/t.txt\n@@ -2,2 +2,2 @@\n line 2\n-line 3\n+LINE 3\n"
             " line 4\n-line 5\n+LINE 5\n```\n")
    ops = _apply(repo, {"t.txt": TXT}, reply, tmp_path)
    assert (repo / "t.txt").read_text() == TXT.replace("line 3\n", "LINE 3\n").replace(
        "line 5\n", "LINE 5\n")
    assert [p.how for _, _, p in loose_hunks(ops)] == [(Loose.RECOUNTED,)]


@pytest.mark.parametrize("tail", ["", "That is all.\n"])
def test_counts_too_small_without_the_fence_are_refused(tail: str) -> None:
    # without a closing fence the lines past the counts may be prose (a list of '- ' items)
    reply = "--- a/t.txt\n+++ b/t.txt\n@@ -2,2 +2,2 @@\n line 2\n-line 3\n+LINE 3\n- a note\n"
    with pytest.raises(ParseError, match="after its @@ line counts were met"):
        parse_diff(reply + tail)


@pytest.mark.parametrize("header, lines", [
    ("@@ -2,3 +2,4 @@", " line 2\n-line 3\n+LINE 3\n line 4\n"),  # the new side one short
    ("@@ -2,4 +2,5 @@", " line 2\n-line 3\n+LINE 3\n line 4\n"),  # one and two short
    ("@@ -2,5 +2,5 @@", " line 2\n-line 3\n+LINE 3\n line 4\n \n"),  # a blank line last
    ("@@ -2,2 +2,2 @@", " line 2\n-line 3\n+LINE 3\n line 4\n-line 5\n+LINE 5\n line 6\n"),
])
def test_a_whole_reply_ending_on_context_is_recounted(header: str, lines: str) -> None:
    # a bare diff (no fence) whose last hunk's counts are off, as models type them: it ends on
    # a context line (which the file must hold) with one side of its counts whole or past
    (hunk,) = parse_diff(f"--- a/t.txt\n+++ b/t.txt\n{header}\n{lines}")[0].hunks
    assert hunk.loose == (Loose.RECOUNTED,)
    assert "LINE 3" in apply_hunks(TXT, [hunk], "t.txt")


@pytest.mark.parametrize("header, lines", [
    ("@@ -2,5 +2,5 @@", " line 2\n-line 3\n+LINE 3\n line 4\n"),  # both 2 short: cut?
    ("@@ -2,3 +2,6 @@", " line 2\n-line 3\n+LINE 3\n line 4\n"),  # three lines short
    ("@@ -2,2 +2,3 @@", " line 2\n-line 3\n+LINE 3\n"),  # ends on an added line
])
def test_a_whole_reply_ending_inside_a_hunk_otherwise_is_refused(header: str, lines: str) -> None:
    with pytest.raises(IncompleteReply, match="the reply ends inside the hunk"):
        parse_diff(f"--- a/t.txt\n+++ b/t.txt\n{header}\n{lines}")


def test_whitespace_lines_after_a_met_hunk_are_not_context(repo: Path, tmp_path: Path) -> None:
    # spaces-only lines then an empty line, then the fence: nothing of the hunk
    reply = ("```diff\n--- a/t.txt\n+++ b/t.txt\n@@ -19,2 +19,2 @@\n line 19\n-line 20\n"
             "+LINE 20\n    \n\t\n\n```\n")
    ops = _apply(repo, {"t.txt": TXT}, reply, tmp_path)
    assert ops[0].hunks[0].lines == [" line 19", "-line 20", "+LINE 20"]
    assert (repo / "t.txt").read_text().endswith("line 19\nLINE 20\n")


def test_blank_lines_between_hunk_lines_stay_context() -> None:
    # what follows the blank run decides: a hunk line, so the blanks were context
    reply = "--- a/t.txt\n+++ b/t.txt\n@@\n a\n\n  \n-b\n+B\n"
    assert parse_diff(reply)[0].hunks[0].lines == [" a", " ", " ", "-b", "+B"]


# a reply that repeats its diff with a change of mind: the second block is written against the
# file as it was, not against the first block's result
REVISED = """Here is the fix:
```diff
--- a/t.txt
+++ b/t.txt
@@ -2,3 +2,3 @@
 line 2
-line 3
+LINE 3
 line 4
@@ -15,3 +15,3 @@
 line 15
-line 16
+LINE 16
 line 17
```
Better, keeping the case:
```diff
--- a/t.txt
+++ b/t.txt
@@ -2,3 +2,3 @@
 line 2
-line 3
+line three
 line 4
```
"""


def test_a_later_block_that_revises_an_earlier_one_supersedes_it(
        repo: Path, tmp_path: Path) -> None:
    (repo / "t.txt").write_text(TXT)
    ops = parse_diff(REVISED)
    turn = apply_turn(repo, ops, journal=Journal(repo, tmp_path / "data"))
    # the revised block replaces the first one whole: the model took all of it back
    assert (repo / "t.txt").read_text() == TXT.replace("line 3\n", "line three\n")
    assert [(i, j, p.how) for i, j, p in loose_hunks(ops)] == [
        (0, 0, (Loose.SUPERSEDED,)), (0, 1, (Loose.SUPERSEDED,)), (1, 0, (Loose.REVISES,))]
    assert any("revises 1 earlier one(s)" in n for n in turn.notes)
    assert ops[0].hunks[0].placement.describe() == "superseded by a later block, not written"


def test_a_repeated_block_is_written_once(repo: Path, tmp_path: Path) -> None:
    block = REVISED.split("Better")[0]
    (repo / "t.txt").write_text(TXT)
    ops = parse_diff(block + "\nAgain:\n" + block)
    turn = apply_turn(repo, ops, journal=Journal(repo, tmp_path / "data"))
    assert (repo / "t.txt").read_text() == TXT.replace("line 3\n", "LINE 3\n").replace(
        "line 16\n", "LINE 16\n")
    assert any("repeats 1 earlier one(s)" in n for n in turn.notes)


def test_a_later_block_that_continues_the_earlier_one_is_applied_after_it(
        repo: Path, tmp_path: Path) -> None:
    second = ("```diff\n--- a/t.txt\n+++ b/t.txt\n@@ -2,3 +2,3 @@\n line 2\n-LINE 3\n"
              "+Line 3\n line 4\n```\n")
    ops = _apply(repo, {"t.txt": TXT}, REVISED.split("Better")[0] + second, tmp_path)
    assert "Line 3\n" in (repo / "t.txt").read_text()
    assert loose_hunks(ops) == []


def test_a_later_block_that_fits_neither_is_refused(repo: Path, tmp_path: Path) -> None:
    second = ("```diff\n--- a/t.txt\n+++ b/t.txt\n@@ -2,3 +2,3 @@\n line 2\n-line three\n"
              "+line 3\n line 4\n```\n")
    reply = REVISED.split("Better")[0] + second
    _refused(repo, {"t.txt": TXT}, reply, tmp_path, "its lines are not in the file")
    assert [i for i, _ in check_each(repo, parse_diff(reply))] == [1]


# an edge context line the file does not have: an invented blank line before the next
# definition, one past the end of the file
EDGE_PY = "import os\n\ndef a():\n    return 1\ndef b():\n    return 2\n"


def test_an_invented_edge_line_is_skipped_when_the_rest_is_unique(
        repo: Path, tmp_path: Path) -> None:
    reply = ("--- a/e.py\n+++ b/e.py\n@@ -3,4 +3,4 @@\n def a():\n-    return 1\n"
             "+    return 10\n \n def b():\n")
    ops = _apply(repo, {"e.py": EDGE_PY}, reply, tmp_path)
    assert (repo / "e.py").read_text() == EDGE_PY.replace("return 1\n", "return 10\n")
    (placement,) = [p for _, _, p in loose_hunks(ops)]
    assert Loose.EDGE in placement.how and placement.skipped == 2 and placement.line == 3


def test_a_blank_line_past_the_end_of_the_file_is_skipped(repo: Path, tmp_path: Path) -> None:
    reply = ("--- a/e.py\n+++ b/e.py\n@@ -5,3 +5,5 @@\n def b():\n     return 2\n"
             "+def c():\n+    return 3\n \n")
    ops = _apply(repo, {"e.py": EDGE_PY}, reply, tmp_path)
    assert (repo / "e.py").read_text() == EDGE_PY + "def c():\n    return 3\n"
    (placement,) = [p for _, _, p in loose_hunks(ops)]
    assert placement.how == (Loose.EDGE,) and placement.skipped == 1


def test_an_edge_line_is_not_skipped_when_the_rest_matches_twice(
        repo: Path, tmp_path: Path) -> None:
    twice = "def a():\n    return 1\n\ndef b():\n    return 1\n"
    reply = ("--- a/e.py\n+++ b/e.py\n@@ -1,2 +1,2 @@\n def c():\n-    return 1\n"
             "+    return 10\n")
    _refused(repo, {"e.py": twice}, reply, tmp_path, r"without its 1 edge context line\(s\) "
             r"they match lines 2 and 5, so it is not placed")


def test_a_wrong_line_inside_the_hunk_is_never_skipped() -> None:
    # only edge context may be left out: a wrong line between changed lines refuses the hunk
    reply = ("--- a/e.py\n+++ b/e.py\n@@\n def a():\n-    return 1\n+    return 10\n"
             " # not in the file\n-def b():\n+def bb():\n")
    with pytest.raises(ConflictError, match="its lines are not in the file"):
        apply_hunks(EDGE_PY, parse_diff(reply)[0].hunks, "e.py")


def test_added_lines_whose_only_neighbour_after_them_is_cut_are_not_placed() -> None:
    # `+ else` after `value = 1`, or before `return value`? The file has lines between them
    text = "if day:\n    value = 1\nelse:\n    value = 2\nreturn value\n"
    reply = "--- a/r.py\n+++ b/r.py\n@@\n if day:\n     value = 1\n+else:\n+    value = 0\n" \
            " return value\n"
    with pytest.raises(ConflictError, match="its lines are not in the file"):
        apply_hunks(text, parse_diff(reply)[0].hunks, "r.py")


def test_hunks_given_out_of_file_order_are_placed_in_order(repo: Path, tmp_path: Path) -> None:
    reply = ("--- a/t.txt\n+++ b/t.txt\n@@ -15,3 +15,3 @@\n line 15\n-line 16\n+LINE 16\n"
             " line 17\n@@ -2,3 +2,3 @@\n line 2\n-line 3\n+LINE 3\n line 4\n")
    ops = _apply(repo, {"t.txt": TXT}, reply, tmp_path)
    assert (repo / "t.txt").read_text() == TXT.replace("line 3\n", "LINE 3\n").replace(
        "line 16\n", "LINE 16\n")
    assert [(j, p.how) for _, j, p in loose_hunks(ops)] == [(0, (Loose.REORDERED,)),
                                                            (1, (Loose.REORDERED,))]


def test_hunks_out_of_order_whose_numbers_mislead_are_refused(
        repo: Path, tmp_path: Path) -> None:
    # in the order of their numbers the second edit's lines come before the first's place
    reply = ("--- a/t.txt\n+++ b/t.txt\n@@ -1,3 +1,3 @@\n line 15\n-line 16\n+LINE 16\n"
             " line 17\n@@ -9,3 +9,3 @@\n line 2\n-line 3\n+LINE 3\n line 4\n")
    _refused(repo, {"t.txt": TXT}, reply, tmp_path, "its lines are not in the file")
