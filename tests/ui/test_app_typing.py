"""Typing never decides: sentences typed at every moment of a turn (before the first proposal,
mid-stream, under review, while a check runs, in the demo) land in the prompt and decide, write,
open and run nothing; the review's chords still decide. A paste keeps every line and the request
carries them. Driven with the pilot against the simulator process in a real git repository."""

from __future__ import annotations

import stat
import string
import sys
from pathlib import Path

import pytest
from support.apps import (
    all_proposed,
    edit_bodies,
    go_to,
    make_app,
    notice,
    review,
    turn_over,
    typed,
    until,
)
from support.runs import make_repo
from textual import events

from spark_pair.sim.demo_project import FILES
from spark_pair.sim.process import SimProcess
from spark_pair.ui.review_state import Mark
from spark_pair.ui.screens.check import CheckScreen
from spark_pair.ui.textual_private import ChordParser
from spark_pair.ui.widgets.diff_view import DiffView
from spark_pair.ui.widgets.files import FilesPane
from spark_pair.ui.widgets.prompt import Prompt
from spark_pair.ui.widgets.review import ReviewPane

SENTENCE = "Also add a test for the discount"
LETTERS = " ".join(string.ascii_lowercase) + " " + " ".join(string.ascii_uppercase)


def tools(tmp: Path) -> tuple[dict[str, str], Path, Path]:
    """A pager and a check that leave a mark when they run (they must not)."""
    paged, checked = tmp / "paged", tmp / "checked"
    pager = tmp / "pager.py"
    pager.write_text(f"#!{sys.executable}\nopen({str(paged)!r}, 'w').write('x')\n")
    pager.chmod(pager.stat().st_mode | stat.S_IXUSR)
    return ({"review.pager": str(pager), "review.check": f"touch {checked}",
             "review.fix_rounds": "0"}, paged, checked)


def tree(repo: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in repo.iterdir() if p.is_file()}


def prompt_of(app) -> Prompt:
    return app.main.query_one(Prompt)


async def decides_nothing(pilot, app, repo: Path, before: dict[str, str], text: str,
                          marks: tuple[Path, ...]) -> None:
    """Type `text` (the prompt emptied first): it is all in the prompt; nothing decided,
    written, opened or run."""
    undecided = len(review(app).review.undecided())
    prompt_of(app).value = ""
    await typed(pilot, text)
    await pilot.pause(0.1)
    assert prompt_of(app).text == text
    assert prompt_of(app).has_focus
    assert len(review(app).review.undecided()) >= undecided  # (more may have arrived)
    for entry in review(app).review.entries.values():
        assert entry.mark is Mark.UNDECIDED and set(entry.hunks) <= {Mark.UNDECIDED}
        assert not entry.sent
    assert tree(repo) == before
    assert not any(m.exists() for m in marks)
    assert not isinstance(app.screen, CheckScreen)


async def test_the_demo_opens_with_the_prompt_focused_and_a_sentence_decides_nothing(
        repo: Path, demo_sim: SimProcess, tmp_path: Path) -> None:
    """Under review (the demo's turn, every operation proposed): the sentence of the report
    and every letter a-z A-Z, typed from the prompt, the review pane, the files pane and the live
    diff."""
    overrides, paged, checked = tools(tmp_path)
    before = tree(repo)
    app = make_app(repo, demo_sim, **overrides)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: all_proposed(app), "every proposal")
        await until(pilot, lambda: not app.main.streaming, "the end of the stream")
        assert prompt_of(app).has_focus  # the review did not take the focus
        for text in (SENTENCE, LETTERS):
            await decides_nothing(pilot, app, repo, before, text, (paged, checked))
        for pane in (ReviewPane, FilesPane, DiffView):  # (the live diff takes the focus too)
            app.main.query_one(pane).focus()
            await pilot.pause()
            await decides_nothing(pilot, app, repo, before, SENTENCE, (paged, checked))
        assert len(review(app).review.undecided()) == 6
        # the chords decide: the footer names them
        footer = app.main.query_one("AppFooter")
        assert any(k.display == "alt+a" and k.label == "accept" for k in footer.keys)
        assert any(k.display == "alt+A" for k in footer.keys)
        await pilot.press("alt+o")
        await until(pilot, paged.exists, "the pager")
        await pilot.press("alt+shift+a")
        assert len(review(app).review.undecided()) == 2  # the delete and the rename wait
        await pilot.press("alt+shift+r")
        await until(pilot, lambda: turn_over(app), "the end of the turn")
        assert prompt_of(app).text == SENTENCE  # what was typed stays for enter
    assert (repo / "inventory.py").read_text() != FILES["inventory.py"]  # accepted: written
    assert (repo / "TODO.txt").exists() and (repo / "stock.csv").exists()  # rejected


