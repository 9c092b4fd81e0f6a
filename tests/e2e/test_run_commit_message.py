"""`run --apply --commit`: the commit-message request is in the request log under the turn it
commits, and an answer that is no message (a diff) gives way to the template, said why."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from support.gitrepo import GIT_ENV, OTHER, git, identity, replies
from support.runs import A_DIFF, A_PY, check_schema, lines_of, make_repo, run

from spark_pair.sim.process import SimProcess


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return identity(make_repo(tmp_path / "repo", {"a.py": A_PY, "other.txt": OTHER}))


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def _commit(repo: Path, home: Path, sim: SimProcess) -> tuple[str, list[dict]]:
    proc = run(repo, home, sim, "FSTRING please", "-f", "a.py", "--apply", "--commit",
               "--json", env=GIT_ENV)
    assert proc.returncode == 0, proc.stderr
    lines = lines_of(proc.stdout)
    check_schema(lines)
    return proc.stderr, lines


def test_the_message_request_is_logged_under_the_turn_it_commits(
        sim: SimProcess, repo: Path, home: Path) -> None:
    sim.configure(replies=replies())
    _, lines = _commit(repo, home, sim)
    turn = lines[-1]["turn_id"]
    assert turn and lines[-1]["commit"]
    with sqlite3.connect(home / "data" / "requests.sqlite3") as db:
        rows = db.execute("SELECT task, turn_id, output_tokens FROM requests"
                          " WHERE task != 'warmup' ORDER BY id").fetchall()
    tasks = {task: (turn_id, out) for task, turn_id, out in rows}
    assert set(tasks) == {"edit", "commit-message"}, rows
    assert tasks["commit-message"][0] == turn == tasks["edit"][0]
    assert tasks["commit-message"][1]  # its tokens are there for stats


@pytest.mark.parametrize("answer", [A_DIFF, f"```diff\n{A_DIFF}```\n", "```\n\n```"])
def test_a_diff_for_a_message_gives_way_to_the_template(
        sim: SimProcess, repo: Path, home: Path, answer: str) -> None:
    sim.configure(replies=replies(answer))
    stderr, lines = _commit(repo, home, sim)
    assert lines[-1]["commit"]
    message = git(repo, "log", "-1", "--format=%B").strip()
    assert message == "Update a.py\n\nAsked: FSTRING please"
    assert "--- a/" not in message and "@@" not in message
    assert "plain template" in stderr
