"""A diff block sent twice, revised, or a hunk repeated inside one block (issue 30 audit,
findings 1 and 3): what the model meant is written once, never both copies. Real files in a
real git repository."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.edits_turn import applied, new_repo, refused

from spark_pair.edits.ops import loose_hunks
from spark_pair.edits.placement import Loose

SRC = "def grow(n):\n    n = n + 1\n    return n\n"


def _block(added: str) -> str:
    return ("```diff\n--- a/grow.py\n+++ b/grow.py\n@@ -1,2 +1,3 @@\n def grow(n):\n"
            f"     n = n + 1\n+{added}\n```\n")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return new_repo(tmp_path)


def test_a_revised_insertion_replaces_the_first_instead_of_joining_it(
        repo: Path, tmp_path: Path) -> None:
    reply = ("Here it is:\n" + _block("    n = n * 2") + "\nNo, triple it:\n"
             + _block("    n = n * 3"))
    ops, turn = applied(repo, "grow.py", SRC, reply, tmp_path)
    assert (repo / "grow.py").read_text() == (
        "def grow(n):\n    n = n + 1\n    n = n * 3\n    return n\n")
    assert [(i, p.how) for i, _, p in loose_hunks(ops)] == [
        (0, (Loose.SUPERSEDED,)), (1, (Loose.REVISES,))]
    assert any("revises 1 earlier one(s)" in n for n in turn.notes)


def test_the_same_insertion_block_twice_is_written_once(repo: Path, tmp_path: Path) -> None:
    reply = _block("    n = n * 2") + "\nThe whole diff again:\n" + _block("    n = n * 2")
    _, turn = applied(repo, "grow.py", SRC, reply, tmp_path)
    assert (repo / "grow.py").read_text() == (
        "def grow(n):\n    n = n + 1\n    n = n * 2\n    return n\n")
    assert any("repeats 1 earlier one(s)" in n for n in turn.notes)


def test_an_append_at_the_end_sent_twice_is_written_once(repo: Path, tmp_path: Path) -> None:
    text = "import os\n\n\ndef here():\n    return os.getcwd()\n"
    block = ("```diff\n--- a/m.py\n+++ b/m.py\n@@ -4,2 +4,5 @@\n def here():\n"
             "     return os.getcwd()\n+\n+\n+def two():\n+    return 2\n```\n")
    _, turn = applied(repo, "m.py", text, block + "\nFull diff:\n" + block, tmp_path)
    assert (repo / "m.py").read_text() == text + "\n\ndef two():\n    return 2\n"
    assert any("repeats" in n for n in turn.notes)


def test_blocks_for_different_places_are_both_written(repo: Path, tmp_path: Path) -> None:
    text = "".join(f"line {i}\n" for i in range(1, 21))
    first = ("```diff\n--- a/t.txt\n+++ b/t.txt\n@@ -2,3 +2,3 @@\n line 2\n-line 3\n+LINE 3\n"
             " line 4\n```\n")
    second = ("```diff\n--- a/t.txt\n+++ b/t.txt\n@@ -15,2 +15,3 @@\n line 15\n+new\n"
              " line 16\n```\n")
    ops, turn = applied(repo, "t.txt", text, first + second, tmp_path)
    assert (repo / "t.txt").read_text() == text.replace("line 3\n", "LINE 3\n").replace(
        "line 15\n", "line 15\nnew\n")
    assert loose_hunks(ops) == [] and not any("earlier one" in n for n in turn.notes)


TWINS = "a = 0\nfoo()\nbar()\nb = 1\nfoo()\nbar()\nc = 2\n"
HUNK = "@@ -2,2 +2,3 @@\n foo()\n bar()\n+baz()\n"


def test_the_same_hunk_twice_in_one_block_lands_once(repo: Path, tmp_path: Path) -> None:
    reply = "```diff\n--- a/r.txt\n+++ b/r.txt\n" + HUNK + HUNK + "```\n"
    ops, turn = applied(repo, "r.txt", TWINS, reply, tmp_path)
    assert (repo / "r.txt").read_text() == TWINS.replace("bar()\nb", "bar()\nbaz()\nb")
    assert [(j, p.how, p.line) for _, j, p in loose_hunks(ops)] == [
        (1, (Loose.REPEATED,), None)]
    assert any("repeat an earlier hunk" in n for n in turn.notes)


def test_one_hunk_named_at_two_places_goes_to_both(repo: Path, tmp_path: Path) -> None:
    second = HUNK.replace("-2,2 +2,3", "-5,2 +6,3")
    reply = "```diff\n--- a/r.txt\n+++ b/r.txt\n" + HUNK + second + "```\n"
    ops, _ = applied(repo, "r.txt", TWINS, reply, tmp_path)
    assert (repo / "r.txt").read_text() == TWINS.replace("bar()\n", "bar()\nbaz()\n")
    assert loose_hunks(ops) == []


def test_a_later_block_adding_at_the_edge_of_an_earlier_change_is_refused_as_ambiguous(
        repo: Path, tmp_path: Path) -> None:
    # the second block adds before `line 4` with context on one side only: it fits the file
    # as it was and as the first block left it, and may take back LINE 3 or go with it
    text = "".join(f"line {i}\n" for i in range(1, 9))
    first = ("```diff\n--- a/t.txt\n+++ b/t.txt\n@@ -2,3 +2,3 @@\n line 2\n-line 3\n+LINE 3\n"
             " line 4\n```\n")
    second = "```diff\n--- a/t.txt\n+++ b/t.txt\n@@ -4,2 +4,3 @@\n+extra\n line 4\n line 5\n```\n"
    refused(repo, "t.txt", text, first + second, tmp_path, "cannot be told")


def test_an_insertion_next_to_an_earlier_change_without_touching_it_goes_with_it(
        repo: Path, tmp_path: Path) -> None:
    text = "".join(f"line {i}\n" for i in range(1, 9))
    first = ("```diff\n--- a/t.txt\n+++ b/t.txt\n@@ -2,3 +2,3 @@\n line 2\n-line 3\n+LINE 3\n"
             " line 4\n```\n")
    second = "```diff\n--- a/t.txt\n+++ b/t.txt\n@@ -4,2 +4,3 @@\n line 4\n+extra\n line 5\n```\n"
    applied(repo, "t.txt", text, first + second, tmp_path)
    assert (repo / "t.txt").read_text() == text.replace("line 3\n", "LINE 3\n").replace(
        "line 4\n", "line 4\nextra\n")
