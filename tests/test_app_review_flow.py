"""The review's flow to its end, with Textual's pilot against the simulator as a real process in
the demo's git repository: /quit."""

from __future__ import annotations

from pathlib import Path

from test_app import all_proposed, make_app, until

from spark_pair.headless.demo_project import FILES
from spark_pair.sim.process import SimProcess
from spark_pair.ui.screens.confirm import ConfirmScreen


async def test_quit_typed_in_the_prompt_closes_the_app(repo: Path, demo_sim: SimProcess) -> None:
    app = make_app(repo, demo_sim, prompt="")
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: app.main.driver.session is not None, "the open repository")
        app.main.query_one("#prompt").focus()
        await pilot.press(*"/quit", "enter")
        await until(pilot, lambda: not app.is_running, "the exit")


async def test_quit_typed_during_review_asks_first(repo: Path, demo_sim: SimProcess) -> None:
    app = make_app(repo, demo_sim)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: all_proposed(app), "every proposal")
        app.main.query_one("#prompt").focus()
        await pilot.press(*"/quit", "enter")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question")
        await pilot.press("y")
        await until(pilot, lambda: not app.is_running, "the exit")
    for rel, text in FILES.items():
        assert (repo / rel).read_text() == text