async def test_typing_before_the_first_proposal_and_mid_stream_decides_nothing(
        repo: Path, demo_sim: SimProcess, tmp_path: Path) -> None:
    """A slow start and a slow stream: a sentence typed before anything is proposed and one
    typed while operations arrive land in the prompt; the turn still waits for decisions."""
    overrides, paged, checked = tools(tmp_path)
    before = tree(repo)
    demo_sim.configure(tps=150, ttft_ms=600)
    app = make_app(repo, demo_sim, **overrides)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.main.streaming, "the request")
        assert not review(app).review.entries
        await decides_nothing(pilot, app, repo, before, SENTENCE, (paged, checked))
        await until(pilot, lambda: review(app).review.entries, "the first proposal")
        assert app.main.streaming and not all_proposed(app), (
            notice(app), app.main.turn_worker, len(review(app).review.entries))
        await decides_nothing(pilot, app, repo, before, LETTERS, (paged, checked))
        assert not all_proposed(app)  # typed while operations arrive
        await until(pilot, lambda: all_proposed(app), "every proposal")
        assert len(review(app).review.undecided()) == 6
        await pilot.press("alt+shift+r")
        await until(pilot, lambda: turn_over(app), "the end of the turn")
    assert tree(repo) == before


async def test_a_sentence_typed_while_the_check_runs_answers_nothing(
        repo: Path, demo_sim: SimProcess, tmp_path: Path) -> None:
    """alt+t applies and runs the check; a sentence typed meanwhile (and after it ended) goes
    to the prompt under the check pane and neither keeps nor rolls back; alt+y keeps."""
    done = tmp_path / "checked"
    app = make_app(repo, demo_sim, **{"review.check": f"sleep 0.5; touch {done}",
                                      "review.fix_rounds": "0"})
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: all_proposed(app), "every proposal")
        await pilot.press("alt+t", "alt+shift+r")  # the delete and the rename are rejected
        await until(pilot, lambda: isinstance(app.screen, CheckScreen), "the check pane")
        check = app.screen
        await typed(pilot, "yes no " + SENTENCE)
        await until(pilot, lambda: check.result is not None, "the check's end")
        await typed(pilot, " y n")
        await pilot.pause(0.1)
        assert app.screen is check  # not answered
        assert prompt_of(app).text == "yes no " + SENTENCE + " y n"
        written = (repo / "inventory.py").read_text()
        assert written != FILES["inventory.py"]  # applied, not rolled back
        await pilot.press("alt+y")
        await until(pilot, lambda: app.screen is app.main, "the answer")
        await pilot.pause(0.1)
        assert (repo / "inventory.py").read_text() == written  # kept
        await pilot.press("!")  # the prompt's cursor is after what went to it
        assert prompt_of(app).text == "yes no " + SENTENCE + " y n!"


