"""The app's flags and settings: `spark-pair --base-url/--model/--transport` reach the app's
requests; a config file saved while the app runs is read again (or announced); the demo's
instruction is shown. Pilot against the simulator process in a real git repository."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from support.apps import edit_bodies, notice, opened, screen_text, turn_over, until

from spark_pair.base import dirs
from spark_pair.cli.main import main
from spark_pair.sim.demo_project import PROMPT
from spark_pair.sim.process import SimProcess
from spark_pair.ui.app import SparkPairApp
from spark_pair.ui.screens.main import Launch
from spark_pair.ui.widgets.header import AppHeader


def launched_by(args: list[str], monkeypatch: pytest.MonkeyPatch, repo: Path) -> dict[str, Any]:
    """What `spark-pair ARGS` opens the app with (as on a terminal)."""
    seen: dict[str, Any] = {}
    monkeypatch.setattr("spark_pair.ui.launch.is_terminal", lambda: True)
    monkeypatch.setattr("spark_pair.ui.launch.run_app", lambda **kw: seen.update(kw))
    monkeypatch.chdir(repo)
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    return seen


async def test_the_app_takes_the_model_flags(repo: Path, demo_sim: SimProcess,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    seen = launched_by(["--base-url", demo_sim.base_url, "--model", "gpt-5.3-codex",
                        "--transport", "chat"], monkeypatch, repo)
    assert seen["overrides"] == {"model.base_url": demo_sim.base_url,
                                 "model.name": "gpt-5.3-codex", "session.transport": "chat"}
    app = SparkPairApp(Launch(root=repo, overrides=seen["overrides"], prompt=PROMPT,
                              env={"SPARK_PAIR_API_KEY": "test-key"}))
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: edit_bodies(demo_sim), "the request")
        assert app.main.query_one(AppHeader).model == "gpt-5.3-codex"
        body = edit_bodies(demo_sim)[0]
        assert body["model"] == "gpt-5.3-codex" and "messages" in body  # chat completions
        await until(pilot, lambda: app.main.undecided == 6, "the proposals")
        await pilot.press("alt+shift+r")
        await until(pilot, lambda: turn_over(app), "the end of the turn")


def test_the_model_flags_before_a_command_say_where_they_go(repo: Path,
                                                            monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    monkeypatch.chdir(repo)
    result = CliRunner().invoke(main, ["--model", "m", "stats"])
    assert result.exit_code == 2
    assert "go after the command" in result.output and "spark-pair stats --model" in result.output


async def test_a_config_file_saved_while_the_app_runs_is_read_again(
        repo: Path, demo_sim: SimProcess) -> None:
    """The project file: [review] check is used at once; the user file (outside the
    repository): a changed [model] is announced; a file that does not load is said and the
    settings in use stay."""
    app = SparkPairApp(Launch(root=repo, overrides={"model.base_url": demo_sim.base_url,
                                                    "session.transport": "chat"},
                              env={"SPARK_PAIR_API_KEY": "test-key"}))
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: opened(app), "the repository")
        await until(pilot, lambda: opened(app), "the app open (its config read)")
        assert app.main.driver.settings.review.check == ""
        (repo / ".spark-pair.toml").write_text('[review]\ncheck = "python3 -c pass"\n')
        await until(pilot, lambda: "config saved" in notice(app), "the notice")
        assert "now in use: [review]" in notice(app)
        assert app.main.driver.settings.review.check == "python3 -c pass"
        user = dirs.user_config_file()
        assert repo not in user.parents
        user.parent.mkdir(parents=True, exist_ok=True)
        user.write_text('[model]\nname = "other-model"\n')
        await until(pilot, lambda: "[model] take effect when" in notice(app), "the notice")
        assert str(user.name) in notice(app)
        (repo / ".spark-pair.toml").write_text('[review]\ncheck = \n')
        await until(pilot, lambda: "does not load" in notice(app), "the notice")
        assert "the settings in use stay" in notice(app)
        assert app.main.driver.settings.review.check == "python3 -c pass"


async def test_the_demo_shows_the_instruction_it_sent(repo: Path, demo_sim: SimProcess) -> None:
    app = SparkPairApp(Launch(root=repo, prompt=PROMPT, overrides={
        "model.base_url": demo_sim.base_url, "session.transport": "chat"},
        env={"SPARK_PAIR_API_KEY": "test-key"}))
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.main.undecided == 6, "the proposals")
        await pilot.pause()
        assert "sent: " + PROMPT[:40] in screen_text(app)  # under the live diff
        await pilot.press("alt+shift+r")
        await until(pilot, lambda: turn_over(app), "the end of the turn")


async def test_with_no_base_url_the_header_says_not_set_up_beside_the_notice(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The runtime cannot open (no base URL): the header stops saying "opening"."""
    monkeypatch.delenv("SPARK_PAIR_BASE_URL", raising=False)
    app = SparkPairApp(Launch(root=repo, env={"SPARK_PAIR_API_KEY": "test-key"}))
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.main.open_error is not None, "the open error")
        await pilot.pause()
        assert "no base URL is configured" in notice(app)
        header = str(app.main.query_one(AppHeader).render())
        assert "not set up" in header and "opening" not in header
