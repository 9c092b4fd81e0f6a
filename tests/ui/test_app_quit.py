"""ctrl+q asks before it leaves work half done: while a tried turn's check runs (the turn is
written, keep or roll back not answered) and mid-stream with operations accepted but not yet
written; with nothing at stake it quits at once. Pilot against the simulator process in a real
git repository."""

from __future__ import annotations

from pathlib import Path

from support.apps import QUICK_OP, all_proposed, make_app, review, turn_over, typed, until
from textual import events

from spark_pair.sim.demo_project import FILES, MATCH, reply_text
from spark_pair.sim.process import SimProcess
from spark_pair.ui.screens.check import CheckScreen
from spark_pair.ui.screens.quitting import QuitQuestion
from spark_pair.ui.widgets.prompt import Prompt


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


async def quit_saying(app, pilot, before: str, during: str) -> str:
    """A turn under review, `before` typed, ctrl+q, `during` typed on the question, alt+y:
    what the app printed as it left."""
    said: list[object] = []
    exit_app = app.exit
    app.exit = lambda *a, **kw: (said.append(kw.get("message")), exit_app(*a, **kw))[1]
    await until(pilot, lambda: all_proposed(app), "every proposal")
    if before:
        await typed(pilot, before)
    await pilot.press("ctrl+q")
    await until(pilot, lambda: isinstance(app.screen, QuitQuestion), "the quit question")
    await typed(pilot, during)
    await pilot.press("alt+y")
    await until(pilot, lambda: not app.is_running, "the exit")
    return str(said[-1]) if said and said[-1] is not None else ""


async def test_text_typed_while_the_quit_question_is_open_is_printed_as_the_app_leaves(
        repo: Path, demo_sim: SimProcess) -> None:
    """An empty prompt when ctrl+q asks, the next instruction typed on the question (it goes
    to the prompt), alt+y: the app prints it as it leaves (before: the draft was read as the
    question opened, so nothing was printed)."""
    app = make_app(repo, demo_sim)
    async with app.run_test(size=(80, 24)) as pilot:
        note = await quit_saying(app, pilot, "", "my long careful next instruction")
    assert "your unsent prompt:" in note and "my long careful next instruction" in note, note


async def test_text_typed_before_and_on_the_quit_question_is_printed_whole(
        repo: Path, demo_sim: SimProcess) -> None:
    """Half typed before ctrl+q, the rest on the question: both halves are printed (before:
    only the first)."""
    app = make_app(repo, demo_sim)
    async with app.run_test(size=(80, 24)) as pilot:
        note = await quit_saying(app, pilot, "first half", " and the second half")
    assert "first half and the second half" in note, note


async def test_the_quit_question_counts_a_drafts_lines_as_the_prompts_border_does(
        repo: Path, demo_sim: SimProcess) -> None:
    """Three lines and a line break after them: the border and the question both say 3 lines
    (before: the border said 4, counting the empty row after the break)."""
    app = make_app(repo, demo_sim, prompt="")
    async with app.run_test(size=(80, 24)) as pilot:
        prompt = app.main.query_one(Prompt)
        prompt.value = "first line\nsecond line\nthird line\n"
        await pilot.pause()
        assert "3 lines" in str(prompt.border_subtitle), prompt.border_subtitle
        await pilot.press("ctrl+q")
        await until(pilot, lambda: isinstance(app.screen, QuitQuestion), "the quit question")
        assert "3 lines" in question(app), question(app)
        await pilot.press("alt+n")


async def test_the_quit_question_names_the_text_as_it_is_once_more_is_typed(
        repo: Path, demo_sim: SimProcess) -> None:
    """Text typed and pasted under the quit question goes to the prompt: the question names
    the prompt as it is now (before: the words and the line count of when it was asked)."""
    app = make_app(repo, demo_sim)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: all_proposed(app), "every proposal")
        await typed(pilot, "keep it short")
        await pilot.press("ctrl+q")
        await until(pilot, lambda: isinstance(app.screen, QuitQuestion), "the quit question")
        assert '"keep it short", 1 line' in question(app), question(app)
        app.screen.post_message(events.Paste("\nand add a test\nfor it"))
        await until(pilot, lambda: "3 lines" in question(app), "the question renewed")
        assert '"keep it short and add a test for it", 3 lines' in question(app), question(app)
        await pilot.press("alt+n")
        await until(pilot, lambda: app.screen is app.main, "back")
        await pilot.press("alt+shift+r")
        await until(pilot, lambda: turn_over(app), "the end of the turn")


async def test_backspace_and_ctrl_u_under_a_question_mend_the_prompt(
        repo: Path, demo_sim: SimProcess) -> None:
    """Text typed under the quit question goes to the prompt; backspace and ctrl+u there mend
    it too (before: they did nothing, so a typo could not be fixed until the question went)."""
    app = make_app(repo, demo_sim)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: all_proposed(app), "every proposal")
        await pilot.press("ctrl+q")
        await until(pilot, lambda: isinstance(app.screen, QuitQuestion), "the quit question")
        prompt = app.main.query_one(Prompt)
        await typed(pilot, "cccxy")
        await pilot.press("backspace", "backspace", "Z")
        await until(pilot, lambda: prompt.text == "cccZ", "the mended text")
        assert '"cccZ", 1 line' in question(app), question(app)
        await pilot.press("ctrl+u")
        await until(pilot, lambda: prompt.text == "", "the cleared prompt")
        assert isinstance(app.screen, QuitQuestion)  # (the question stays: it answers nothing)
        await pilot.press("alt+n")
        await until(pilot, lambda: app.screen is app.main, "back")
        await pilot.press("alt+shift+r")
        await until(pilot, lambda: turn_over(app), "the end of the turn")
