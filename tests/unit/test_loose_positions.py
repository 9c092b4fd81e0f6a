"""What a hunk's @@ line and indentation messages say (issue 30 audit, findings 8 and 9): a
zero start on a hunk that keeps lines names no position, and an indentation refusal says the
true numbers. Real files in a real git repository."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.edits_turn import new_repo, refused

from spark_pair.edits.apply import apply_turn
from spark_pair.edits.journal import Journal
from spark_pair.edits.parser import parse_diff

TWINS = "a = 0\nfoo()\nbar()\nb = 1\nfoo()\nbar()\nc = 2\n"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return new_repo(tmp_path)


def test_a_zero_start_on_a_hunk_that_keeps_lines_gives_no_position(
        repo: Path, tmp_path: Path) -> None:
    reply = "```diff\n--- a/r.txt\n+++ b/r.txt\n@@ -0,0 +0,0 @@\n foo()\n-bar()\n+baz()\n```\n"
    refused(repo, "r.txt", TWINS, reply, tmp_path, r"matches 2 places \(lines 2, 5\) and "
             "gives no position")


def test_a_zero_start_insertion_still_goes_first(repo: Path, tmp_path: Path) -> None:
    (repo / "r.txt").write_text(TWINS)
    reply = "```diff\n--- a/r.txt\n+++ b/r.txt\n@@ -0,0 +1,1 @@\n+# top\n```\n"
    apply_turn(repo, parse_diff(reply), journal=Journal(repo, tmp_path / "data"))
    assert (repo / "r.txt").read_text() == "# top\n" + TWINS


def test_tabs_in_the_file_and_spaces_in_the_reply_are_named(repo: Path, tmp_path: Path) -> None:
    text = "def f(x):\n\ty = 1\n\tz = 2\n\treturn y + z\n"
    reply = ("```diff\n--- a/t.py\n+++ b/t.py\n@@ -2,3 +2,4 @@\n     y = 1\n     z = 2\n"
             "+    w = 3\n     return y + z\n```\n")
    message = refused(repo, "t.py", text, reply, tmp_path, "tabs in the file, spaces in the "
                       "reply; the file indents line 2 by 1 tab, the reply by 4 spaces")
    assert "columns" not in message


def test_an_over_indented_reply_with_a_shallow_added_line_says_the_true_amounts(
        repo: Path, tmp_path: Path) -> None:
    text = "def f():\n    x = 1\n    y = 2\nz = 3\n"
    reply = ("```diff\n--- a/n.py\n+++ b/n.py\n@@ -2,2 +2,3 @@\n             x = 1\n"
             "             y = 2\n+    w = 4\n```\n")
    refused(repo, "n.py", text, reply, tmp_path, "indented 8 spaces deeper than the file's, "
             "but its added line 'w = 4' by only 4 spaces")


def test_two_different_offsets_are_both_said(repo: Path, tmp_path: Path) -> None:
    text = ("jobs:\n  build:\n    steps:\n      - run: make\n      - run: test\n  lint:\n"
            "    steps:\n      - run: lint\n")
    reply = ("```diff\n--- a/ci.yml\n+++ b/ci.yml\n@@ -2,4 +2,5 @@\n build:\n     steps:\n"
             "     - run: make\n+    - run: docs\n     - run: test\n```\n")
    refused(repo, "ci.yml", text, reply, tmp_path, "line 2 of the file is indented deeper by "
             "2 spaces from the reply's line, line 3 the same")
