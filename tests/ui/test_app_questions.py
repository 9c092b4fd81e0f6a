"""enter in a question that enter does not answer (delete or rename, keep or roll back) decides
nothing and says which keys do; pilot against the simulator as a real process."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support.apps import all_proposed, entries_of, go_to, make_app, review, screen_rows, until
from textual import events

from spark_pair.edits.ops import OpKind
from spark_pair.sim.process import SimProcess
from spark_pair.ui.app import SparkPairApp
from spark_pair.ui.dialogs.confirm import ConfirmScreen
from spark_pair.ui.screens.check import CheckScreen
from spark_pair.ui.widgets.prompt import Prompt


def toasts(app: SparkPairApp) -> str:
    return "\n".join(str(n.message) for n in app._notifications)


def failing_check_app(repo: Path, sim: SimProcess) -> SparkPairApp:
    return make_app(repo, sim, **{"review.check": "echo checking; exit 1",
                                  "review.fix_rounds": "0"})


async def tried(pilot: Any, app: SparkPairApp) -> CheckScreen:
    """alt+t (the delete accepted, the rename rejected): the check pane, its check failed."""
    await pilot.press("alt+t", "alt+d", "alt+y", "alt+r")
    await until(pilot, lambda: isinstance(app.screen, CheckScreen), "the check pane")
    check = app.screen
    assert isinstance(check, CheckScreen)
    await until(pilot, lambda: check.result is not None, "the check's end")
    return check


async def test_enter_in_a_question_answers_nothing_and_names_the_keys_that_do(
        repo: Path, demo_sim: SimProcess) -> None:
    app = failing_check_app(repo, demo_sim)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: all_proposed(app), "every proposal")
        delete = entries_of(app, OpKind.DELETE)[0]
        await go_to(pilot, app, delete.index)
        await pilot.press("alt+d")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the delete question")
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)  # not answered, either way
        assert review(app).review.entries[delete.index].decision() is None
        assert "enter answers nothing here: alt+y yes, alt+n no" in toasts(app)
        assert app.main.query_one(Prompt).value == ""  # and typed nothing
        await pilot.press("alt+n")
        await until(pilot, lambda: app.screen is app.main, "the question answered")

        check = await tried(pilot, app)
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is check  # neither kept nor rolled back
        assert "enter answers nothing here: alt+y keep the turn · alt+n roll it back" in \
            toasts(app)
        await pilot.press("alt+n")
        await until(pilot, lambda: app.screen is app.main, "the roll back")


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=lambda s: f"{s[0]}x{s[1]}")
async def test_what_is_typed_over_the_check_shows_in_the_prompt(
        repo: Path, demo_sim: SimProcess, size: tuple[int, int]) -> None:
    app = failing_check_app(repo, demo_sim)
    async with app.run_test(size=size) as pilot:
        await until(pilot, lambda: all_proposed(app), "every proposal")
        await tried(pilot, app)
        await pilot.press(*"next: a test")
        await pilot.pause()
        rows = screen_rows(app)
        assert any("next: a test" in row for row in rows), "\n".join(rows)  # in view, as typed
        app.post_message(events.Paste("one\ntwo\nthree"))  # a paste: the prompt grows
        await until(pilot, lambda: app.main.query_one(Prompt).text.endswith("three"),
                    "the paste")
        await pilot.pause()
        rows = screen_rows(app)
        assert all(any(word in row for row in rows) for word in ("testone", "two", "three")), \
            "\n".join(rows)
        assert "FAILED" in "".join(rows) and "alt+y" in "".join(rows)  # the check still reads
        await pilot.press("alt+n")
        await until(pilot, lambda: app.screen is app.main, "the roll back")
