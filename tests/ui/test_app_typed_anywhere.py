"""`?` and `q` are text and a paste goes to the prompt whole, wherever it lands: the prompt,
a pane, the live diff, a question, the check, the keys screen (f1 opens and closes that). Driven
with the pilot against the simulator process in a real git repository."""

from __future__ import annotations

from pathlib import Path

from support.apps import (
    all_proposed,
    edit_bodies,
    make_app,
    review,
    screen_text,
    turn_over,
    until,
)
from textual import events

from spark_pair.sim.demo_project import PROMPT
from spark_pair.sim.process import SimProcess
from spark_pair.ui.dialogs.confirm import ConfirmScreen
from spark_pair.ui.screens.check import CheckScreen
from spark_pair.ui.screens.help import HelpScreen
from spark_pair.ui.widgets.diff_view import DiffView
from spark_pair.ui.widgets.files import FilesPane
from spark_pair.ui.widgets.prompt import Prompt
from spark_pair.ui.widgets.review import ReviewPane

PASTED = "alpha line\nbeta line\ngamma line"


async def test_a_question_mark_is_text_and_f1_opens_the_keys(repo: Path,
                                                              demo_sim: SimProcess) -> None:
    """`?quick brown fox` on the empty prompt, and `is it right?` from the files pane, land in
    the prompt; f1 opens the keys screen, where q and ? typed go to the prompt too; escape and
    f1 close it."""
    app = make_app(repo, demo_sim, prompt="")
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.main.driver.session is not None, "the repository")
        prompt = app.main.query_one(Prompt)
        await pilot.press(*"?quick brown fox")
        await pilot.pause(0.1)
        assert app.screen is app.main
        assert prompt.text == "?quick brown fox"
        app.main.query_one(FilesPane).focus()
        await pilot.press(*" is it right?")
        await pilot.pause(0.1)
        assert app.screen is app.main
        assert prompt.text == "?quick brown fox is it right?"
        footer = app.main.query_one("AppFooter")
        assert any(k.display == "f1" for k in footer.pinned)  # help, at the right
        await pilot.press("f1")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen), "the keys screen")
        await pilot.press(*" q?")
        await pilot.pause(0.1)
        assert isinstance(app.screen, HelpScreen)  # q and ? do not close it
        assert prompt.text == "?quick brown fox is it right? q?"
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is app.main, "the keys screen closed")
        await pilot.press("f1")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen), "the keys screen")
        await pilot.press("f1")
        await until(pilot, lambda: app.screen is app.main, "the keys screen closed by f1")
        assert prompt.text == "?quick brown fox is it right? q?"


async def paste_lands(pilot, app, expected: str) -> str:
    """Paste PASTED as the terminal does; the prompt then holds `expected` + it."""
    app.post_message(events.Paste(PASTED))
    want = expected + PASTED
    prompt = app.main.query_one(Prompt)
    await until(pilot, lambda: prompt.text == want, f"the paste in the prompt ({prompt.text!r})")
    return want


async def test_a_paste_anywhere_goes_to_the_prompt_whole(repo: Path, demo_sim: SimProcess,
                                                        tmp_path: Path) -> None:
    """Under review (the demo), a three-line paste with the focus on the review pane, the files
    pane, the live diff, with a question open, the keys screen open and the check pane open:
    every line reaches the prompt, nothing is decided."""
    app = make_app(repo, demo_sim, **{"review.check": "sleep 0.5", "review.fix_rounds": "0"})
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: all_proposed(app), "every proposal")
        await until(pilot, lambda: not app.main.streaming, "the end of the stream")
        app.main.query_one(Prompt).value = ""
        text = ""
        for pane in (ReviewPane, FilesPane, DiffView):
            app.main.query_one(pane).focus()
            await pilot.pause()
            text = await paste_lands(pilot, app, text)
        assert len(review(app).review.undecided()) == 6
        answers: list[bool] = []
        app.push_screen(ConfirmScreen("rename it?"), answers.append)
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question")
        text = await paste_lands(pilot, app, text)
        assert isinstance(app.screen, ConfirmScreen) and not answers
        await pilot.press("escape")
        await pilot.press("f1")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen), "the keys screen")
        text = await paste_lands(pilot, app, text)
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is app.main, "the main screen")
        await pilot.press("alt+t", "alt+shift+r")
        await until(pilot, lambda: isinstance(app.screen, CheckScreen), "the check pane")
        text = await paste_lands(pilot, app, text)
        await until(pilot, lambda: app.screen.result is not None, "the check's end")
        await pilot.press("alt+y")
        await until(pilot, lambda: turn_over(app), "the end of the turn")
        assert app.main.query_one(Prompt).text == text


async def test_ctrl_u_clears_every_line_and_a_command_is_the_prompts_only_line(
        repo: Path, demo_sim: SimProcess) -> None:
    """A pasted three lines, ctrl+u: the prompt is empty. `/undo` under a line of text is part
    of an instruction (enter sends it to the model, no command runs)."""
    app = make_app(repo, demo_sim, prompt="")
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.main.driver.session is not None, "the repository")
        prompt = app.main.query_one(Prompt)
        app.post_message(events.Paste(PASTED))
        await until(pilot, lambda: prompt.text == PASTED, "the paste")
        await pilot.press("ctrl+u")
        assert prompt.text == ""
        ran: list[str] = []
        app.main.run_command = ran.append  # type: ignore[method-assign]
        app.post_message(events.Paste("/undo\nthe last change, then explain"))
        await until(pilot, lambda: prompt.text.startswith("/undo"), "the paste")
        demo_sim.clear_requests()
        await pilot.press("enter")
        await until(pilot, lambda: edit_bodies(demo_sim), "the request")
        assert ran == []
        sent = repr(edit_bodies(demo_sim)[0])
        assert "/undo" in sent and "the last change, then explain" in sent


async def test_the_demos_whole_instruction_is_reachable(repo: Path, demo_sim: SimProcess) -> None:
    """The live diff's border cuts the sent instruction at 80 columns; its tooltip holds it
    whole, and ↑ in the empty prompt brings it back whole."""
    app = make_app(repo, demo_sim, prompt=PROMPT)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: all_proposed(app), "every proposal")
        diff = app.main.query_one(DiffView)
        await pilot.pause()
        assert "sent: " + PROMPT[:30] in screen_text(app) and PROMPT not in screen_text(app)
        assert str(diff.tooltip) == f"sent: {PROMPT}"
        prompt = app.main.query_one(Prompt)
        prompt.value = ""
        await pilot.press("up")
        assert prompt.text == PROMPT
