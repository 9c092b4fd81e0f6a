"""The real-diffs benchmark's judge (issue 30 audit, finding 10): a result only the union of
two blocks that revise each other explains is a wrong write, spacing inside a line counts,
and the indentation checks know a script by its `#!` line. No prepared corpus needed."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from bench_realdiffs import judge  # noqa: E402
from realdiffs_checks import check, parse, python, significant  # noqa: E402
from realdiffs_tools import Outcome  # noqa: E402

SRC = "def grow(n):\n    n = n + 1\n    return n\n"


def _block(added: str) -> str:
    return ("```diff\n--- a/grow.py\n+++ b/grow.py\n@@ -1,2 +1,3 @@\n def grow(n):\n"
            f"     n = n + 1\n+{added}\n```\n")


def _judge(tmp_path: Path, text: str, result: str) -> list[str]:
    (tmp_path / "grow.py").write_text(SRC)
    problems, _ = judge(tmp_path, text, Outcome(True, {"grow.py": result.encode()}))
    return problems


REVISED = _block("    n = n * 2") + "\nNo, triple it:\n" + _block("    n = n * 3")


def test_both_revisions_written_is_a_wrong_write(tmp_path: Path) -> None:
    both = "def grow(n):\n    n = n + 1\n    n = n * 3\n    n = n * 2\n    return n\n"
    assert _judge(tmp_path, REVISED, both)


def test_the_revision_alone_is_right(tmp_path: Path) -> None:
    assert _judge(tmp_path, REVISED, SRC.replace("1\n", "1\n    n = n * 3\n", 1)) == []


def test_a_repeated_block_written_twice_is_a_wrong_write(tmp_path: Path) -> None:
    twice = _block("    n = n * 2") + "\nAgain:\n" + _block("    n = n * 2")
    doubled = SRC.replace("1\n", "1\n    n = n * 2\n    n = n * 2\n", 1)
    assert _judge(tmp_path, twice, doubled)
    assert _judge(tmp_path, twice, SRC.replace("1\n", "1\n    n = n * 2\n", 1)) == []


def test_spacing_inside_a_line_is_a_change(tmp_path: Path) -> None:
    original = 's = "a  b"\nt = 1\n'
    diff = '--- a/s.py\n+++ b/s.py\n@@ -1,2 +1,2 @@\n-s = "a b"\n+s = "a b"  # tidy\n t = 1\n'
    verdict = check(original, 's = "a b"  # tidy\nt = 1\n', parse(diff)["s.py"])
    assert verdict.wrong


def test_a_script_is_known_by_its_shebang() -> None:
    assert significant("deploy", "#!/usr/bin/env python3\nimport sys\n")
    assert python("deploy", "#!/usr/bin/python3 -u\n")
    assert significant("ci.cabal") and significant("Procfile")
    assert not significant("run", "#!/bin/sh\n") and not python("run", "#!/bin/sh\n")
