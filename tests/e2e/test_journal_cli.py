"""`spark-pair undo` and `redo` as a user runs them, in a real git repo, SPARK_PAIR_HOME set: the
first test runs each as a process of its own; the others run the same command lines in this
process (click's runner: the same exit codes and output, without a new interpreter each)."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pytest
from click.testing import CliRunner

from spark_pair.base.exitcodes import ExitCode
from spark_pair.cli.main import main
from spark_pair.edits.apply import apply_turn
from spark_pair.edits.journal import Journal
from spark_pair.edits.ops import Create, Hunk, Modify


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


def process(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """`spark-pair ARGS` as a process of its own."""
    return subprocess.run(
        [sys.executable, "-c", "from spark_pair.cli.main import main; main()", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


class Ran(NamedTuple):
    returncode: int
    stdout: str
    stderr: str


def cli(cwd: Path, env: dict[str, str], *args: str) -> Ran:
    """`spark-pair ARGS` run from `cwd` in this process."""
    with contextlib.chdir(cwd):
        result = CliRunner(env=env).invoke(main, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return Ran(result.exit_code, result.stdout, result.stderr)


def undo(cwd: Path, env: dict[str, str], *args: str) -> Ran:
    return cli(cwd, env, "undo", *args)


def apply(repo: Path, env: dict[str, str], ops) -> str:
    journal = Journal(repo, Path(env["SPARK_PAIR_HOME"]) / "data")
    return apply_turn(repo, ops, journal=journal).turn_id


def test_undo_from_a_subdirectory_restores_the_last_turn(repo, env):
    turn = apply(
        repo,
        env,
        [
            Modify("src/app.py", [Hunk(None, None, None, None, [" x = 1", "-y = 2", "+y = 3"])]),
            Create("src/new.py", "print('hi')\n"),
        ],
    )
    listed = process(repo / "src", env, "undo", "--list", "--json")
    assert listed.returncode == 0, listed.stderr
    turns = json.loads(listed.stdout)["turns"]
    assert [t["turn_id"] for t in turns] == [turn] and sorted(turns[0]["files"]) == [
        "src/app.py",
        "src/new.py",
    ]
    done = process(repo / "src", env, "undo", "--json")
    assert done.returncode == 0, done.stderr
    assert sorted(json.loads(done.stdout)["restored"]) == ["src/app.py", "src/new.py"]
    assert (repo / "src" / "app.py").read_text() == "x = 1\ny = 2\n"
    assert not (repo / "src" / "new.py").exists()
    again = process(repo, env, "undo")
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


def test_unknown_and_undone_turns_have_a_hint_without_force_and_json_errors(repo, env):
    turn = apply(repo, env, [Create("a.txt", "a\n")])
    assert undo(repo, env, "--turn", turn).returncode == 0
    for args, text in (
        (("--turn", "nope"), "no turn 'nope'"),
        (("--turn", turn), "already undone"),
    ):
        plain = undo(repo, env, *args)
        assert plain.returncode == ExitCode.UNDO and text in plain.stderr
        assert "--force" not in plain.stderr and "undo --list" in plain.stderr
        js = undo(repo, env, *args, "--json")
        assert js.returncode == ExitCode.UNDO and text in js.stderr
        err = json.loads(js.stdout)["error"]
        assert err["class"] == "UndoError" and text in err["message"]
        assert err["exit_code"] == ExitCode.UNDO and err["exit_name"] == "UNDO"
        assert "--force" not in err["hint"]
    bad = undo(repo, env, "--json", "--bogus")
    assert bad.returncode == ExitCode.USAGE
    err = json.loads(bad.stdout)["error"]
    assert err["class"] == "UsageError" and "--bogus" in err["message"] and err["exit_code"] == 2
    both = undo(repo, env, "--json", "--list", "--turn", turn)
    assert both.returncode == ExitCode.USAGE and json.loads(both.stdout)["error"]["kind"] == "usage"


def test_undo_help_documents_exit_code_8(repo, env):
    helped = undo(repo, env, "--help")
    assert helped.returncode == 0 and "8 undo refused" in " ".join(helped.stdout.split())


def test_listing_and_restored_lines_fit_80_columns(repo, env):
    names = [f"src/package_{i:02d}/a_rather_long_module_name_{i:02d}.py" for i in range(30)]
    journal = Journal(repo, Path(env["SPARK_PAIR_HOME"]) / "data")
    turn = apply_turn(repo, [Create(n, f"{i}\n") for i, n in enumerate(names)], journal=journal,
                      summary="add thirty modules " * 20).turn_id
    done = undo(repo, env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("restored 30 file(s):") and "more)" in done.stdout
    assert max(len(line) for line in done.stdout.splitlines()) <= 80
    listing = undo(repo, env, "--list")
    assert listing.returncode == 0
    lines = listing.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80, lines
    assert any(f"undo of {turn}" in line for line in lines)
    assert any(names[0] in line for line in lines) and any("more)" in line for line in lines)
    assert any("add thirty modules" in line and line.endswith("…") for line in lines)


def test_redo_after_undo_reapplies_exactly_and_then_has_nothing_left(repo, env):
    apply(repo, env, [Modify("src/app.py", [Hunk(None, None, None, None, ["-x = 1", "+x = 10"])]),
                      Create("src/new.py", "print('hi')\n")])
    assert undo(repo, env).returncode == 0
    redone = process(repo / "src", env, "redo", "--json")
    assert redone.returncode == 0, redone.stderr
    assert sorted(json.loads(redone.stdout)["reapplied"]) == ["src/app.py", "src/new.py"]
    assert (repo / "src" / "app.py").read_text() == "x = 10\ny = 2\n"
    assert (repo / "src" / "new.py").read_text() == "print('hi')\n"
    again = process(repo, env, "redo")
    assert again.returncode == ExitCode.UNDO and "nothing to redo" in again.stderr
    assert "Traceback" not in again.stderr
    listing = undo(repo, env, "--list").stdout
    assert "undo (redone since)" in listing and "redo of" in listing


def test_undo_of_an_undo_or_a_redo_is_refused_with_the_command_that_does_it(repo, env):
    """--turn takes an applied turn: an undo or redo record is refused, nothing is written,
    and the applied turn keeps the state the listing shows."""
    turn = apply(repo, env, [Modify("src/app.py", [Hunk(None, None, None, None,
                                                        ["-x = 1", "+x = 10"])])])
    assert undo(repo, env).returncode == 0

    def listed() -> dict[str, dict]:
        out = undo(repo, env, "--list", "--json")
        return {t["turn_id"]: t for t in json.loads(out.stdout)["turns"]}

    undo_id = next(t for t, info in listed().items() if info["kind"] == "undo")
    refused = undo(repo, env, "--turn", undo_id)
    assert refused.returncode == ExitCode.UNDO and "Traceback" not in refused.stderr
    assert f"turn {undo_id} is an undo of turn {turn}" in refused.stderr
    assert "spark-pair redo" in refused.stderr
    assert (repo / "src" / "app.py").read_text() == "x = 1\ny = 2\n"
    assert listed()[turn]["undone"] and not listed()[undo_id]["undone"]
    redo = cli(repo, env, "redo")
    assert redo.returncode == 0, redo.stderr
    redo_id = next(t for t, info in listed().items() if info["kind"] == "redo")
    refused = undo(repo, env, "--turn", redo_id, "--json")
    assert refused.returncode == ExitCode.UNDO
    err = json.loads(refused.stdout)["error"]
    assert f"turn {redo_id} is a redo of turn {turn}" in err["message"]
    assert f"spark-pair undo --turn {turn}" in err["hint"]
    assert (repo / "src" / "app.py").read_text() == "x = 10\ny = 2\n"
    assert not listed()[turn]["undone"]
    assert undo(repo, env, "--turn", turn).returncode == 0  # the applied turn itself: undone
    assert (repo / "src" / "app.py").read_text() == "x = 1\ny = 2\n"