async def test_a_pasted_three_line_instruction_is_sent_whole(repo: Path,
                                                             demo_sim: SimProcess) -> None:
    """A bracketed paste of three lines: the prompt holds them all (it grows; its border says
    3 lines), ctrl+j adds a fourth by hand, and enter sends every line in one request."""
    app = make_app(repo, demo_sim, prompt="")
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.main.driver.session is not None, "the repository")
        prompt = prompt_of(app)
        height = prompt.outer_size.height
        pasted = "add an optional discount\nto the order total\nand note it in the changelog"
        app.post_message(events.Paste(pasted))  # as the terminal sends it
        await pilot.pause(0.1)
        assert prompt.text == pasted
        assert prompt.outer_size.height == height + 2  # three rows of text, not one
        assert "3 lines" in str(prompt.border_subtitle)
        await pilot.press("ctrl+j", *"keep it", "ctrl+j", *"short")
        assert prompt.text == pasted + "\nkeep it\nshort"  # typed on, after each new line
        assert "5 lines" in str(prompt.border_subtitle)
        demo_sim.clear_requests()
        await pilot.press("enter")
        await until(pilot, lambda: edit_bodies(demo_sim), "the request")
        await until(pilot, lambda: all_proposed(app), "every proposal")
        sent = repr(edit_bodies(demo_sim)[0])
        for line in [*pasted.splitlines(), "keep it", "short"]:
            assert line in sent, line
        assert "to the order total\\\\nand note it" in sent or \
            "to the order total\\nand note it" in sent  # the lines, in one message
        await pilot.press("alt+shift+r")
        await until(pilot, lambda: turn_over(app), "the end of the turn")


async def test_a_paste_ending_in_a_line_break_starts_no_empty_line(
        repo: Path, demo_sim: SimProcess) -> None:
    """Text copied with its last line's end: the prompt holds its lines and no empty one after
    them (before: an empty row, and a border that said one line fewer than it showed)."""
    app = make_app(repo, demo_sim, prompt="")
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.main.driver.session is not None, "the repository")
        prompt = prompt_of(app)
        height = prompt.outer_size.height
        app.post_message(events.Paste("Line one\nLine two?\n"))
        await pilot.pause(0.1)
        assert prompt.text == "Line one\nLine two?"
        assert prompt.outer_size.height == height + 1 and "2 lines" in str(prompt.border_subtitle)
        assert prompt.cursor_location == prompt.document.end
        app.post_message(events.Paste("\n"))  # a paste of a line break alone stays one
        await pilot.pause(0.1)
        assert prompt.text == "Line one\nLine two?\n"


