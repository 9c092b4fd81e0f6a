"""A config file saved while the app runs: `[git]` is used at once (the next applied turn is
committed as it now says), and every settings section is either taken at once or announced.
Pilot against the simulator process in a real git repository."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support.apps import make_app, notice, opened, review, until
from support.gitrepo import GIT_ENV, git, identity, replies
from support.runs import A_PY, make_repo

from spark_pair.base.config import Settings, Table
from spark_pair.sim.process import SimProcess
from spark_pair.ui.config_watch import LATER, NOW


@pytest.fixture
def grepo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SPARK_PAIR_HOME", str(tmp_path / "home"))
    for var, value in GIT_ENV.items():
        monkeypatch.setenv(var, value)
    return identity(make_repo(tmp_path / "repo", {"a.py": A_PY}))


def test_every_settings_section_is_taken_at_once_or_announced() -> None:
    settings = Settings()
    sections = {k for k, v in vars(settings).items() if isinstance(v, Table)} | {"prices", "keys"}
    assert set(NOW) | set(LATER) == sections
    assert not set(NOW) & set(LATER)


async def test_git_commit_saved_while_the_app_runs_commits_the_next_turn(
        grepo: Path, sim: SimProcess) -> None:
    """Started with [git] commit off; `[git] commit = "auto"` saved while the turn waits for
    review: the notice says [git] is in use, and alt+a applies and commits the turn."""
    sim.configure(replies=replies())
    base = git(grepo, "rev-parse", "HEAD").strip()
    app = make_app(grepo, sim, prompt="FSTRING please", files=("a.py",))
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: len(review(app).review.entries) == 1, "the proposal")
        await until(pilot, lambda: opened(app), "the app open (its config read)")
        assert app.main.commits.mode == "off"
        (grepo / ".spark-pair.toml").write_text('[git]\ncommit = "auto"\nmessage = "template"\n')
        await until(pilot, lambda: "config saved" in notice(app), "the notice")
        assert "now in use: [git]" in notice(app), notice(app)
        review(app).focus()
        await pilot.press("alt+a")
        await until(pilot, lambda: re.search(r"\bcommitted [0-9a-f]{12}: ", notice(app)),
                    "the commit")
        assert git(grepo, "rev-parse", "HEAD^").strip() == base
        assert git(grepo, "show", "--stat", "--format=", "HEAD").split()[0] == "a.py"
