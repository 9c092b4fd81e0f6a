"""Commits from the app, with Textual's pilot against the simulator as a real process in a real
git repository: `[git] commit = "ask"` shows the model's message to edit, /undo of a committed
turn keeps the commit and /commit records the revert, and a file holding the person's own
edits is committed whole only when they say so."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support.apps import make_app, notice, opened, review, turn_over, type_line, until
from support.gitrepo import GIT_ENV, MESSAGE, OTHER, git, identity, replies
from support.runs import A_NEW, A_PY, make_repo, run

from spark_pair.sim.process import SimProcess
from spark_pair.ui.dialogs.confirm import ConfirmScreen
from spark_pair.ui.dialogs.message import MessageScreen


@pytest.fixture
def grepo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SPARK_PAIR_HOME", str(tmp_path / "home"))
    for var, value in GIT_ENV.items():
        monkeypatch.setenv(var, value)
    root = identity(make_repo(tmp_path / "repo", {"a.py": A_PY, "other.txt": OTHER}))
    (root / "other.txt").write_text(OTHER + "staged by me\n")
    git(root, "add", "other.txt")
    return root


async def apply_turn(pilot, app) -> None:
    await until(pilot, lambda: len(review(app).review.entries) == 1, "the proposal")
    review(app).focus()
    await pilot.press("alt+a")
    await until(pilot, lambda: app.main.commits.applied, "the applied turn")


def message_shown(app) -> bool:
    """The message dialog is up and its text has the keys (typing goes into it)."""
    if not isinstance(app.screen, MessageScreen):
        return False
    found = app.screen.query("#message")  # (none yet: the screen is pushed, not yet composed)
    return bool(found) and app.focused is found.first()


def committed(app) -> bool:
    """The notice says a commit was made (its id), not that none was."""
    return re.search(r"\bcommitted [0-9a-f]{12}: ", notice(app)) is not None


async def ask_commit(pilot, app, answer: str) -> None:
    """/commit, and the answer to whether a file with the person's own edits goes whole (yes:
    until the message is shown)."""
    await type_line(pilot, app, "/commit")
    await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question")
    await pilot.press(answer)
    if answer == "alt+y":
        await until(pilot, lambda: message_shown(app), "the message")


@pytest.mark.parametrize("size", [(80, 24), (200, 50)])
async def test_ask_shows_the_message_to_edit_and_undo_keeps_the_commit(
        grepo: Path, sim: SimProcess, size: tuple[int, int]) -> None:
    sim.configure(replies=replies())
    base = git(grepo, "rev-parse", "HEAD").strip()
    app = make_app(grepo, sim, prompt="FSTRING please", files=("a.py",), **{"git.commit": "ask"})
    async with app.run_test(size=size) as pilot:
        await apply_turn(pilot, app)
        await until(pilot, lambda: message_shown(app), "the message")
        assert "Use an f-string in greet" in app.screen.query_one("#message").text
        await pilot.press(*" now", "ctrl+s")
        await until(pilot, lambda: committed(app), "the commit")
        assert git(grepo, "log", "-1", "--format=%B").strip() == MESSAGE.replace(
            "greet", "greet now", 1)
        commit = git(grepo, "rev-parse", "HEAD").strip()
        assert git(grepo, "rev-parse", "HEAD^").strip() == base
        assert git(grepo, "status", "--porcelain").splitlines() == ["M  other.txt"]

        await type_line(pilot, app, "/undo")
        await until(pilot, lambda: "stays in history" in notice(app), "the undo")
        assert git(grepo, "rev-parse", "HEAD").strip() == commit
        assert (grepo / "a.py").read_text() == A_PY

        await type_line(pilot, app, "/commit")
        await until(pilot, lambda: message_shown(app), "the revert message")
        assert app.screen.query_one("#message").text.startswith('Revert "Use an f-string')
        await pilot.press("ctrl+s")
        await until(pilot, lambda: committed(app), "the revert")
        assert git(grepo, "rev-parse", "HEAD^").strip() == commit
        assert git(grepo, "show", "HEAD:a.py") == A_PY
        assert git(grepo, "status", "--porcelain").splitlines() == ["M  other.txt"]


async def test_a_file_with_the_persons_own_edits_is_committed_whole_only_when_they_say_so(
        grepo: Path, sim: SimProcess) -> None:
    sim.configure(replies=replies())
    mine = A_PY.replace("def unused():", "def unused():  # mine")
    (grepo / "a.py").write_text(mine)
    base = git(grepo, "rev-parse", "HEAD").strip()
    app = make_app(grepo, sim, prompt="FSTRING please", files=("a.py",))
    async with app.run_test(size=(80, 24)) as pilot:
        await apply_turn(pilot, app)
        await until(pilot, lambda: turn_over(app), "the turn's end")
        assert not isinstance(app.screen, MessageScreen)  # [git] commit is off

        await ask_commit(pilot, app, "alt+n")
        await until(pilot, lambda: "git add -p -- a.py" in notice(app), "the refusal")
        assert git(grepo, "rev-parse", "HEAD").strip() == base

        await ask_commit(pilot, app, "alt+y")
        await pilot.press("escape")
        await until(pilot, lambda: "not committed" in notice(app), "the cancel")
        assert git(grepo, "rev-parse", "HEAD").strip() == base

        await ask_commit(pilot, app, "alt+y")
        await pilot.press("ctrl+s")
        await until(pilot, lambda: committed(app), "the commit")
    whole = A_NEW.replace("def unused():", "def unused():  # mine")
    assert git(grepo, "show", "HEAD:a.py") == whole
    assert git(grepo, "diff-tree", "--no-commit-id", "--name-only", "-r", "HEAD").split() == [
        "a.py"]


async def test_a_tried_turn_is_offered_for_a_commit_once_it_is_kept(grepo: Path,
                                                                    sim: SimProcess) -> None:
    from spark_pair.ui.screens.check import CheckScreen

    sim.configure(replies=replies())
    app = make_app(grepo, sim, prompt="FSTRING please", files=("a.py",),
                   **{"git.commit": "ask", "review.check": "true"})
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: len(review(app).review.entries) == 1, "the proposal")
        review(app).focus()
        await pilot.press("alt+t")
        await until(pilot, lambda: isinstance(app.screen, CheckScreen), "the check pane")
        screen = app.screen
        await until(pilot, lambda: screen.result is not None, "the check's end")
        assert git(grepo, "rev-list", "--count", "HEAD").strip() == "1"  # nothing yet
        assert app.screen is screen  # keep or roll back is asked first
        await pilot.press("alt+y")
        await until(pilot, lambda: message_shown(app), "the message")
        await pilot.press("ctrl+s")
        await until(pilot, lambda: committed(app), "the commit")
    assert git(grepo, "show", "HEAD:a.py") == A_NEW


async def test_commit_reaches_a_turn_applied_before_the_app_started(
        grepo: Path, sim: SimProcess) -> None:
    """A turn applied and not committed (a headless run without --commit here; an earlier
    session of the app alike) is what /commit commits after a restart."""
    sim.configure(replies=replies())
    done = run(grepo, grepo.parent / "home", sim, "FSTRING please", "-f", "a.py", "--apply",
               env=GIT_ENV)
    assert done.returncode == 0, done.stderr
    base = git(grepo, "rev-parse", "HEAD").strip()
    app = make_app(grepo, sim, prompt="")  # (no turn of its own first)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: opened(app), "the open repository")
        await type_line(pilot, app, "/commit")
        await until(pilot, lambda: message_shown(app), "the message")
        await pilot.press("ctrl+s")
        await until(pilot, lambda: committed(app), "the commit")
    assert git(grepo, "rev-parse", "HEAD^").strip() == base
    assert git(grepo, "show", "HEAD:a.py") == A_NEW
    assert git(grepo, "status", "--porcelain").splitlines() == ["M  other.txt"]
