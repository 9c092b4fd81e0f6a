"""`spark-pair undo` as a user runs it: a subprocess in a real git repo, SPARK_PAIR_HOME set."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from spark_pair.edits.apply import apply_turn
from spark_pair.edits.journal import Journal
from spark_pair.edits.ops import Create, Hunk, Modify
from spark_pair.exitcodes import ExitCode


@pytest.fixture
def env(tmp_path) -> dict[str, str]:
    return {**os.environ, "SPARK_PAIR_HOME": str(tmp_path / "home"), "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}


@pytest.fixture
def repo(tmp_path, env) -> Path:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("x = 1\ny = 2\n")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True, env=env)
    subprocess.run(["git", "add", "."], cwd=root, check=True, env=env)
    subprocess.run(["git", "commit", "-q", "-m", "init"], cwd=root, check=True, env=env)
    return root


def undo(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", "from spark_pair.cli import main; main()", "undo", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=60)


def apply(repo: Path, env: dict[str, str], ops) -> str:
    journal = Journal(repo, Path(env["SPARK_PAIR_HOME"]) / "data")
    return apply_turn(repo, ops, journal=journal).turn_id


def test_undo_from_a_subdirectory_restores_the_last_turn(repo, env):
    turn = apply(repo, env, [Modify("src/app.py", [Hunk(None, None, None, None, [" x = 1", "-y = 2", "+y = 3"])]),
                             Create("src/new.py", "print('hi')\n")])
    listed = undo(repo / "src", env, "--list", "--json")
    assert listed.returncode == 0, listed.stderr
    turns = json.loads(listed.stdout)["turns"]
    assert [t["turn_id"] for t in turns] == [turn] and sorted(turns[0]["files"]) == ["src/app.py", "src/new.py"]
    done = undo(repo / "src", env, "--json")
    assert done.returncode == 0, done.stderr
    assert sorted(json.loads(done.stdout)["restored"]) == ["src/app.py", "src/new.py"]
    assert (repo / "src" / "app.py").read_text() == "x = 1\ny = 2\n"
    assert not (repo / "src" / "new.py").exists()
    again = undo(repo, env)
    assert again.returncode == ExitCode.UNDO and "nothing to undo" in again.stderr
    assert "Traceback" not in again.stderr


def test_undo_refuses_changed_files_with_a_hint_then_force_works(repo, env):
    apply(repo, env, [Modify("src/app.py", [Hunk(None, None, None, None, ["-x = 1", "+x = 10"])])])
    (repo / "src" / "app.py").write_text("mine\n")
    refused = undo(repo, env)
    assert refused.returncode == ExitCode.UNDO
    assert "src/app.py" in refused.stderr and "--force" in refused.stderr
    assert (repo / "src" / "app.py").read_text() == "mine\n"
    forced = undo(repo, env, "--force")
    assert forced.returncode == 0 and "restored 1 file(s): src/app.py" in forced.stdout
    assert (repo / "src" / "app.py").read_text() == "x = 1\ny = 2\n"


def test_undo_a_named_turn_and_the_human_listing(repo, env):
    first = apply(repo, env, [Create("a.txt", "a\n")])
    apply(repo, env, [Create("b.txt", "b\n")])
    assert undo(repo, env, "--turn", first).returncode == 0
    assert not (repo / "a.txt").exists() and (repo / "b.txt").exists()
    listing = undo(repo, env, "--list")
    assert listing.returncode == 0 and first in listing.stdout and "undone" in listing.stdout
    unknown = undo(repo, env, "--turn", "nope")
    assert unknown.returncode == ExitCode.UNDO and "no turn 'nope'" in unknown.stderr