async def test_a_sentence_typed_during_a_fix_round_decides_nothing(
        tmp_path: Path, sim: SimProcess, monkeypatch: pytest.MonkeyPatch) -> None:
    """alt+t on a turn whose check fails, then alt+y on the failed check, starts a fix round: a
    sentence typed while its check runs, while its failure waits, and while the round streams and
    waits lands in the prompt; the round stays undecided
    and unwritten until alt+A, and then its check passes."""
    monkeypatch.setenv("SPARK_PAIR_HOME", str(tmp_path / "home"))
    for var in ("SPARK_PAIR_BASE_URL", "SPARK_PAIR_MODEL", "SPARK_PAIR_TRANSPORT"):
        monkeypatch.delenv(var, raising=False)
    repo = make_repo(tmp_path / "repo", {"calc.py": "def add(a, b):\n    return 0\n",
                                         "check.py": "import time, calc\ntime.sleep(0.5)\n"
                                                     "assert calc.add(2, 3) == 5, 'no'\n"})

    def diff(old: str, new: str) -> str:
        return (f"```diff\n--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n"
                f"-    return {old}\n+    return {new}\n```\n")

    sim.configure(tps=40, replies=[{"match": "", "check": "no", "text": diff("a - b", "a + b")},
                                   {"match": "ADD", "text": diff("0", "a - b")}])
    app = make_app(repo, sim, prompt="ADD numbers in calc.py", files=("calc.py",),
                   **{"review.check": "python3 check.py", "context.auto": "false",
                      "review.fix_rounds": "1"})
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: review(app).review.undecided(), "the first proposal")
        await pilot.press("alt+t")
        await until(pilot, lambda: isinstance(app.screen, CheckScreen), "the check")
        await typed(pilot, SENTENCE)
        await until(pilot, lambda: isinstance(app.screen, CheckScreen) and
                    app.screen.result is not None, "the failed check")
        await typed(pilot, " y")  # the failed check waits: a typed y sends nothing
        await pilot.pause(0.2)
        assert isinstance(app.screen, CheckScreen) and "fix round" not in notice(app)
        await pilot.press("alt+y")  # keep the turn and send the output
        await until(pilot, lambda: "fix round 1" in notice(app), "the round's start")
        await typed(pilot, " " + LETTERS)
        await until(pilot, lambda: review(app).review.undecided(), "the round's proposal")
        await typed(pilot, " y n")
        await pilot.pause(0.2)
        assert prompt_of(app).text == f"{SENTENCE} y {LETTERS} y n"
        assert (repo / "calc.py").read_text().endswith("return a - b\n")  # the round: unwritten
        assert len(review(app).review.undecided()) == 1
        await pilot.press("alt+shift+a")
        await until(pilot, lambda: "the check passes after 1 round" in notice(app), "green")
        assert (repo / "calc.py").read_text().endswith("return a + b\n")
        assert prompt_of(app).text == f"{SENTENCE} y {LETTERS} y n"


async def test_keys_of_one_terminal_write_keep_their_order(repo: Path,
                                                           demo_sim: SimProcess) -> None:
    """A sentence with a new line in it, delivered in one batch as a terminal write (or a
    tmux send-keys) delivers it, with the focus on the review pane: every key in order."""
    app = make_app(repo, demo_sim)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: all_proposed(app), "every proposal")
        app.main.query_one(ReviewPane).focus()
        await pilot.pause()
        for key, char in [*((c, c) for c in "Also"), ("ctrl+j", "\n"),
                          *((c, c) for c in "add a test")]:
            app.post_message(events.Key(key, char))
        await until(pilot, lambda: prompt_of(app).text == "Also\nadd a test", "the text")
        assert len(review(app).review.undecided()) == 6
        await pilot.press("alt+shift+r")
        await until(pilot, lambda: turn_over(app), "the end of the turn")



@pytest.mark.parametrize("burst", ["\t\x15add a docstring to add\x0aand mul\r",
                                   "add a docstring to add\x0aand mul\r"])
async def test_a_burst_of_keys_lands_in_the_order_typed(repo: Path, demo_sim: SimProcess,
                                                        burst: str) -> None:
    """Keys of one terminal write (tmux send-keys, a macro, ssh): tab to the live diff, ctrl+u,
    a sentence with a new line (ctrl+j), enter; or the sentence typed into the prompt. The
    turn is sent with the whole sentence (before: its first letters came after the rest, the
    new line before the letters ahead of it, or the ctrl+u cleared letters typed after it)."""
    app = make_app(repo, demo_sim, prompt="")
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.main.driver.session is not None, "the repository")
        parser = ChordParser()  # the app's own reader of a terminal's input
        for event in (*parser.feed(burst), *parser.feed("")):
            app.post_message(event)
        await until(pilot, lambda: app.main.last_prompt, "the turn")
        assert app.main.last_prompt == "add a docstring to add\nand mul"
        await pilot.press("escape")


