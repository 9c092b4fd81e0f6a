"""What a person reads in the dialogs and on the panes' borders, with the app against the
simulator as a real process: every word shows (it wraps or fits rather than being cut), also at
80x24 and 60x20."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.apps import all_proposed, go_to, make_app, screen_rows, turn_over, until
from textual.widgets import Log

from spark_pair.sim.process import SimProcess
from spark_pair.ui.app import SparkPairApp
from spark_pair.ui.dialogs.confirm import ConfirmScreen
from spark_pair.ui.dialogs.reason import ReasonScreen
from spark_pair.ui.screens.check import CheckScreen
from spark_pair.ui.screens.help import HelpScreen
from spark_pair.ui.widgets.files import FilesPane, tokens_label
from spark_pair.ui.widgets.review import ReviewPane

SIZES = [(80, 24), (60, 20)]


def dialog_text(app: SparkPairApp) -> str:
    """The text inside the dialog's thick border, its rows joined by spaces."""
    rows = [row[row.index("█") + 1:row.rindex("█")] for row in screen_rows(app)
            if row.count("█") >= 2]
    inner = [r.strip(" │╭╮╰╯─") for r in rows]
    return " ".join(" ".join(inner).split())


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_the_dialogs_questions_show_whole_on_a_small_terminal(
        repo: Path, demo_sim: SimProcess, size: tuple[int, int]) -> None:
    app = make_app(repo, demo_sim, **{"review.check": "echo checking; exit 1",
                                      "review.fix_rounds": "0"})
    async with app.run_test(size=size) as pilot:
        await until(pilot, lambda: all_proposed(app), "every proposal")
        await pilot.press("ctrl+q")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the quit question")
        await pilot.pause()
        assert "6 operation(s) are undecided: quit without writing them?" in dialog_text(app)
        await pilot.press("alt+n")
        await pilot.press("alt+c")
        await until(pilot, lambda: isinstance(app.screen, ReasonScreen), "the reason input")
        await pilot.pause()
        shown = dialog_text(app)
        assert "Reject hunk 1 of inventory.py: why?" in shown
        assert "the model hears it with the next turn" in shown
        await pilot.press("escape")
        await pilot.press("alt+t", "alt+d", "alt+y", "alt+r")
        await until(pilot, lambda: isinstance(app.screen, CheckScreen), "the check pane")
        screen = app.screen
        await until(pilot, lambda: screen.result is not None, "the check's end")
        await pilot.pause()
        assert ("FAILED: check failed (exit 1) in 0.0 s: echo checking; exit 1; keep (alt+y) "
                "or roll back (alt+n)?") in dialog_text(app).replace(
                    f"{screen.result.duration_s:.1f} s", "0.0 s")
        output = screen.query_one(Log)
        assert not output.show_vertical_scrollbar and not output.show_horizontal_scrollbar
        await pilot.press("alt+n")
        await until(pilot, lambda: app.screen is app.main, "the roll back")


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_the_help_says_how_to_close_it_on_its_first_screen(
        repo: Path, demo_sim: SimProcess, size: tuple[int, int]) -> None:
    app = make_app(repo, demo_sim, prompt="")
    async with app.run_test(size=size) as pilot:
        await pilot.press("f1")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen), "the help")
        await pilot.pause()
        rows = screen_rows(app)
        assert "Keys" in rows[1] and "escape or f1 closes" in rows[-1]  # without scrolling
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is app.main, "the help closed")


async def test_the_files_pane_shows_its_context_summary_whole(repo: Path,
                                                              demo_sim: SimProcess) -> None:
    app = make_app(repo, demo_sim, prompt="")
    async with app.run_test(size=(120, 40)) as pilot:
        files = app.main.query_one(FilesPane)
        await pilot.press(*"/add README.md", "enter")
        await until(pilot, lambda: app.main.context.get("README.md") and
                    app.main.context.get("inventory.py"), "the token estimates")
        await pilot.pause()
        summary = f"3 in context · {tokens_label(files.context_tokens)} tok"
        left = [row[:files.region.right] for row in screen_rows(app)[files.region.y:
                                                                    files.region.bottom]]
        assert any(summary in row for row in left)
        assert not any("…" in row for row in (left[0], left[-1]))  # the borders are whole


