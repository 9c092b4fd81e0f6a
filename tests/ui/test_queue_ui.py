"""The queue in the app under the pilot against the simulator process: tab from the prompt
while a turn runs queues the prompt (a chip shows it) and it runs when that turn ends; tab
elsewhere still moves focus; escape on the empty prompt clears the queue after asking."""

from __future__ import annotations

from pathlib import Path

from support.apps import QUICK_OP, make_app, review, turn_over, typed, until

from spark_pair.sim.demo_project import MATCH, reply_text
from spark_pair.sim.process import SimProcess
from spark_pair.ui.dialogs.confirm import ConfirmScreen
from spark_pair.ui.widgets.prompt import Prompt
from spark_pair.ui.widgets.review import ReviewPane


def footer_keys(app) -> dict[str, str]:
    """key -> the action the focused screen would run for it now."""
    return {key: b.binding.action for key, b in app.screen.active_bindings.items()}


async def test_tab_queues_while_a_turn_runs_and_the_queued_turn_runs_next(
        repo: Path, demo_sim: SimProcess) -> None:
    # the stream runs 2 s after its first proposal, the queue is made in well under one
    demo_sim.configure(tps=300, replies=[{"match": MATCH, "text": QUICK_OP + reply_text()}])
    app = make_app(repo, demo_sim)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.main.streaming and review(app).review.entries,
                    "the turn streaming, a first proposal in (it takes the focus)")
        prompt = app.main.query_one(Prompt)
        prompt.focus()
        await pilot.pause()
        assert footer_keys(app)["tab"] != "queue"  # empty prompt: tab moves on
        await typed(pilot, "add a docstring")
        await pilot.pause()
        assert footer_keys(app)["tab"] == "queue"
        await pilot.press("tab")
        await pilot.pause()
        assert app.main.queued == [("add a docstring", ["inventory.py", "test_inventory.py"])]
        assert prompt.value == "" and "1 queued: add a docstring" in str(prompt.border_title)
        assert app.main.focused is prompt  # it queued; focus stayed
        first = len(demo_sim.requests())
        await until(pilot, lambda: review(app).review.entries, "a proposal")
        await until(pilot, lambda: not app.main.streaming, "the end of the stream")
        review(app).focus()
        await pilot.press("alt+shift+r")  # the turn ends (rejected): the queued one starts
        await until(pilot, lambda: len(demo_sim.requests()) > first, "the queued turn's request")
        assert "add a docstring" in str(demo_sim.requests()[-1]["body"])
        await until(pilot, lambda: app.main.queued == [], "the queue emptied")
        assert not str(prompt.border_title)
        await until(pilot, lambda: turn_over(app), "the queued turn's end")


async def test_under_review_tab_queues_and_escape_clears_the_queue_after_asking(
        repo: Path, demo_sim: SimProcess) -> None:
    app = make_app(repo, demo_sim)  # the reply comes at once: the turn is under review
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: review(app).review.entries and not app.main.streaming,
                    "the turn under review")
        prompt = app.main.query_one(Prompt)
        prompt.focus()
        for text in ("one more", "and another"):
            await pilot.press(*text, "tab")
        await pilot.pause()
        assert [q[0] for q in app.main.queued] == ["one more", "and another"]
        assert footer_keys(app)["escape"] == "clear_queue"
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question")
        await pilot.press("alt+n")
        await pilot.pause()
        assert len(app.main.queued) == 2 and app.main.turn_worker is not None  # no: as it was
        await pilot.press("escape", "alt+y")
        await until(pilot, lambda: app.main.queued == [], "the queue cleared")
        assert app.main.turn_worker is not None  # the turn is still under review
        assert footer_keys(app).get("escape") != "clear_queue"
        review(app).focus()
        await pilot.press("alt+shift+r")
        await until(pilot, lambda: turn_over(app), "the end of the turn")
        await pilot.pause(0.3)
        assert len([e for e in demo_sim.requests() if e["body"].get("generate") is not False
                    ]) == 1  # nothing queued ran


async def test_while_the_reply_streams_escape_stops_it_and_the_queue_runs(
        repo: Path, demo_sim: SimProcess) -> None:
    # a short operation, the demo's reply and a long tail of prose: it streams for a minute at
    # 60 tok/s
    demo_sim.configure(tps=60, replies=[{"match": MATCH, "text": QUICK_OP + reply_text()
                                         + "\nNotes:\n" + "more words to read here\n" * 500}])
    app = make_app(repo, demo_sim)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.main.streaming and review(app).review.entries,
                    "the turn streaming, a first proposal in (it takes the focus)")
        prompt = app.main.query_one(Prompt)
        prompt.focus()
        await typed(pilot, "next one")
        await pilot.press("tab")
        await until(pilot, lambda: app.main.queued, "the queued turn")
        assert footer_keys(app)["escape"] == "stop"
        first = len(demo_sim.requests())
        await pilot.press("escape")  # stopped: the queued turn starts
        await until(pilot, lambda: len(demo_sim.requests()) > first, "the queued turn's request")
        assert "next one" in str(demo_sim.requests()[-1]["body"])
        app.main.driver.cancel()
        await until(pilot, lambda: turn_over(app), "the end of the queued turn")


async def test_tab_in_the_review_pane_still_moves_focus(repo: Path,
                                                        demo_sim: SimProcess) -> None:
    demo_sim.configure(tps=300)
    app = make_app(repo, demo_sim)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: review(app).review.entries, "a proposal")
        review(app).focus()
        await pilot.pause()
        assert isinstance(app.main.focused, ReviewPane)
        await pilot.press("tab")
        await pilot.pause()
        assert not isinstance(app.main.focused, ReviewPane) and app.main.queued == []
        app.main.driver.cancel()
        await until(pilot, lambda: turn_over(app) or not app.main.streaming, "the stop")
