"""Questions stacked on questions: what is typed or pasted under them reaches the prompt, the
footer shows the keys of the screen on top, f1 opens and closes the keys anywhere (a remapped
key too), and ctrl+q names an unsent draft and prints it on the way out. Pilot against the
simulator process in a real git repository."""

from __future__ import annotations

from pathlib import Path

from support.apps import (
    all_proposed,
    entries_of,
    go_to,
    make_app,
    notice,
    review,
    screen_rows,
    until,
)
from textual import events

from spark_pair.edits.ops import OpKind
from spark_pair.sim.process import SimProcess
from spark_pair.ui.dialogs.confirm import ConfirmScreen
from spark_pair.ui.screens.check import CheckScreen
from spark_pair.ui.screens.help import HelpScreen
from spark_pair.ui.screens.quitting import QuitQuestion
from spark_pair.ui.widgets.footer import AppFooter
from spark_pair.ui.widgets.prompt import Prompt

FAILING = "sh -c 'echo AssertionError: expected 90 got 91; exit 1'"
PASTED = "alpha line\nbeta line\ngamma line"


def offered(app) -> set[str]:
    return {k.display for k in app.main.query_one(AppFooter).keys}


def question(app) -> str:
    return str(app.screen.query_one("Label").render())


async def test_typed_over_the_quit_question_over_the_check_reaches_the_prompt(
        repo: Path, demo_sim: SimProcess) -> None:
    """alt+t with a failing check, ctrl+q over the check pane: `quit now y` typed there is in
    the prompt once the question is answered no; the footer showed the question's keys, then
    the check's (never the prompt's enter or the review's chords)."""
    app = make_app(repo, demo_sim, **{"review.check": FAILING, "review.fix_rounds": "0"})
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: all_proposed(app), "every proposal")
        await pilot.press("alt+t", "alt+shift+r")
        await until(pilot, lambda: isinstance(app.screen, CheckScreen)
                    and app.screen.result is not None, "the failed check")
        check = app.screen
        await until(pilot, lambda: "alt+y" in offered(app), "the check's keys in the footer")
        assert not {"⏎", "^r", "alt+a"} & offered(app), offered(app)
        await pilot.press("ctrl+q")
        await until(pilot, lambda: isinstance(app.screen, QuitQuestion), "the quit question")
        await until(pilot, lambda: "alt+y yes" in screen_rows(app)[-1], "the question's keys")
        assert "keep" not in screen_rows(app)[-1] and "⏎" not in screen_rows(app)[-1]
        await pilot.press(*"quit now y")
        await pilot.pause(0.1)
        assert isinstance(app.screen, QuitQuestion)  # y answered nothing
        assert app.main.query_one(Prompt).text == "quit now y"
        await pilot.press("alt+n")
        await until(pilot, lambda: app.screen is check, "back to the check")
        await until(pilot, lambda: "alt+y keep" in screen_rows(app)[-1], "the check's keys")
        assert app.main.query_one(Prompt).text == "quit now y"
        await pilot.press("alt+n")  # roll back
        await until(pilot, lambda: app.screen is app.main, "the check closed")
        assert app.main.query_one(Prompt).text == "quit now y"


async def test_a_paste_over_the_quit_question_over_the_delete_question_is_kept(
        repo: Path, demo_sim: SimProcess) -> None:
    """alt+d on the delete, ctrl+q over its question, three lines pasted: after alt+n alt+n
    the prompt holds all three; the footer offered alt+d while a delete was undecided only."""
    app = make_app(repo, demo_sim)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: all_proposed(app), "every proposal")
        assert "alt+d" in offered(app)
        await until(pilot, lambda: "⏎ decide first" in screen_rows(app)[-1],
                    "enter's label at 80 columns")
        await go_to(pilot, app, entries_of(app, OpKind.DELETE)[0].index)
        await pilot.press("alt+d")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "delete question")
        assert "Delete" in question(app) or "delete" in question(app), question(app)
        await pilot.press("ctrl+q")
        await until(pilot, lambda: isinstance(app.screen, QuitQuestion), "the quit question")
        app.screen.post_message(events.Paste(PASTED))
        await pilot.pause(0.1)
        await pilot.press("alt+n")
        await until(pilot, lambda: type(app.screen) is ConfirmScreen, "the delete question")
        await pilot.press("alt+n")
        await until(pilot, lambda: app.screen is app.main, "the main screen")
        assert app.main.query_one(Prompt).text == PASTED
        await pilot.press("alt+r")  # the delete, then the rename
        await go_to(pilot, app, entries_of(app, OpKind.RENAME)[0].index)
        await pilot.press("alt+r")
        await until(pilot, lambda: not any(e.needs_confirm and e.undecided
                                           for e in review(app).review.entries.values()),
                    "delete and rename decided")
        await until(pilot, lambda: "alt+d" not in offered(app), "alt+d gone")


async def test_try_on_a_turn_with_a_delete_says_what_it_accepted(
        repo: Path, demo_sim: SimProcess) -> None:
    """alt+t with the delete and rename undecided: the notice counts what it accepted and says
    the delete and rename wait for their own decision."""
    app = make_app(repo, demo_sim, **{"review.check": "true"})
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: all_proposed(app), "every proposal")
        await pilot.press("alt+t")
        await until(pilot, lambda: "like alt+A" in notice(app), "the notice")
        said = " ".join(notice(app).split())
        assert "decide the 2 delete/rename(s) first" in said, said


async def test_ctrl_q_with_a_draft_asks_once_and_prints_it(repo: Path,
                                                           demo_sim: SimProcess) -> None:
    """Nothing at stake but two lines in the prompt: ctrl+q asks, naming their first words and
    count; a second ctrl+q quits and the draft is printed as the app leaves."""
    app = make_app(repo, demo_sim, prompt="")
    said: list[object] = []
    exit_app = app.exit
    app.exit = lambda *a, **kw: (said.append(kw.get("message")), exit_app(*a, **kw))[1]
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.main.driver.session is not None, "the repository")
        app.main.query_one(Prompt).focus()
        await pilot.press(*"Also add a test", "ctrl+j", *"for [the] discount")
        await pilot.press("ctrl+q")
        await until(pilot, lambda: isinstance(app.screen, QuitQuestion), "the quit question")
        assert '"Also add a test for [the] discount", 2 lines' in question(app), question(app)
        assert app.is_running
        await pilot.press("ctrl+q")
        await until(pilot, lambda: not app.is_running, "the exit")
    assert said and "Also add a test\nfor [the] discount" in str(said[-1])


async def test_f1_works_over_a_question_and_a_remapped_help_key_closes_help(
        repo: Path, demo_sim: SimProcess) -> None:
    """[keys] "app.help" = "f2": f2 opens the keys screen and closes it, and its border names
    f2; over the delete question f2 opens it too, and closing it goes back to the question."""
    (repo / ".spark-pair.toml").write_text('[keys]\n"app.help" = "f2"\n')
    app = make_app(repo, demo_sim)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: all_proposed(app), "every proposal")
        await pilot.press("f2")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen), "the keys screen")
        assert "escape or f2 closes" in "\n".join(screen_rows(app))
        await pilot.press("f2")
        await until(pilot, lambda: app.screen is app.main, "the keys screen closed")
        await go_to(pilot, app, entries_of(app, OpKind.DELETE)[0].index)
        await pilot.press("alt+d")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "delete question")
        asked = app.screen
        await pilot.press("f2")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen), "keys over the question")
        await pilot.press("f2")
        await until(pilot, lambda: app.screen is asked, "back to the question")