async def test_at_80x24_what_can_not_apply_is_named_in_the_notice_and_its_row(
        repo: Path, demo_sim: SimProcess) -> None:
    """The second turn, against the files the first changed: what no longer fits is left out at
    once (its row says why, the notice names it); rejecting the rest writes nothing and says
    so. The repair round tries it first (the notice says so, not as final), then says what it
    did."""
    app = make_app(repo, demo_sim)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: all_proposed(app), "every proposal")
        await pilot.press("alt+shift+a", "alt+shift+r")
        await until(pilot, lambda: turn_over(app), "the first turn")
        said: list[str] = []
        say = app.main.say
        app.main.say = lambda text, *a, **k: (said.append(text), say(text, *a, **k))[1]
        await pilot.press("ctrl+r")  # the same reply, against the files it already changed
        await until(pilot, lambda: app.main.turn_worker is not None, "the second turn")
        await until(pilot, lambda: all_proposed(app), "every proposal again")
        review = app.main.query_one(ReviewPane)
        # first the notice says the repair round will try it (not final), then what it did
        await until(pilot, lambda: "repair: 0 of" in str(
            app.main.query_one("#notice").render()), "what can not apply, after the repair")
        # before the round, what can not apply is never said as final: "as written" (when the
        # fit check, in a thread, reports before the stream's end; on a busy machine it may not)
        early = said[:next(i for i, t in enumerate(said) if t.startswith("repair:"))]
        assert all("as written" in t for t in early if t.startswith("can't apply")), said
        await pilot.pause()
        notice = app.main.query_one("#notice")
        shown = screen_rows(app)[notice.region.y:notice.region.bottom]
        assert "inventory.py" in shown[0], shown
        assert "its lines are not in the file; line " in review.review.entries[0].problem
        assert "is nowhere in the file: " in review.review.entries[0].problem  # (named)
        def pane_rows() -> list[str]:
            return screen_rows(app)[review.region.y:review.region.bottom]

        # the cursor went on to the first undecided row (the delete and rename are listed
        # first), so the left-out operation may be out of view: a person reading "rows say
        # why" goes to it (n / p), then past its hunks to the row under them
        review.focus()
        await go_to(pilot, app, 0)
        for _ in range(3):
            if review.review.cursor is None or review.review.cursor.op != 0:
                break
            await pilot.press("alt+j")
        try:  # a frame after the notice, on a busy machine
            await until(pilot, lambda: any("can't apply: " in row for row in pane_rows())
                        and any("is nowhere in the" in row for row in pane_rows()),
                        "the row's reason painted, naming the line")
        except AssertionError as exc:
            raise AssertionError(f"{exc}; the review pane shows: {pane_rows()}") from None
        await pilot.press("alt+shift+r")
        await until(pilot, lambda: turn_over(app), "the second turn's end")
        assert "nothing written" in str(notice.render())


async def test_at_60x20_a_long_notice_leaves_the_header_and_footer_in_view(
        repo: Path, demo_sim: SimProcess) -> None:
    app = make_app(repo, demo_sim, **{"review.check": "exit 1", "review.fix_rounds": "0"})
    async with app.run_test(size=(60, 20)) as pilot:
        await until(pilot, lambda: all_proposed(app), "every proposal")
        await pilot.press("alt+t", "alt+r", "alt+r")
        await until(pilot, lambda: isinstance(app.screen, CheckScreen), "the check pane")
        screen = app.screen
        await until(pilot, lambda: screen.result is not None, "the check's end")
        await pilot.press("alt+n")
        await until(pilot, lambda: "rolled back" in str(app.main.query_one("#notice").render()),
                    "the roll back")
        await pilot.pause()
        rows = screen_rows(app)
        assert app.main.query_one("#notice").region.height >= 3  # wrapped at 60 columns
        assert rows[0].startswith(" spark-pair") and "keys" in rows[-1]
        assert app.main.max_scroll_y == 0  # the screen itself does not scroll