@pytest.mark.parametrize(("focus", "burst", "left"), [
    ("prompt", "xyz\x15after", "after"),  # ctrl+u between the words: the first go
    ("diff", "\x15add a docstring", "add a docstring"),  # on the live diff: nothing to clear
    ("diff", "add\x15more", "more"),  # the first word took the focus to the prompt
])
async def test_a_key_with_a_binding_acts_where_it_was_typed_among_letters(
        repo: Path, demo_sim: SimProcess, focus: str, burst: str, left: str) -> None:
    """ctrl+u in one terminal write with letters: it clears what was typed before it, where
    it was typed (before: it ran once it came back up to the app, after the letters behind
    it, and on whatever had the focus then: the letters typed after it were cleared)."""
    app = make_app(repo, demo_sim, prompt="")
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.main.driver.session is not None, "the repository")
        app.main.query_one(f"#{focus}").focus()
        await pilot.pause()
        parser = ChordParser()
        for event in (*parser.feed(burst), *parser.feed("")):
            app.post_message(event)
        await until(pilot, lambda: prompt_of(app).text == left, "the prompt")
        await pilot.pause(0.2)
        assert prompt_of(app).text == left


async def test_text_typed_right_after_enter_stays_and_the_sent_text_goes(
        repo: Path, demo_sim: SimProcess) -> None:
    """An instruction, enter and more words in one burst (the terminal's one read): the turn
    is sent with the instruction; once its first frame comes the prompt holds only what was
    typed after enter (before: the prompt had changed, so the sent text stayed in front)."""
    demo_sim.configure(ttft_ms=300)  # the words come before the turn's first frame
    app = make_app(repo, demo_sim, prompt="")
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.main.driver.session is not None, "the repository")
        parser = ChordParser()  # the app's own reader of a terminal's input
        for event in (*parser.feed("rename total to order_total everywhere\rand keep a"),
                      *parser.feed("")):
            app.post_message(event)
        await until(pilot, lambda: app.main.last_prompt, "the turn")
        assert app.main.last_prompt == "rename total to order_total everywhere"
        await until(pilot, lambda: not app.main._clear_pending, "the turn's first frame")
        assert prompt_of(app).text == "and keep a"
        assert "and keep a" not in str(edit_bodies(demo_sim)[-1])
        await pilot.press("escape")


async def test_the_pane_with_the_focus_shows_it_by_its_border_not_only_its_colour(
        repo: Path, demo_sim: SimProcess) -> None:
    """The focused pane's border is heavy, the others' round: the focus shows with NO_COLOR
    or a monochrome theme too (before: only the border's colour changed)."""
    app = make_app(repo, demo_sim)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: all_proposed(app), "every proposal")
        panes = [app.main.query_one(f"#{name}") for name in ("prompt", "diff", "review")]

        def borders() -> list[str]:
            return [pane.styles.border.top[0] for pane in panes]

        for focused in range(3):
            panes[focused].focus()
            await until(pilot, lambda f=focused: app.focused is panes[f], f"pane {focused}")
            await pilot.pause()
            assert borders() == ["heavy" if i == focused else "round" for i in range(3)]
        await pilot.press("alt+shift+r")
        await until(pilot, lambda: turn_over(app), "the end of the turn")


async def test_tab_tab_up_in_one_write_moves_twice_then_acts_on_the_review(
        repo: Path, demo_sim: SimProcess) -> None:
    """From the live diff, tab tab up in one terminal write: the focus goes to the prompt, then
    to the review, and up moves the review's cursor (before: up could reach the prompt first
    and bring back an earlier instruction, a tab acting after it)."""
    app = make_app(repo, demo_sim)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: all_proposed(app), "every proposal")
        pane = review(app)
        await go_to(pilot, app, 1)
        before = pane.review.cursor
        app.main.query_one(DiffView).focus()
        await pilot.pause()
        parser = ChordParser()
        for event in (*parser.feed("\t\t\x1b[A"), *parser.feed("")):
            app.post_message(event)
        await until(pilot, lambda: pane.review.cursor != before, "the cursor moved")
        await pilot.pause(0.2)
        assert app.focused is pane and prompt_of(app).text == ""
        await pilot.press("alt+shift+r")
        await until(pilot, lambda: turn_over(app), "the end of the turn")
