"""The config files are watched from the app's start: started with a .spark-pair.toml that does
not load, the app opens once the file is fixed (an instruction sent meanwhile stays in the
prompt, and the error said is the file's error now); a config file removed while the app runs
is said so, with the settings now in use; the repository is opened once when two ask at the
same time (a config file fixed, and /transport auto). Pilot against the simulator process in a
real git repository."""

from __future__ import annotations

import asyncio
from pathlib import Path

from support.apps import edit_bodies, make_app, notice, opened, type_line, until
from textual.message_pump import MessagePump

from spark_pair.base import dirs
from spark_pair.sim.demo_project import PROMPT
from spark_pair.sim.process import SimProcess
from spark_pair.ui.driver import Driver
from spark_pair.ui.widgets.header import AppHeader
from spark_pair.ui.widgets.prompt import Prompt


def header(app: object) -> str:
    return str(app.main.query_one(AppHeader).render())  # type: ignore[attr-defined]


async def test_started_with_a_broken_config_the_app_opens_once_the_file_is_fixed(
        repo: Path, demo_sim: SimProcess) -> None:
    config = repo / ".spark-pair.toml"
    config.write_text('[model\nname = "x"\n')
    app = make_app(repo, demo_sim, prompt="")
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.main.open_error is not None, "the open error")
        assert "not set up" in header(app)
        assert "Expected ']'" in notice(app), notice(app)
        assert "/transport" not in notice(app)  # (a transport loads no config)
        await type_line(pilot, app, "/transport auto")  # says so, not the same words again
        await until(pilot, lambda: "transport auto, still not open" in notice(app), "the answer")
        assert "Expected ']'" in notice(app) and "save the fixed config" in notice(app)
        await type_line(pilot, app, PROMPT)  # sent while it cannot open: it stays
        await until(pilot, lambda: "Expected ']'" in notice(app), "the error again")
        prompt = app.main.query_one(Prompt)
        assert prompt.text == PROMPT
        config.write_text('[model]\nname = \n')  # another error: enter says this one
        await until(pilot, lambda: "Expected ']'" not in notice(app), "the new error")
        assert "still not open" in notice(app) and "Invalid value" in notice(app), notice(app)
        assert not opened(app) and "not set up" in header(app)
        await pilot.press("enter")
        await pilot.pause()
        assert "Expected ']'" not in notice(app) and "cannot load" in notice(app), notice(app)
        assert prompt.text == PROMPT
        config.write_text('[model]\nname = "gpt-5.3-codex-spark"\n')
        await until(pilot, lambda: opened(app), "the repository open (no /transport auto)")
        await until(pilot, lambda: "open now" in notice(app), "the notice")
        assert "enter sends" in notice(app), notice(app)
        assert "not set up" not in header(app)
        assert prompt.text == PROMPT
        await pilot.press("enter")
        await until(pilot, lambda: edit_bodies(demo_sim), "the request")
        await until(pilot, lambda: app.main.undecided == 6, "the proposals")
        await pilot.press("alt+shift+r")


async def test_a_config_file_removed_while_the_app_runs_says_what_is_in_use_now(
        repo: Path, demo_sim: SimProcess) -> None:
    """Not "config saved": the file is gone, and the user's config file and the defaults are
    what the settings come from now."""
    config = repo / ".spark-pair.toml"
    config.write_text('[keys]\n"review.accept_all" = "f6"\n')
    user = dirs.user_config_file()
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text('[review]\ncheck = "python3 -c pass"\n')
    app = make_app(repo, demo_sim, prompt="")
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: opened(app), "the repository")
        await until(pilot, lambda: opened(app), "the app open (its config read)")
        assert app.main.driver.settings.keys == {"review.accept_all": "f6"}
        config.unlink()
        await until(pilot, lambda: "removed" in notice(app), "the notice")
        text = " ".join(notice(app).split())
        assert "config saved" not in text, text
        assert f"removed ({config})" in text, text
        assert f"{user} and the defaults are in use now for [keys]" in text, text
        assert app.main.driver.settings.keys == {}
        user.unlink()
        await until(pilot, lambda: str(user.name) + ")" in notice(app), "the second notice")
        text = " ".join(notice(app).split())
        assert "the defaults are in use now for [review]" in text, text


async def test_the_repository_is_opened_once_when_two_ask_at_the_same_time(
        tmp_path: Path) -> None:
    """A config file fixed and /transport auto at once: the second open waits for the first
    one's outcome and opens nothing of its own."""
    driver = Driver(tmp_path, target=MessagePump(), choice=None)
    began: list[int] = []

    async def slow_open() -> None:
        began.append(1)
        await asyncio.sleep(0.05)

    driver._open = slow_open  # type: ignore[method-assign]
    await asyncio.gather(driver.open(), driver.open())
    assert began == [1] and not driver.opening
    await driver.open()  # (over: the next call opens again)
    assert began == [1, 1]


async def test_a_bad_base_url_from_the_command_line_says_to_start_again(
        repo: Path, demo_sim: SimProcess) -> None:
    """--base-url wins over any config: a mistyped one is not mended by saving the config,
    and the notice says to start again (before: "save the fixed config", a dead end)."""
    app = make_app(repo, demo_sim, prompt="", **{"model.base_url": "htp:/127.0.0.1:9"})
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.main.open_error is not None, "the open error")
        said = " ".join(notice(app).split())
        assert "mistyped scheme" in said and "--base-url on the command line wins" in said, said
        assert "save the fixed config" not in said, said
