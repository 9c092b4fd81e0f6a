"""Git-aware listing, ignore rules and guarded reads in a real temporary git repo."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from spark_pair.base.errors import UsageError
from spark_pair.workspace import IgnoreRules, find_root, list_files, read_text


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    git(tmp_path, "init", "-q")
    (tmp_path / ".gitignore").write_text("build/\n*.log\n/secret.txt\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("a = 1\n")
    (tmp_path / "src" / "b.py").write_text("b = 1\n")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "out.js").write_text("x")
    (tmp_path / "run.log").write_text("x")
    (tmp_path / "secret.txt").write_text("x")
    (tmp_path / "node_modules").mkdir()
    (tmp_path / "node_modules" / "m.js").write_text("x")
    git(tmp_path, "add", "src/a.py", ".gitignore")
    return tmp_path


def test_root_is_the_git_top_level(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    assert find_root(repo / "src") == repo.resolve()
    plain = tmp_path_factory.mktemp("plain")
    assert find_root(plain) == plain.resolve()


def test_listing_has_tracked_and_untracked_but_not_ignored(repo: Path) -> None:
    assert list_files(repo) == [".gitignore", "src/a.py", "src/b.py"]


def test_listing_without_git_reads_gitignore_roughly(repo: Path) -> None:
    os.rename(repo / ".git", repo / "git-moved")
    (repo / "git-moved" / "keep").write_text("")
    files = [f for f in list_files(repo) if not f.startswith("git-moved/")]
    assert files == [".gitignore", "src/a.py", "src/b.py"]
    rules = IgnoreRules(repo)
    assert rules.is_ignored("build/out.js") and rules.is_ignored("x/y.log")
    assert not rules.is_ignored("src/a.py")


def test_is_ignored_and_its_cache(repo: Path) -> None:
    rules = IgnoreRules(repo)
    assert not rules.is_ignored_cached("run.log")  # unknown yet: the cheap check never runs git
    assert rules.is_ignored_cached(".git/index")
    assert rules.is_ignored("build/out.js")
    assert rules.is_ignored("run.log") and rules.is_ignored_cached("run.log")
    assert rules.is_ignored("secret.txt")
    assert rules.is_ignored(".git/HEAD") and rules.is_ignored("a/__pycache__/m.pyc")
    assert rules.is_ignored(".venv/lib/x.py") and rules.is_ignored("node_modules/m.js")
    assert not rules.is_ignored("src/a.py") and not rules.is_ignored("src/secret.txt")
    assert rules.is_ignored_many(["src/b.py", "z.log", "build/q"]) == {"z.log", "build/q"}
    (repo / ".gitignore").write_text("")
    assert rules.is_ignored("run.log")  # cached until told
    rules.forget()
    assert not rules.is_ignored("run.log")


def test_read_text_guards(repo: Path) -> None:
    assert read_text(repo, "src/a.py") == "a = 1\n"
    assert read_text(repo, "nope.py") is None
    (repo / "img.bin").write_bytes(b"\x89PNG\0\0data")
    with pytest.raises(UsageError, match="binary") as info:
        read_text(repo, "img.bin")
    assert info.value.hint
    (repo / "big.txt").write_text("x" * 200)
    with pytest.raises(UsageError, match="too large"):
        read_text(repo, "big.txt", max_bytes=100)
    with pytest.raises(UsageError, match="directory"):
        read_text(repo, "src")


def test_read_text_refuses_paths_outside_the_repo_and_git(tmp_path):
    import pytest

    from spark_pair.base.errors import PathRefused
    from spark_pair.workspace.files import read_text

    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / ".git" / "config").write_text("[core]\n")
    (tmp_path / "secret.txt").write_text("outside\n")
    (root / "link.txt").symlink_to(tmp_path / "secret.txt")
    (root / "ok.txt").write_text("inside\n")
    assert read_text(root, "ok.txt") == "inside\n"
    for bad in ("../secret.txt", str(tmp_path / "secret.txt"), "link.txt", ".git/config"):
        with pytest.raises(PathRefused):
            read_text(root, bad)
