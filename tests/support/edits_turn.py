"""One reply applied to real files in a real git repository, for the edits engine's tests."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from spark_pair.base.errors import ConflictError
from spark_pair.edits.apply import AppliedTurn, apply_turn
from spark_pair.edits.journal import Journal
from spark_pair.edits.ops import Operation
from spark_pair.edits.parser import parse_diff

from .disk import snapshot


def new_repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def applied(repo: Path, name: str, text: str, reply: str,
            tmp_path: Path) -> tuple[list[Operation], AppliedTurn]:
    """The reply's operations (placements set) and the turn, `name` holding `text` first."""
    (repo / name).write_text(text)
    ops = parse_diff(reply)
    return ops, apply_turn(repo, ops, journal=Journal(repo, tmp_path / "data"))


def refused(repo: Path, name: str, text: str, reply: str, tmp_path: Path, match: str) -> str:
    """The conflict's message; the turn is refused with `match` in it and nothing changed."""
    (repo / name).write_text(text)
    before = snapshot(repo)
    with pytest.raises(ConflictError, match=match) as info:
        apply_turn(repo, parse_diff(reply), journal=Journal(repo, tmp_path / "data"))
    assert snapshot(repo) == before
    return info.value.message
