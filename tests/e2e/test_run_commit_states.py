"""`run --apply --commit` in each repository state: a merge or rebase under way and a folder
that is not a repository are refused before anything is written; a detached HEAD, a linked
worktree and a submodule get their commit where git would put it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from support.gitrepo import GIT_ENV, MESSAGE, OTHER, git, identity, replies, watch_one
from support.runs import (
    A_NEW,
    A_PY,
    VALIDATOR,
    check_schema,
    env_for,
    lines_of,
    make_repo,
    run,
)

from spark_pair.base.exitcodes import ExitCode
from spark_pair.sim.process import SimProcess


def commit_run(where: Path, home: Path, sim: SimProcess, *, refused: bool = False
               ) -> tuple[subprocess.CompletedProcess[str], list[dict]]:
    sim.configure(replies=replies())
    proc = run(where, home, sim, "FSTRING please", "-f", "a.py", "--apply", "--commit",
               "--json", env=GIT_ENV)
    lines = lines_of(proc.stdout)
    if refused:  # before the session began: its error and end lines only
        for line in lines:
            VALIDATOR.validate(line)
        assert [ln["type"] for ln in lines] == ["error", "end"]
        assert lines[0]["kind"] == "commit" and lines[1]["commit_note"] == lines[0]["message"]
    else:
        check_schema(lines)
    return proc, lines


def conflict(root: Path) -> None:
    """A branch `side` whose other.txt conflicts with the current branch's."""
    git(root, "checkout", "-qb", "side")
    (root / "other.txt").write_text("side\n")
    git(root, "commit", "-qam", "side")
    git(root, "checkout", "-q", "-")
    (root / "other.txt").write_text("main\n")
    git(root, "commit", "-qam", "main")


@pytest.mark.parametrize("state", ["merge", "rebase"])
def test_a_merge_or_rebase_under_way_is_refused_before_anything_is_written(
        sim: SimProcess, tmp_path: Path, state: str) -> None:
    root = identity(make_repo(tmp_path / "repo", {"a.py": A_PY, "other.txt": OTHER}))
    conflict(root)
    args = ["merge", "side"] if state == "merge" else ["rebase", "side"]
    stuck = subprocess.run(["git", *args], cwd=root, capture_output=True, timeout=30)
    assert stuck.returncode != 0  # the conflict stops it half way
    head = git(root, "rev-parse", "HEAD")

    proc, lines = commit_run(root, tmp_path / "home", sim, refused=True)

    assert proc.returncode == ExitCode.COMMIT, proc.stderr
    assert f"a {state} is in progress" in proc.stderr
    assert f"git {state} --abort" in proc.stderr
    assert (root / "a.py").read_text() == A_PY and git(root, "rev-parse", "HEAD") == head
    assert lines[-1]["exit_name"] == "COMMIT" and lines[-1]["commit"] is None
    assert not sim.requests()  # refused before the request


def test_not_a_repository_is_refused_before_anything_is_written(sim: SimProcess,
                                                                 tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "a.py").write_text(A_PY)

    proc, lines = commit_run(plain, tmp_path / "home", sim, refused=True)

    assert proc.returncode == ExitCode.COMMIT, proc.stderr
    assert "is not in a git repository" in proc.stderr and "git init" in proc.stderr
    assert (plain / "a.py").read_text() == A_PY and not sim.requests()


def test_a_detached_head_gets_its_commit_and_a_note(sim: SimProcess, tmp_path: Path) -> None:
    root = identity(make_repo(tmp_path / "repo", {"a.py": A_PY, "other.txt": OTHER}))
    branch = git(root, "symbolic-ref", "--short", "HEAD").strip()
    tip = git(root, "rev-parse", "HEAD")
    git(root, "checkout", "-q", "--detach")

    proc, lines = commit_run(root, tmp_path / "home", sim)

    assert proc.returncode == 0, proc.stderr
    end = lines[-1]
    assert "HEAD is detached" in end["commit_note"] and "git switch -c" in proc.stderr
    assert git(root, "rev-parse", "HEAD").strip() == end["commit"]
    assert git(root, "rev-parse", branch) == tip  # the branch stays where it was


def test_a_linked_worktree_commits_on_its_own_branch(sim: SimProcess, tmp_path: Path) -> None:
    root = identity(make_repo(tmp_path / "repo", {"a.py": A_PY, "other.txt": OTHER}))
    main_head = git(root, "rev-parse", "HEAD").strip()
    linked = tmp_path / "linked"
    git(root, "worktree", "add", "-q", "-b", "side", str(linked))

    proc, lines = commit_run(linked, tmp_path / "home", sim)

    assert proc.returncode == 0, proc.stderr
    assert git(root, "rev-parse", "side").strip() == lines[-1]["commit"]
    assert git(root, "rev-parse", "HEAD").strip() == main_head
    assert (root / "a.py").read_text() == A_PY and (linked / "a.py").read_text() == A_NEW
    assert git(linked, "status", "--porcelain") == ""


def test_a_submodule_gets_the_commit_and_the_superproject_sees_it(sim: SimProcess,
                                                                  tmp_path: Path) -> None:
    sub = identity(make_repo(tmp_path / "sub", {"a.py": A_PY, "other.txt": OTHER}))
    top = identity(make_repo(tmp_path / "top", {"README": "top\n"}))
    git(top, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub), "sub")
    git(top, "commit", "-qm", "add sub")
    inner = identity(top / "sub")
    top_head = git(top, "rev-parse", "HEAD")

    proc, lines = commit_run(inner, tmp_path / "home", sim)

    assert proc.returncode == 0, proc.stderr
    assert git(inner, "rev-parse", "HEAD").strip() == lines[-1]["commit"]
    assert git(inner, "log", "-1", "--format=%B").strip() == MESSAGE
    assert git(top, "rev-parse", "HEAD") == top_head
    assert git(top, "status", "--porcelain").split() == ["M", "sub"]


def test_a_merge_begun_after_watch_started_refuses_the_turn_before_it_is_written(
        sim: SimProcess, tmp_path: Path) -> None:
    root = identity(make_repo(tmp_path / "repo", {"a.py": A_PY, "other.txt": OTHER}))
    conflict(root)
    commented = A_PY.replace("def greet(name):\n", "def greet(name):\n    # FSTRING AI!\n")
    sim.configure(replies=replies())

    def merge_then_save() -> None:  # a merge stops half way, then the person saves a comment
        stuck = subprocess.run(["git", "merge", "side"], cwd=root, capture_output=True,
                               timeout=30)
        assert stuck.returncode != 0
        (root / "a.py").write_text(commented)

    out, err = watch_one(root, env_for(tmp_path / "home", sim), merge_then_save)
    end = next(ln for ln in lines_of(out) if ln["type"] == "end")
    assert end["exit_name"] == "COMMIT" and end["turn_id"] is None, err
    assert "a merge is in progress" in end["message"] and "nothing was written" in end["message"]
    assert (root / "a.py").read_text() == commented  # the turn was not run
    assert not [r for r in sim.requests() if "FSTRING" in str(r)]
