"""The config files as the app watches them: a config file removed while the app runs is said
so, with the settings now in use; the repository is opened once when two ask at the same time
(a config file fixed, and /transport auto). Pilot against the simulator process in a real git
repository."""

from __future__ import annotations

import asyncio
from pathlib import Path

from support.apps import make_app, notice, opened, until
from textual.message_pump import MessagePump

from spark_pair.base import dirs
from spark_pair.sim.process import SimProcess
from spark_pair.ui.driver import Driver


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
        await until(pilot, lambda: app.main.config_watch.seen is not None,
                    "the first look at the config files")
        assert app.main.driver.settings.keys == {"review.accept_all": "f6"}
        config.unlink()
        await until(pilot, lambda: "removed" in notice(app), "the notice")
        text = " ".join(notice(app).split())
        assert "config saved" not in text, text
        assert f"removed ({config})" in text, text
        assert f"{user} and the defaults in use now for [keys]" in text, text
        assert app.main.driver.settings.keys == {}
        user.unlink()
        await until(pilot, lambda: str(user.name) + ")" in notice(app), "the second notice")
        text = " ".join(notice(app).split())
        assert "the defaults in use now for [review]" in text, text


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
