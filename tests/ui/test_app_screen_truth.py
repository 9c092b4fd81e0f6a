"""The screen matches the state: notices follow the review, the review lists deletes and
renames first, the footer keeps the review's keys at 80x24 (pilot against the simulator as a
real process, in the demo's real git repository)."""

from __future__ import annotations

from pathlib import Path

from support.apps import all_proposed, make_app, notice, opened, review, screen_rows, until

from spark_pair.sim.process import SimProcess


async def test_a_proposal_after_A_mid_stream_says_it_waits(repo: Path,
                                                          demo_sim: SimProcess) -> None:
    demo_sim.configure(tps=80)  # the later operations arrive well after the first
    app = make_app(repo, demo_sim)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: review(app).review.entries and review(app).has_focus,
                    "the first proposal")
        await pilot.press("A")
        await until(pilot, lambda: "all decided" in notice(app), "the notice")
        await until(pilot, lambda: review(app).has_undecided, "a later proposal")
        await pilot.pause()
        assert "all decided" not in notice(app)
        assert "arrived after A: it waits for your decision" in notice(app)
        assert app.main.streaming or review(app).has_undecided


async def test_deletes_and_renames_are_listed_first_and_in_view_at_80x24(
        repo: Path, demo_sim: SimProcess) -> None:
    app = make_app(repo, demo_sim)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: opened(app) and all_proposed(app), "every proposal")
        await pilot.pause()
        shown = "\n".join(screen_rows(app))
        assert "DELETE TODO.txt" in shown and "stock.csv → sample_stock.csv" in shown, shown
        kinds = [review(app).review.entries[i].kind for i in review(app).review.order()]
        assert [str(k) for k in kinds[:2]] == ["delete", "rename"]
        footer = screen_rows(app)[-1].replace(" ", "")
        for key in ("cwhy", "eedit", "ttry"):  # the review's keys are all there
            assert key in footer, footer
