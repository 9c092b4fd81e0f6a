"""Loose matching never changes what the file says (issue 30 audit, findings 4, 5, 6): spacing
inside a line is never forgiven, a Python script known by its `#!` line is
indentation-significant, and a Python file that compiled still compiles after a loose
placement, else the hunk is refused naming the line. Real files in a real git repository."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.edits_turn import new_repo, refused

from spark_pair.edits.apply import apply_turn
from spark_pair.edits.journal import Journal
from spark_pair.edits.ops import loose_hunks
from spark_pair.edits.parser import parse_diff
from spark_pair.edits.placement import indent_significant, is_python


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return new_repo(tmp_path)


def test_spacing_inside_a_line_is_never_matched_loosely(repo: Path, tmp_path: Path) -> None:
    # the file's string holds two spaces; the reply's -/+ pair keeps the string as it read it
    text = 'label = "left  right"\ncount = 1\n'
    reply = ('```diff\n--- a/s.py\n+++ b/s.py\n@@ -1,2 +1,2 @@\n-label = "left right"\n'
             '+label = "left right"  # tidy\n count = 1\n```\n')
    refused(repo, "s.py", text, reply, tmp_path, "its lines are not in the file")


def test_outer_spacing_is_still_forgiven(repo: Path, tmp_path: Path) -> None:
    text = "def f():\n    total  = 1\n    return total\n"
    reply = ("```diff\n--- a/s.py\n+++ b/s.py\n@@ -2,2 +2,2 @@\n-total  = 1  \n+total  = 2\n"
             " return total\n```\n")
    (repo / "s.py").write_text(text)
    ops = parse_diff(reply)
    apply_turn(repo, ops, journal=Journal(repo, tmp_path / "data"))
    assert (repo / "s.py").read_text() == "def f():\n    total  = 2\n    return total\n"
    assert [p.shift for _, _, p in loose_hunks(ops)] == [4]


SCRIPT = ("#!/usr/bin/env python3\nimport sys\n\n\ndef main(args):\n    for a in args:\n"
          "        if a:\n            print(a)\n    return 0\n")


def test_a_python_script_known_by_its_shebang_refuses_uneven_indentation(
        repo: Path, tmp_path: Path) -> None:
    reply = ("```diff\n--- a/deploy\n+++ b/deploy\n@@ -6,4 +6,6 @@\n for a in args:\n"
             "     if a:\n           print(a)\n+    else:\n+        print(\"empty\")\n"
             " return 0\n```\n")
    refused(repo, "deploy", SCRIPT, reply, tmp_path, "indentation is meaning")


@pytest.mark.parametrize(("first", "significant", "python"), [
    ("#!/usr/bin/env python3", True, True), ("#!/usr/bin/python3.12 -u", True, True),
    ("#!/usr/bin/env -S python3 -u", True, True), ("#!/usr/bin/make -f", True, False),
    ("#!/bin/sh", False, False), ("#!/usr/bin/env bash", False, False),
    ("# python notes", False, False)])
def test_the_shebang_names_the_language(first: str, significant: bool, python: bool) -> None:
    assert indent_significant("bin/tool", first) is significant
    assert is_python("bin/tool", first) is python


HANDLER = """class Handler:
    def handle(self, x):
        if x > 0:
            if x > 10:
                return "big"
            return "small"
        return "neg"
"""


def test_a_re_based_hunk_that_breaks_python_is_refused_naming_the_line(
        repo: Path, tmp_path: Path) -> None:
    # the model's own lines are one column off: every context line 5 short, its `elif` 4
    # short, so re-basing by +5 would put the elif at column 13
    reply = ("```diff\n--- a/h.py\n+++ b/h.py\n@@ -3,4 +3,6 @@\n    if x > 0:\n"
             "        if x > 10:\n            return \"big\"\n+        elif x > 5:\n"
             "+            return \"mid\"\n        return \"small\"\n```\n")
    message = refused(repo, "h.py", HANDLER, reply, tmp_path, "does not compile: line 6")
    assert "re-based by +5 columns" in message and "compiled before" in message


def test_a_file_that_did_not_compile_before_is_not_judged(repo: Path, tmp_path: Path) -> None:
    broken = HANDLER + "def oops(:\n"
    reply = ("```diff\n--- a/h.py\n+++ b/h.py\n@@ -3,4 +3,6 @@\n    if x > 0:\n"
             "        if x > 10:\n            return \"big\"\n+        elif x > 5:\n"
             "+            return \"mid\"\n        return \"small\"\n```\n")
    (repo / "h.py").write_text(broken)
    apply_turn(repo, parse_diff(reply), journal=Journal(repo, tmp_path / "data"))
    assert "             elif x > 5:\n" in (repo / "h.py").read_text()
