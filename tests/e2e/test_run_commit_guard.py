"""`run --apply --commit` against the real git binary, where the person's own work is near the
turn: a line they deleted next to the turn's lines, a file their .gitignore excludes, an index
another git process holds locked. None of it goes into the commit silently."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from support.gitrepo import GIT_ENV, git, identity, replies
from support.runs import check_schema, lines_of, make_repo, run

from spark_pair.base.exitcodes import ExitCode
from spark_pair.sim.process import SimProcess

C_PY = 'a = 1\nx = "SECRET person line"\nb = 2\nc = 3\n'
C_DIFF = "```diff\n--- a/c.py\n+++ b/c.py\n@@ -1,3 +1,3 @@\n a = 1\n-b = 2\n+b = 20\n c = 3\n```\n"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def commit_run(repo: Path, home: Path, sim: SimProcess, prompt: str, *more: str
               ) -> tuple[object, list[dict]]:
    proc = run(repo, home, sim, prompt, "--apply", "--commit", "--json", *more, env=GIT_ENV)
    lines = lines_of(proc.stdout)
    check_schema(lines)
    return proc, lines


def test_a_line_the_person_deleted_next_to_the_turns_lines_is_refused(
        sim: SimProcess, tmp_path: Path, home: Path) -> None:
    repo = identity(make_repo(tmp_path / "repo", {"c.py": C_PY}))
    (repo / "c.py").write_text(C_PY.replace('x = "SECRET person line"\n', ""))  # by hand
    sim.configure(replies=[replies()[0], {"match": "DELX", "text": C_DIFF}])
    base = git(repo, "rev-parse", "HEAD").strip()

    proc, lines = commit_run(repo, home, sim, "DELX change b in c.py", "-f", "c.py")

    assert proc.returncode == ExitCode.COMMIT, proc.stderr  # type: ignore[attr-defined]
    assert git(repo, "rev-parse", "HEAD").strip() == base
    assert (repo / "c.py").read_text() == "a = 1\nb = 20\nc = 3\n"  # the turn stays applied
    end = lines[-1]
    assert end["status"] == "applied" and end["commit"] is None
    assert "c.py (held your own uncommitted edits before the turn)" in end["commit_note"]
    assert "git add -p -- c.py" in proc.stderr  # type: ignore[attr-defined]


def test_a_new_file_the_ignore_rules_exclude_is_left_out_with_a_note(
        sim: SimProcess, tmp_path: Path, home: Path) -> None:
    repo = identity(make_repo(tmp_path / "repo", {"c.py": C_PY, ".gitignore": "*.log\n.env\n"}))
    made = ("```diff\n--- /dev/null\n+++ b/debug.log\n@@ -0,0 +1 @@\n+token=abc\n"
            "--- a/c.py\n+++ b/c.py\n@@ -1,4 +1,4 @@\n a = 1\n x = \"SECRET person line\"\n"
            "-b = 2\n+b = 20\n c = 3\n```\n")
    sim.configure(replies=[replies()[0], {"match": "IGNORED", "text": made}])

    proc, lines = commit_run(repo, home, sim, "IGNORED log it", "-f", "c.py")

    assert proc.returncode == 0, proc.stderr  # type: ignore[attr-defined]
    assert (repo / "debug.log").read_text() == "token=abc\n"  # written, not committed
    assert git(repo, "diff-tree", "--no-commit-id", "--name-only", "-r", "HEAD").split() == [
        "c.py"]
    end = lines[-1]
    assert end["commit"] and "not committed: debug.log" in end["commit_note"]
    assert "your ignore rules exclude it" in proc.stderr  # type: ignore[attr-defined]
    assert git(repo, "status", "--porcelain") == ""


def test_the_how_to_hint_quotes_a_path_so_it_can_be_pasted(
        sim: SimProcess, tmp_path: Path, home: Path) -> None:
    odd = "dir x/ünï file.py"
    repo = identity(make_repo(tmp_path / "repo", {"c.py": C_PY}))
    (repo / "dir x").mkdir()
    (repo / odd).write_text(C_PY)
    git(repo, "add", "--", odd)
    git(repo, "commit", "-qm", "odd")
    (repo / odd).write_text(C_PY.replace("c = 3", "c = 3  # mine"))
    sim.configure(replies=[replies()[0], {"match": "DELX", "text": C_DIFF.replace(
        "c.py", odd).replace(" c = 3\n", " c = 3  # mine\n")}])

    proc, _ = commit_run(repo, home, sim, "DELX change b", "-f", odd)

    assert proc.returncode == ExitCode.COMMIT, proc.stderr  # type: ignore[attr-defined]
    hint = next(ln for ln in proc.stderr.splitlines()  # type: ignore[attr-defined]
                if "git add -p" in ln)
    pasted = hint[hint.index("git add -p"):].split(" && ")[0]
    assert shlex.split(pasted) == ["git", "add", "-p", "--", odd]
