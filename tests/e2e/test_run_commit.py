"""`spark-pair run --apply --commit` against the real git binary: the commit holds exactly the
turn, the person's index and other changes stay as they were, their hooks and signing are used,
a commit made meanwhile is never overwritten, and each repository state works or is refused
before anything is written."""

from __future__ import annotations

import json
import os
import selectors
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest
from support.gitrepo import GIT_ENV, MESSAGE, OTHER, git, identity, replies, watch_one
from support.runs import A_DIFF, A_NEW, A_PY, check_schema, cli, env_for, lines_of, make_repo, run

from spark_pair.base.exitcodes import ExitCode
from spark_pair.sim.process import SimProcess


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return identity(make_repo(tmp_path / "repo", {"a.py": A_PY, "other.txt": OTHER}))


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def commit_run(repo: Path, home: Path, sim: SimProcess, *more: str
               ) -> tuple[subprocess.CompletedProcess[str], list[dict]]:
    proc = run(repo, home, sim, "FSTRING please", "-f", "a.py", "--apply", "--commit",
               "--json", *more, env=GIT_ENV)
    lines = lines_of(proc.stdout)
    check_schema(lines)
    return proc, lines


def test_the_commit_holds_exactly_the_turn_and_the_persons_index_stays(
        sim: SimProcess, repo: Path, home: Path) -> None:
    sim.configure(replies=replies(MESSAGE + "\nCo-authored-by: A Model <m@x.invalid>"))
    (repo / "other.txt").write_text(OTHER + "staged\n")
    git(repo, "add", "other.txt")
    (repo / "other.txt").write_text(OTHER + "staged\nunstaged\n")
    (repo / "notes.txt").write_text("untracked\n")
    index_before = git(repo, "ls-files", "-s", "other.txt")
    base = git(repo, "rev-parse", "HEAD").strip()

    proc, lines = commit_run(repo, home, sim)

    assert proc.returncode == 0, proc.stderr
    end = lines[-1]
    assert end["status"] == "applied" and end["commit"] and end["commit_note"] is None
    assert git(repo, "rev-parse", "HEAD").strip() == end["commit"]
    assert git(repo, "rev-parse", "HEAD^").strip() == base
    assert git(repo, "diff-tree", "--no-commit-id", "--name-only", "-r", "HEAD").split() == [
        "a.py"]
    assert git(repo, "show", "HEAD:a.py") == A_NEW
    assert git(repo, "log", "-1", "--format=%B").strip() == MESSAGE  # no trailer came in
    assert git(repo, "log", "-1", "--format=%an <%ae>|%cn").strip() == (
        "Pat Person <pat@example.invalid>|Pat Person")
    # the person's staged and unstaged change and untracked file are as they were
    assert git(repo, "ls-files", "-s", "other.txt") == index_before
    assert (repo / "other.txt").read_text() == OTHER + "staged\nunstaged\n"
    assert (repo / "notes.txt").read_text() == "untracked\n"
    assert git(repo, "status", "--porcelain").splitlines() == ["MM other.txt", "?? notes.txt"]
    assert "committed " + end["commit"][:12] in proc.stderr
    asked = [r for r in sim.requests() if "Write the commit message" in str(r)]
    assert len(asked) == 1 and "+    return f'hello {name}'" in str(asked[0])


def test_a_trailer_only_when_configured_and_the_template_when_the_model_has_no_message(
        sim: SimProcess, repo: Path, home: Path) -> None:
    (repo / ".spark-pair.toml").write_text('[git]\ntrailer = "Assisted-by: spark-pair"\n')
    git(repo, "add", ".spark-pair.toml")
    git(repo, "commit", "-qm", "config")
    sim.configure(replies=replies("```\n```"))

    proc, lines = commit_run(repo, home, sim)

    assert proc.returncode == 0, proc.stderr
    assert "plain template" in proc.stderr
    assert git(repo, "log", "-1", "--format=%B").strip() == (
        "Update a.py\n\nAsked: FSTRING please\n\nAssisted-by: spark-pair")


