"""What a hunk's @@ line and indentation messages say (issue 30 audit, findings 8 and 9): a
zero start on a hunk that keeps lines names no position, and an indentation refusal says the
true numbers. Real files in a real git repository."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from support.disk import snapshot

from spark_pair.base.errors import ConflictError
from spark_pair.edits.apply import apply_turn
from spark_pair.edits.journal import Journal
from spark_pair.edits.parser import parse_diff

TWINS = "a = 0\nfoo()\nbar()\nb = 1\nfoo()\nbar()\nc = 2\n"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def _refused(repo: Path, name: str, text: str, reply: str, tmp_path: Path, match: str) -> str:
    (repo / name).write_text(text)
    before = snapshot(repo)
    with pytest.raises(ConflictError, match=match) as info:
        apply_turn(repo, parse_diff(reply), journal=Journal(repo, tmp_path / "data"))
    assert snapshot(repo) == before
    return info.value.message


def test_a_zero_start_on_a_hunk_that_keeps_lines_gives_no_position(
        repo: Path, tmp_path: Path) -> None:
    reply = "```diff\n--- a/r.txt\n+++ b/r.txt\n@@ -0,0 +0,0 @@\n foo()\n-bar()\n+baz()\n```\n"
    _refused(repo, "r.txt", TWINS, reply, tmp_path, r"matches 2 places \(lines 2, 5\) and "
             "gives no position")


def test_a_zero_start_insertion_still_goes_first(repo: Path, tmp_path: Path) -> None:
    (repo / "r.txt").write_text(TWINS)
    reply = "```diff\n--- a/r.txt\n+++ b/r.txt\n@@ -0,0 +1,1 @@\n+# top\n```\n"
    apply_turn(repo, parse_diff(reply), journal=Journal(repo, tmp_path / "data"))
    assert (repo / "r.txt").read_text() == "# top\n" + TWINS
