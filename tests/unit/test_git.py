"""spark_pair.base.git: the one place that runs git."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import spark_pair
from spark_pair.base.git import git_ok, run_git


def test_git_answers_in_a_repo_and_says_none_outside(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    top = git_ok(repo, "rev-parse", "--show-toplevel")
    assert top is not None and Path(top.decode().strip()).resolve() == repo.resolve()
    plain = tmp_path / "plain"
    plain.mkdir()
    assert git_ok(plain, "rev-parse", "--show-toplevel", config={"safe.directory": "*"}) is None
    res = run_git(plain, "rev-parse", "--show-toplevel")
    assert res is not None and res.returncode != 0  # git ran and said no


def test_git_missing_or_a_missing_folder_is_none_never_an_exception(tmp_path: Path) -> None:
    assert run_git(tmp_path / "gone", "status") is None


def test_no_other_module_spawns_git() -> None:
    root = Path(spark_pair.__file__).parent
    spawns = re.compile(r"""\[\s*["']git["']""")  # an argv list starting with "git"
    offenders = [str(p.relative_to(root)) for p in root.rglob("*.py")
                 if p.name != "git.py" and spawns.search(p.read_text())]
    assert offenders == []
