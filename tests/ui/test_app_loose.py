"""A reply whose hunk is indented four columns short, in the app against the simulator as a real
process (issue 30): the review row says the hunk was re-based, the write lands the new `else` in
the method, and a revised second block says what it superseded."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from support.apps import make_app, review, screen_rows, turn_over, until
from support.loose import RATES, RATES_AFTER, SHORT

from spark_pair.sim.process import SimProcess
from spark_pair.ui.review_state import Item

SIZES = [(80, 24), (200, 50)]


def rows(app) -> list[str]:
    pane = review(app)
    return [pane.text_of(Item(e.index, h))
            for e in sorted(pane.review.entries.values(), key=lambda e: e.index)
            for h in (None, *range(len(e.hunks)))]


@pytest.mark.parametrize("size", SIZES)
async def test_a_re_based_hunk_says_so_in_its_row_and_is_written_in_place(
        repo: Path, sim: SimProcess, size: tuple[int, int]) -> None:
    (repo / "rates.py").write_text(RATES)
    sim.configure(default=SHORT)
    app = make_app(repo, sim, prompt="add an else", files=("rates.py",))
    async with app.run_test(size=size) as pilot:
        await until(pilot, lambda: any("re-based by +4 columns" in r for r in rows(app)),
                    "the loose mark in the review")
        await until(pilot, lambda: any("~ re-based by +4 columns" in row
                                       for row in screen_rows(app)), "the mark on the screen")
        review(app).focus()
        await pilot.press("alt+shift+a")
        await until(pilot, lambda: turn_over(app), "the write")
    written = (repo / "rates.py").read_text()
    assert written == RATES_AFTER
    ast.parse(written)


async def test_a_superseded_hunk_says_so_once_written(repo: Path, sim: SimProcess) -> None:
    (repo / "rates.py").write_text(RATES)
    first = SHORT.replace("+        value = 0", "+        value = -1")
    sim.configure(default=first + "\nOops, zero:\n" + SHORT.split("\n\n", 1)[1])
    app = make_app(repo, sim, prompt="add an else", files=("rates.py",))
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: len(review(app).review.entries) == 2, "both blocks")
        review(app).focus()
        await pilot.press("alt+shift+a")
        await until(pilot, lambda: turn_over(app), "the write")
        await until(pilot, lambda: any("superseded by a later block" in r for r in rows(app)),
                    "the superseded mark")
    assert "value = 0" in (repo / "rates.py").read_text()
    assert "value = -1" not in (repo / "rates.py").read_text()
