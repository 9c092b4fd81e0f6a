"""ctrl+q asks before it leaves work half done: while a tried turn's check runs (the turn is
written, keep or roll back not answered) and mid-stream with operations accepted but not yet
written; with nothing at stake it quits at once. Pilot against the simulator process in a real
git repository."""

from __future__ import annotations

from pathlib import Path

from support.apps import QUICK_OP, all_proposed, make_app, review, until

from spark_pair.sim.demo_project import FILES, MATCH, reply_text
from spark_pair.sim.process import SimProcess
from spark_pair.ui.screens.check import CheckScreen
from spark_pair.ui.screens.quitting import QuitQuestion


def question(app) -> str:
    return str(app.screen.query_one("Label").render()) if isinstance(
        app.screen, QuitQuestion) else ""


async def test_ctrl_q_while_the_check_runs_asks_and_says_what_stays_written(
        repo: Path, demo_sim: SimProcess) -> None:
    """alt+t with a slow check, then ctrl+q: a question (the turn stays written); alt+n goes
    back to the check, which is answered as before; ctrl+q again and alt+y quits, saying how to
    undo it."""
    app = make_app(repo, demo_sim, **{"review.check": "sleep 8", "review.fix_rounds": "0"})
    said: list[object] = []
    exit_app = app.exit
    app.exit = lambda *a, **kw: (said.append(kw.get("message")), exit_app(*a, **kw))[1]
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: all_proposed(app), "every proposal")
        await pilot.press("alt+t", "alt+shift+r")
        await until(pilot, lambda: isinstance(app.screen, CheckScreen), "the check pane")
        check = app.screen
        await pilot.press("ctrl+q")
        await until(pilot, lambda: isinstance(app.screen, QuitQuestion), "the quit question")
        assert "leave it written" in question(app) and "spark-pair undo" in question(app)
        assert app.is_running
        await pilot.press("alt+n")
        await until(pilot, lambda: app.screen is check, "back to the check")
        await pilot.press("ctrl+q")
        await until(pilot, lambda: isinstance(app.screen, QuitQuestion), "the quit question")
        await pilot.press("alt+y")
        await until(pilot, lambda: not app.is_running, "the exit")
    assert (repo / "inventory.py").read_text() != FILES["inventory.py"]  # written, as said
    assert said and "stays written" in str(said[-1]) and "spark-pair undo" in str(said[-1])


async def test_ctrl_q_mid_stream_with_accepted_operations_asks_first(
        repo: Path, demo_sim: SimProcess) -> None:
    """A slow stream: alt+A on the first operations, ctrl+q while the rest streams: the question
    names the accepted operation not yet written; alt+n keeps the app running."""
    # a short operation first (proposed at once), then the demo's reply: 10 s more at this pace
    demo_sim.configure(tps=60, replies=[{"match": MATCH, "text": QUICK_OP + reply_text()}])
    app = make_app(repo, demo_sim)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: review(app).review.entries, "the first proposal")
        await pilot.press("alt+shift+a")
        await until(pilot, lambda: any(
            not e.undecided for e in review(app).review.entries.values()), "a decision")
        assert app.main.streaming
        await pilot.press("ctrl+q")
        await until(pilot, lambda: isinstance(app.screen, QuitQuestion), "the quit question")
        assert "accepted operation(s) are not written yet" in question(app), question(app)
        await pilot.press("alt+n")
        await pilot.pause(0.1)
        assert app.is_running and app.screen is app.main
        await pilot.press("escape")  # stop the stream
