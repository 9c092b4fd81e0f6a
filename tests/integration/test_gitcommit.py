"""base.gitcommit against the real git binary: any path goes through (spaces, tabs, non-ASCII),
a deleted and a new file are committed, and the person's index then shows them clean while what
they staged elsewhere stays staged; the message's whitespace rule is `git stripspace`'s."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.gitrepo import GIT_ENV, git, identity
from support.runs import make_repo

from spark_pair.base import githooks
from spark_pair.base.errors import CommitError
from spark_pair.base.git import run_git
from spark_pair.base.gitcommit import FileState, commit_files, head, strip_space
from spark_pair.session.commit import plan_commit

LINES = st.lists(st.sampled_from(["", " ", "\t", "Fix it", "  body line  ", "# not a comment",
                                  "x\t", "\r"]), max_size=8)


@pytest.fixture(autouse=True)
def no_machine_config(monkeypatch: pytest.MonkeyPatch) -> None:
    for var, value in GIT_ENV.items():
        monkeypatch.setenv(var, value)


def test_any_path_a_new_and_a_deleted_file(tmp_path: Path) -> None:
    odd = "dir/sp ace\tü.txt"
    root = identity(make_repo(tmp_path / "repo", {"gone.txt": "bye\n", "mine.txt": "one\n"}))
    (root / "dir").mkdir()
    (root / odd).write_text("new\n")
    (root / "gone.txt").unlink()
    (root / "mine.txt").write_text("one\nstaged\n")
    git(root, "add", "mine.txt")
    base = head(root)

    commit = commit_files(root, [FileState(odd, b"new\n", 0o100644),
                                 FileState("gone.txt", None)], "Add a file, drop one\n", base)

    assert head(root) == commit
    names = git(root, "ls-tree", "-r", "-z", "--name-only", "HEAD").split("\0")
    assert sorted(n for n in names if n) == [odd, "mine.txt"]
    assert git(root, "show", "HEAD:mine.txt") == "one\n"
    status = git(root, "status", "--porcelain", "-z").split("\0")
    assert [s for s in status if s] == ["M  mine.txt"]
    assert os.path.exists(root / odd)


@settings(max_examples=40, deadline=None)
@given(LINES)
def test_strip_space_is_git_stripspace(lines: list[str]) -> None:
    text = "\n".join(lines)
    git = subprocess.run(["git", "stripspace"], input=text.encode(), capture_output=True,
                         timeout=10, check=True).stdout.decode()
    assert strip_space(text) == git


def test_with_core_filemode_false_heads_mode_is_kept_as_git_add_keeps_it(tmp_path: Path
                                                                         ) -> None:
    root = identity(make_repo(tmp_path / "repo", {"run.sh": "echo hi\n"}))
    (root / "run.sh").chmod(0o755)
    git(root, "add", "run.sh")
    git(root, "commit", "-qm", "executable")
    git(root, "config", "core.fileMode", "false")
    (root / "run.sh").chmod(0o644)  # the bit is lost on disk; git status is clean
    assert git(root, "status", "--porcelain") == ""
    (root / "run.sh").write_text("echo hello\n")  # the turn's writes
    (root / "new.sh").write_text("echo new\n")

    commit_files(root, [FileState("run.sh", b"echo hello\n", 0o100644),
                        FileState("new.sh", b"echo new\n", 0o100755)], "Say hello\n",
                 head(root))

    modes = git(root, "ls-tree", "HEAD").splitlines()
    assert [m.split()[0] for m in modes] == ["100644", "100755"]  # new.sh, run.sh
    assert git(root, "status", "--porcelain") == ""


def test_a_git_that_does_not_finish_in_time_is_killed_with_all_it_started(tmp_path: Path
                                                                          ) -> None:
    """A signing helper waiting for a passphrase is git's child: on timeout the whole group
    goes, not git alone (the helper would be left reading the person's keys)."""
    pidfile = tmp_path / "helper.pid"
    slow = f"!sh -c 'sleep 30 & echo $! > {pidfile}; wait'"

    assert run_git(tmp_path, "slow", config={"alias.slow": slow}, timeout=1.0) is None

    pid = int(pidfile.read_text())
    end = time.monotonic() + 5
    while time.monotonic() < end and _alive(pid):
        time.sleep(0.05)
    assert not _alive(pid)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _hook(root: Path, name: str, body: str) -> None:
    path = root / ".git" / "hooks" / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)


def _turn(tmp_path: Path) -> tuple[Path, list[FileState]]:
    root = identity(make_repo(tmp_path / "repo", {"a.py": "one\n"}))
    (root / "a.py").write_text("two\n")
    return root, [FileState("a.py", b"two\n", 0o100644)]


def test_a_post_commit_hook_that_times_out_leaves_the_commit_said_and_the_index_synced(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(githooks, "HOOK_TIMEOUT_S", 1.0)
    root, files = _turn(tmp_path)
    _hook(root, "post-commit", "exec sleep 10\n")
    notes: list[str] = []

    commit = commit_files(root, files, "Two\n", head(root), notes)

    assert head(root) == commit
    assert notes == ["the post-commit hook did not finish within 1 s (it was stopped); the "
                     "commit is made"]
    assert git(root, "status", "--porcelain") == ""


@pytest.mark.parametrize("held_s", [0.6, 30.0])
def test_an_index_locked_by_another_git_is_waited_for_then_said_with_the_fix(
        tmp_path: Path, held_s: float) -> None:
    """The other git holds the lock `held_s` s, or (the long one) until the test lets it go
    once the commit has given up waiting."""
    root, files = _turn(tmp_path)
    ticks = round(held_s / 0.05)
    _hook(root, "post-commit", "touch .git/index.lock\n"
                               f"(i=0; while [ ! -e .git/done ] && [ $i -lt {ticks} ]; do "
                               "sleep 0.05; i=$((i+1)); done; rm -f .git/index.lock) "
                               ">/dev/null 2>&1 &\n")
    notes: list[str] = []

    commit = commit_files(root, files, "Two\n", head(root), notes)

    assert head(root) == commit
    if held_s < 1:  # a brief lock: waited for, the index as after `git commit`
        assert notes == [] and git(root, "status", "--porcelain") == ""
        return
    assert len(notes) == 1 and "`git reset -q -- a.py` puts it right" in notes[0]
    (root / ".git" / "done").touch()  # the other git ends
    end = time.monotonic() + 15
    while (root / ".git" / "index.lock").exists() and time.monotonic() < end:
        time.sleep(0.1)
    git(root, "reset", "-q", "--", "a.py")  # the fix the note gives
    assert git(root, "status", "--porcelain") == ""


def test_a_merge_begun_after_the_turn_is_said_without_claiming_nothing_was_written(
        tmp_path: Path) -> None:
    root, _ = _turn(tmp_path)
    (root / ".git" / "MERGE_HEAD").write_text(head(root) + "\n")  # as `git merge` leaves it

    with pytest.raises(CommitError) as refused:
        plan_commit(root, [])

    assert "a merge is in progress" in refused.value.message
    assert "nothing was written" not in refused.value.message
    assert "the files stay as they are" in refused.value.message