def test_a_file_holding_the_persons_own_edits_is_refused_with_how_to_commit_by_hand(
        sim: SimProcess, repo: Path, home: Path) -> None:
    sim.configure(replies=replies())
    mine = A_PY.replace("def unused():", "def unused():  # mine")
    (repo / "a.py").write_text(mine)
    base = git(repo, "rev-parse", "HEAD").strip()

    proc, lines = commit_run(repo, home, sim)

    assert proc.returncode == ExitCode.COMMIT, proc.stderr
    assert git(repo, "rev-parse", "HEAD").strip() == base
    assert (repo / "a.py").read_text() == A_NEW.replace("def unused():",
                                                        "def unused():  # mine")
    end = lines[-1]
    assert end["status"] == "applied" and end["commit"] is None
    assert "a.py (held your own uncommitted edits before the turn)" in end["commit_note"]
    assert "git add -p -- a.py" in proc.stderr
    assert not [r for r in sim.requests() if "Write the commit message" in str(r)]


def test_a_refusing_pre_commit_hook_sees_only_the_turn_and_leaves_it_applied(
        sim: SimProcess, repo: Path, home: Path) -> None:
    sim.configure(replies=replies())
    (repo / "other.txt").write_text("staged by me\n")
    git(repo, "add", "other.txt")
    seen = repo.parent / "seen.txt"
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\ngit diff --cached --name-only > " + str(seen) + "\n"
                    "echo 'checking style'\necho 'a.py:2: E501 line too long' >&2\nexit 3\n")
    hook.chmod(0o755)
    base = git(repo, "rev-parse", "HEAD").strip()

    proc, lines = commit_run(repo, home, sim)

    assert proc.returncode == ExitCode.COMMIT, proc.stderr
    assert seen.read_text().split() == ["a.py"]  # the separate index, not the person's
    assert git(repo, "rev-parse", "HEAD").strip() == base
    assert (repo / "a.py").read_text() == A_NEW  # the turn stays applied
    assert git(repo, "diff", "--cached", "--name-only").split() == ["other.txt"]
    assert "the pre-commit hook refused the commit (exit 3)" in proc.stderr
    assert "a.py:2: E501 line too long" in proc.stderr
    errors = [ln for ln in lines if ln["type"] == "error"]
    assert errors and errors[-1]["kind"] == "commit"
    assert lines[-1]["exit_name"] == "COMMIT" and lines[-1]["commit"] is None


def test_ssh_signing_follows_the_persons_config(sim: SimProcess, repo: Path, home: Path,
                                                tmp_path: Path) -> None:
    key = tmp_path / "signing_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "pat@example.invalid",
                    "-f", str(key)], check=True, timeout=30)
    allowed = tmp_path / "allowed_signers"
    allowed.write_text("pat@example.invalid " + Path(f"{key}.pub").read_text())
    for k, v in (("gpg.format", "ssh"), ("user.signingkey", f"{key}.pub"),
                 ("commit.gpgsign", "true"), ("gpg.ssh.allowedSignersFile", str(allowed))):
        git(repo, "config", k, v)
    sim.configure(replies=replies())

    proc, lines = commit_run(repo, home, sim)

    assert proc.returncode == 0, proc.stderr
    verified = subprocess.run(["git", "verify-commit", "-v", lines[-1]["commit"]], cwd=repo,
                              capture_output=True, text=True, timeout=30,
                              env={**os.environ, **GIT_ENV})
    assert verified.returncode == 0, verified.stderr
    assert 'Good "git" signature for pat@example.invalid' in verified.stderr


