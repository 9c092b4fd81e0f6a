"""The footer says what its keys do now: the review's deciding chords only while something is
undecided, and enter named for what it does (send, steer, run a command, or send once the turn
under review is decided). Pilot against the simulator as a real process, at a width that shows
every key."""

from __future__ import annotations

from pathlib import Path

from support.apps import (
    QUICK_OP,
    all_proposed,
    edit_bodies,
    make_app,
    notice,
    opened,
    review,
    screen_rows,
    typed,
    until,
)

from spark_pair.sim.demo_project import MATCH, PROMPT, reply_text
from spark_pair.sim.process import SimProcess
from spark_pair.ui.app import SparkPairApp
from spark_pair.ui.widgets.footer import AppFooter
from spark_pair.ui.widgets.prompt import Prompt

DECIDING = {"alt+a", "alt+r", "alt+A", "alt+R", "alt+d", "alt+c", "alt+e", "alt+t"}


def footer(app: object) -> str:
    return screen_rows(app)[-1]  # type: ignore[arg-type]


def offered(app: SparkPairApp) -> set[str]:
    """The keys the footer offers (before fitting them to the width)."""
    return {key.display for key in app.main.query_one(AppFooter).keys}


async def test_the_deciding_chords_leave_the_footer_once_nothing_is_undecided(
        repo: Path, demo_sim: SimProcess) -> None:
    app = make_app(repo, demo_sim)
    async with app.run_test(size=(200, 50)) as pilot:
        await until(pilot, lambda: all_proposed(app), "every proposal")
        await pilot.pause()
        assert DECIDING <= offered(app), offered(app)
        assert "a yes" in footer(app)
        await pilot.press("alt+shift+a")  # the modifies and the create
        await until(pilot, lambda: review(app).review.undecided_count == 2, "two undecided")
        await pilot.pause()
        assert DECIDING <= offered(app)  # the delete and the rename still wait
        await pilot.press("alt+shift+r")  # the rest rejected: the turn is applied
        await until(pilot, lambda: "applied:" in notice(app), "the turn applied")
        await pilot.pause()
        assert not DECIDING & offered(app), offered(app)
        assert {"alt+j/alt+k", "alt+o"} <= offered(app)  # moving and reading stay
        line = footer(app)
        assert "alt+a" not in line and " a yes" not in line and "all" not in line, line
        await pilot.press("alt+a")  # pressed anyway: nothing happens, nothing breaks
        await pilot.pause()
        assert "applied:" in notice(app)


async def test_enter_is_named_for_what_it_does(repo: Path, demo_sim: SimProcess) -> None:
    app = make_app(repo, demo_sim, prompt="")
    async with app.run_test(size=(200, 50)) as pilot:
        await until(pilot, lambda: opened(app), "the open repository")
        await pilot.pause()
        assert "⏎ send" in footer(app)
        app.main.start_turn("add a discount", list(app.main.context))
        await until(pilot, lambda: all_proposed(app) and not app.main.streaming,
                    "every proposal, the stream over")
        prompt = app.main.query_one(Prompt)
        prompt.focus()
        await pilot.press(*"and a test")  # under review, text in the prompt
        await pilot.pause()
        line = footer(app)
        assert "⏎ decide first" in line and "⏎ send" not in line, line
        await pilot.press("enter")  # what it says: nothing is sent, the reason is said
        await pilot.pause()
        assert prompt.value == "and a test" and "decide it" in notice(app)
        prompt.value = "/undo"  # a slash command runs under review too
        await pilot.pause()
        assert "⏎ run" in footer(app), footer(app)
        prompt.value = "and a test"
        await pilot.press("alt+shift+r")  # every operation rejected: the turn is over
        await until(pilot, lambda: app.main.turn_worker is None, "the turn over")
        await pilot.pause()
        line = footer(app)
        assert "⏎ send" in line and "decide first" not in line, line
        assert prompt.value == "and a test" and len(edit_bodies(demo_sim)) == 1  # as said:
        # deciding sent nothing by itself; enter now sends it
        await pilot.press("enter")
        # (at least: a request retried on a loaded machine is logged again)
        await until(pilot, lambda: len(edit_bodies(demo_sim)) >= 2, "the send")
        assert all("and a test" in repr(body) for body in edit_bodies(demo_sim)[1:])


async def test_while_the_reply_streams_enter_is_named_steer(repo: Path, sim: SimProcess) -> None:
    sim.configure(tps=60, replies=[{"match": MATCH,
                                    "text": QUICK_OP + reply_text() + "\nmore\n" * 400}])
    app = make_app(repo, sim, prompt="")
    async with app.run_test(size=(200, 50)) as pilot:
        await until(pilot, lambda: opened(app), "the open repository")
        app.main.start_turn(PROMPT, list(app.main.context))
        await until(pilot, lambda: app.main.streaming and review(app).review.entries,
                    "the reply streaming")
        await typed(pilot, "use a set")
        await pilot.pause()
        assert "⏎ steer" in footer(app) and "⏎ send" not in footer(app), footer(app)
        await pilot.press("escape")  # stopped: nothing of it is written
        await until(pilot, lambda: app.main.turn_worker is None, "the turn stopped")
