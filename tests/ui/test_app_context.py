"""The app's automatic context: files chosen while the prompt is typed, each with its reason in
the files pane; space drops one (it is not sent), p pins one. The simulator is a real process
and the repository a real git repository (the demo's)."""

from __future__ import annotations

import json
from pathlib import Path

from support.apps import make_app, screen_text, until

from spark_pair.sim.process import SimProcess
from spark_pair.ui.widgets.files import FilesPane
from spark_pair.ui.widgets.prompt import Prompt

PROMPT = "make parse_line accept tabs"


def pane(app) -> FilesPane:
    return app.main.query_one(FilesPane)


def chosen(app) -> dict[str, str]:
    return {c.path: c.reason for c in pane(app).chosen}


def sent(sim: SimProcess) -> str:
    """What the last request gave the model: its body, and the body of the draft's pre-warm it
    continues (that request carried the input)."""
    log = sim.requests()
    last = log[-1]["body"]
    warm = {e["response_id"]: e["body"] for e in log if (e["body"] or {}).get("generate") is False}
    prior = warm.get(last.get("previous_response_id"))
    return json.dumps([prior, last] if prior is not None else last)


async def type_prompt(pilot, app, text: str) -> None:
    app.main.query_one(Prompt).focus()
    await pilot.press(*text)


async def test_the_files_a_prompt_needs_are_listed_with_their_reason_while_it_is_typed(
        repo: Path, sim: SimProcess) -> None:
    app = make_app(repo, sim, prompt="", files=())
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.main.driver.session is not None, "the repository open")
        await type_prompt(pilot, app, PROMPT)
        await until(pilot, lambda: chosen(app), "the chosen files")
        assert chosen(app)["inventory.py"] == "defines parse_line"
        await until(pilot, lambda: "test_inventory.py" in chosen(app), "the file's test")
        assert chosen(app)["test_inventory.py"] == "test of inventory.py"
        text = screen_text(app)
        assert "○ inventory.py" in text and "defines parse_line" in text
        assert "○ test_inventory.py" in text and "test of inventory.py" in text
        assert "chosen" in (pane(app).border_subtitle or "")
        await pilot.press("enter")
        await until(pilot, lambda: sim.requests(), "the request")
    assert "### inventory.py" in sent(sim)
    assert "Repository map" in sent(sim)


async def test_space_drops_a_chosen_file_and_it_is_not_sent(repo: Path, sim: SimProcess
                                                           ) -> None:
    app = make_app(repo, sim, prompt="", files=())
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.main.driver.session is not None, "the repository open")
        await type_prompt(pilot, app, PROMPT)
        await until(pilot, lambda: "inventory.py" in chosen(app), "the chosen files")
        files = pane(app)
        files.focus()
        files.highlighted = files.get_option_index("inventory.py")
        await pilot.press("enter")
        assert "inventory.py" in files.dropped
        await until(pilot, lambda: "× inventory.py" in screen_text(app), "the dropped mark")
        await pilot.press("enter")  # back again
        assert "inventory.py" not in files.dropped
        await pilot.press("enter")
        app.main.query_one(Prompt).focus()
        await pilot.press("enter")
        await until(pilot, lambda: sim.requests(), "the request")
    assert "### inventory.py" not in sent(sim)


async def test_p_pins_a_chosen_file_into_the_context(repo: Path, sim: SimProcess) -> None:
    app = make_app(repo, sim, prompt="", files=())
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.main.driver.session is not None, "the repository open")
        await type_prompt(pilot, app, PROMPT)
        await until(pilot, lambda: "inventory.py" in chosen(app), "the chosen files")
        files = pane(app)
        files.focus()
        files.highlighted = files.get_option_index("inventory.py")
        await pilot.press("alt+p")
        assert "inventory.py" in app.main.context
        await until(pilot, lambda: "● inventory.py" in screen_text(app), "the pinned mark")


async def test_at_80x24_the_prompt_border_names_the_chosen_files(repo: Path,
                                                                 sim: SimProcess) -> None:
    app = make_app(repo, sim, prompt="", files=())
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.main.driver.session is not None, "the repository open")
        await type_prompt(pilot, app, PROMPT)
        await until(pilot, lambda: chosen(app), "the chosen files")
        await until(pilot, lambda: "○ inventory.py (defines parse_line)" in screen_text(app),
                    "the prompt's border")
        assert not pane(app).display or "-narrow" in app.main.classes


async def test_a_named_secret_is_not_chosen_and_the_notice_says_how_to_add_it(
        repo: Path, sim: SimProcess) -> None:
    (repo / ".env").write_text("TOKEN=hunter2\n")
    app = make_app(repo, sim, prompt="", files=())
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.main.driver.session is not None, "the repository open")
        await type_prompt(pilot, app, "read the token from .env in inventory.py")
        await until(pilot, lambda: ".env is not sent" in screen_text(app), "the note")
        assert "/add .env sends it" in screen_text(app)
        assert ".env" not in chosen(app)


async def test_at_80x24_the_palette_drops_a_chosen_file_and_says_so(repo: Path,
                                                                    sim: SimProcess) -> None:
    app = make_app(repo, sim, prompt="", files=())
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.main.driver.session is not None, "the repository open")
        await type_prompt(pilot, app, PROMPT)
        await until(pilot, lambda: "inventory.py" in chosen(app), "the chosen files")
        await pilot.press("ctrl+p")
        await pilot.press(*"drop inventory")
        # (the palette's highlight splits the command's text where it matched)
        await until(pilot, lambda: "(defines parse_line): don't send it" in screen_text(app),
                    "the palette's command")
        await pilot.press("enter")
        await until(pilot, lambda: "dropped inventory.py" in screen_text(app), "the notice")
        app.main.query_one(Prompt).focus()
        await pilot.press("enter")
        await until(pilot, lambda: sim.requests(), "the request")
    assert "### inventory.py" not in sent(sim)


async def test_tab_into_the_files_pane_highlights_a_row_so_space_acts_at_once(
        repo: Path, sim: SimProcess) -> None:
    app = make_app(repo, sim, prompt="", files=())
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.main.driver.session is not None, "the repository open")
        await type_prompt(pilot, app, PROMPT)
        await until(pilot, lambda: "inventory.py" in chosen(app), "the chosen files")
        files = pane(app)
        for _ in range(6):  # tab until the pane has the focus
            if app.focused is files:
                break
            await pilot.press("tab")
        assert app.focused is files
        assert files.highlighted == 0  # the first row
        first = files.highlighted_option.id
        await pilot.press("enter")
        assert first in files.dropped


async def test_a_queued_draft_leaves_no_chosen_files_behind(repo: Path, sim: SimProcess
                                                          ) -> None:
    sim.configure(tps=40, tokens=1500)  # a slow reply: the turn runs while the draft is queued
    app = make_app(repo, sim, prompt="", files=())
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.main.driver.session is not None, "the repository open")
        await type_prompt(pilot, app, "hello")
        await pilot.press("enter")
        await until(pilot, lambda: app.main.streaming, "the turn streaming")
        await type_prompt(pilot, app, PROMPT)
        prompt = app.main.query_one(Prompt)
        await until(pilot, lambda: "ctrl+p drops" in str(prompt.border_subtitle),
                    "the chosen files on the prompt's border")
        await pilot.press("tab")
        await until(pilot, lambda: app.main.queued, "the queued draft")
        assert prompt.value == ""
        await pilot.pause()
        assert "ctrl+p drops" not in str(prompt.border_subtitle)
        assert not chosen(app)