def test_a_commit_made_by_another_process_during_the_turn_is_kept(
        sim: SimProcess, repo: Path, home: Path) -> None:
    padding = "".join(f"+line {i}\n" for i in range(200))
    slow = (A_DIFF.removesuffix("```\n")
            + f"--- /dev/null\n+++ b/pad.txt\n@@ -0,0 +1,200 @@\n{padding}```\n")
    sim.configure(replies=[replies()[0], {"match": "FSTRING", "text": slow}], tps=500)
    proc = subprocess.Popen(cli() + ["run", "FSTRING please", "-f", "a.py", "--apply",
                                     "--commit", "--json"], cwd=repo,
                            env={**env_for(home, sim), **GIT_ENV}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    theirs = None
    try:
        assert proc.stdout is not None
        deadline = time.monotonic() + 60
        with selectors.DefaultSelector() as sel:
            sel.register(proc.stdout, selectors.EVENT_READ)
            while theirs is None and time.monotonic() < deadline:
                if sel.select(timeout=1.0) and '"type":"file"' in proc.stdout.readline():
                    (repo / "other.txt").write_text("their change\n")
                    git(repo, "commit", "-qam", "their commit")
                    theirs = git(repo, "rev-parse", "HEAD").strip()
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert theirs is not None and proc.returncode == 0, err
    commit = lines_of(out)[-1]["commit"]
    assert git(repo, "rev-parse", "HEAD").strip() == commit
    assert git(repo, "rev-parse", "HEAD^").strip() == theirs
    assert git(repo, "show", "HEAD:other.txt") == "their change\n"
    assert sorted(git(repo, "diff-tree", "--no-commit-id", "--name-only", "-r",
                      "HEAD").split()) == ["a.py", "pad.txt"]


def test_a_commit_landing_while_the_commit_is_made_is_never_overwritten(
        sim: SimProcess, repo: Path, home: Path) -> None:
    sim.configure(replies=replies())
    hook = repo / ".git" / "hooks" / "pre-commit"  # another process commits meanwhile
    hook.write_text("#!/bin/sh\nunset GIT_INDEX_FILE\necho x >> other.txt\n"
                    "git add other.txt && git commit --no-verify -qm 'their commit'\n")
    hook.chmod(0o755)

    proc, lines = commit_run(repo, home, sim)

    assert proc.returncode == ExitCode.COMMIT, proc.stderr
    assert git(repo, "log", "-1", "--format=%s").strip() == "their commit"
    assert git(repo, "show", "HEAD:a.py") == A_PY
    assert git(repo, "show", "HEAD:other.txt") == OTHER + "x\n"
    assert (repo / "a.py").read_text() == A_NEW
    assert "landed on HEAD while this one was made" in lines[-1]["commit_note"]


def test_undo_of_a_committed_turn_keeps_the_commit_and_revert_records_one(
        sim: SimProcess, repo: Path, home: Path) -> None:
    sim.configure(replies=replies())
    (repo / "other.txt").write_text("staged by me\n")
    git(repo, "add", "other.txt")
    proc, lines = commit_run(repo, home, sim)
    commit = lines[-1]["commit"]
    assert proc.returncode == 0 and commit, proc.stderr

    def journal(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(cli() + list(args), cwd=repo, capture_output=True, text=True,
                              timeout=60, env={**env_for(home, sim), **GIT_ENV})

    undone = journal("undo")
    assert undone.returncode == 0, undone.stderr
    assert f"its commit {commit[:12]} stays in history" in undone.stderr
    assert git(repo, "rev-parse", "HEAD").strip() == commit  # never reset, never rewritten
    assert (repo / "a.py").read_text() == A_PY
    assert journal("redo").returncode == 0
    assert (repo / "a.py").read_text() == A_NEW

    reverted = journal("undo", "--revert", "--json")

    assert reverted.returncode == 0, reverted.stderr
    out = json.loads(reverted.stdout)
    assert out["commit"] == commit and out["restored"] == ["a.py"]
    assert git(repo, "rev-parse", "HEAD").strip() == out["revert"]
    assert git(repo, "rev-parse", "HEAD^").strip() == commit
    assert git(repo, "log", "-1", "--format=%B").strip() == (
        f'Revert "Use an f-string in greet"\n\nThis reverts commit {commit}.')
    assert git(repo, "show", "HEAD:a.py") == A_PY
    assert git(repo, "status", "--porcelain").splitlines() == ["M  other.txt"]


def test_watch_commits_a_turn_that_replaced_the_persons_ai_comment(
        sim: SimProcess, repo: Path, home: Path) -> None:
    """The AI! comment is the person's own edit, but the turn rewrote its line: the commit is
    exactly the turn. A comment the turn left in the file would have been refused."""
    reply = ("--- a/a.py\n+++ b/a.py\n@@ -1,3 +1,2 @@\n def greet(name):\n"
             "-    # use an f-string AI!\n-    return 'hello ' + name\n"
             "+    return f'hello {name}'\n")
    sim.configure(replies=[replies()[0], {"match": "use an f-string", "text": reply}])
    out, err = watch_one(repo, env_for(home, sim), lambda: (repo / "a.py").write_text(
        A_PY.replace("def greet(name):\n", "def greet(name):\n    # use an f-string AI!\n")))
    end = next(ln for ln in lines_of(out) if ln["type"] == "end")
    assert end["exit_code"] == 0 and end["commit"], err
    assert git(repo, "show", "HEAD:a.py") == A_NEW
    assert git(repo, "status", "--porcelain") == ""


def test_git_without_an_identity_says_so_and_the_turn_stays(sim: SimProcess, tmp_path: Path,
                                                           home: Path) -> None:
    bare = make_repo(tmp_path / "anon", {"a.py": A_PY})
    git(bare, "config", "user.useConfigOnly", "true")  # no guessing from the host name
    sim.configure(replies=replies())

    proc, lines = commit_run(bare, home, sim)

    assert proc.returncode == ExitCode.COMMIT, proc.stderr
    assert "git commit-tree failed, so nothing was committed: " in proc.stderr
    assert "user.name and user.email" in proc.stderr and "Traceback" not in proc.stderr
    assert (bare / "a.py").read_text() == A_NEW
    assert git(bare, "log", "--format=%s").split() == ["base"]


@pytest.mark.parametrize("passes", [True, False])
def test_with_check_the_rounds_are_committed_once_the_check_passes(
        sim: SimProcess, repo: Path, home: Path, passes: bool) -> None:
    sim.configure(replies=replies())
    check = "python3 -c 'import a; assert a.greet(\"x\") == \"hello x\"'" if passes else "false"
    base = git(repo, "rev-parse", "HEAD").strip()

    proc, lines = commit_run(repo, home, sim, "--check", check)

    end = lines[-1]
    if passes:
        assert proc.returncode == 0, proc.stderr
        assert end["commit"] and git(repo, "rev-parse", "HEAD").strip() == end["commit"]
        assert git(repo, "show", "HEAD:a.py") == A_NEW
        assert git(repo, "log", "-1", "--format=%B").strip() == MESSAGE
    else:
        assert proc.returncode == ExitCode.CHECK, proc.stderr
        assert end["commit"] is None and "nothing was committed" in end["commit_note"]
        assert git(repo, "rev-parse", "HEAD").strip() == base
        assert (repo / "a.py").read_text() == A_NEW  # the tree keeps the round


def test_the_message_request_is_logged_under_the_turn_it_commits(
        sim: SimProcess, repo: Path, home: Path) -> None:
    sim.configure(replies=replies())
    proc, lines = commit_run(repo, home, sim)
    assert proc.returncode == 0, proc.stderr
    turn = lines[-1]["turn_id"]
    assert turn and lines[-1]["commit"]
    with sqlite3.connect(home / "data" / "requests.sqlite3") as db:
        rows = db.execute("SELECT task, turn_id, output_tokens FROM requests"
                          " WHERE task != 'warmup' ORDER BY id").fetchall()
    tasks = {task: (turn_id, out) for task, turn_id, out in rows}
    assert set(tasks) == {"edit", "commit-message"}, rows
    assert tasks["commit-message"][0] == turn == tasks["edit"][0]
    assert tasks["commit-message"][1]  # its tokens are there for stats


@pytest.mark.parametrize("answer", [
    A_DIFF, A_DIFF.replace("```diff\n", "").replace("```", ""), "```\n\n```"],
    ids=["fenced diff", "bare diff", "empty fence"])
def test_a_diff_for_a_message_gives_way_to_the_template(
        sim: SimProcess, repo: Path, home: Path, answer: str) -> None:
    sim.configure(replies=replies(answer))
    proc, lines = commit_run(repo, home, sim)
    assert proc.returncode == 0, proc.stderr
    assert lines[-1]["commit"]
    message = git(repo, "log", "-1", "--format=%B").strip()
    assert message == "Update a.py\n\nAsked: FSTRING please"
    assert "--- a/" not in message and "@@" not in message
    assert "plain template" in proc.stderr
