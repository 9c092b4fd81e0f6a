"""Stored sessions in the app (pilot against the simulator as a real process, a real git repo):
-c brings the earlier turns and the model back and the next request carries them; /fork leaves
the original as it was; a taken name and a session open elsewhere are said, nothing lost."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

from support.apps import (
    all_proposed,
    edit_bodies,
    make_app,
    notice,
    opened,
    screen_text,
    turn_over,
    type_line,
    until,
)

from spark_pair.session.stored import Pick
from spark_pair.sim.process import SimProcess
from spark_pair.store.sessions import SessionStore, StoredTurn
from spark_pair.ui.app import SparkPairApp
from spark_pair.ui.screens.main import Launch
from spark_pair.ui.sessions import Choice, SessionsScreen
from spark_pair.ui.widgets.header import AppHeader

FIRST_REPLY = "Validated the input lines, added an optional discount"  # the demo reply's prose


async def _first_session(repo: Path, sim: SimProcess, **overrides: str) -> str:
    """The demo's turn in a new session (first hunk applied, the rest rejected); its name."""
    app = make_app(repo, sim, transport="ws", **{"context.auto": "false", **overrides})
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: all_proposed(app), "every proposal")
        await pilot.press("alt+a", "alt+shift+r")
        await until(pilot, lambda: turn_over(app), "the end of the first turn")
        stored = app.main.driver.stored.current
        name = stored.info.name
    return name


def _resumed(repo: Path, sim: SimProcess, choice: Choice) -> SparkPairApp:
    """The app as `spark-pair -c` / `--resume` opens it: the model from the environment only."""
    return SparkPairApp(Launch(root=repo, session=choice,
                               overrides={"model.base_url": sim.base_url,
                                          "session.transport": "ws", "context.auto": "false"},
                               env={"SPARK_PAIR_API_KEY": "test-key",
                                    "SPARK_PAIR_MODEL": "gpt-5.3-codex-spark"}))


def _turns(name: str, repo: Path) -> list[str]:
    with SessionStore() as store:
        info = store.named(str(repo), name)
        assert info is not None
        return [t.instruction for t in store.turns(info.id)]


async def test_continue_brings_back_the_turns_and_model_and_sends_them(
        repo: Path, demo_sim: SimProcess) -> None:
    name = await _first_session(repo, demo_sim, **{"model.name": "gpt-5.3-codex"})
    before = len(edit_bodies(demo_sim))
    app = _resumed(repo, demo_sim, Choice(Pick(newest=True)))
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: opened(app) and "carrying on" in notice(app), "the resume")
        assert app.main.query_one(AppHeader).model == "gpt-5.3-codex"  # the model is back
        text = screen_text(app)
        assert f"session {name}: 1 earlier turn" in text and "▸ 1." in text
        assert set(app.main.context) == {"inventory.py", "test_inventory.py"}  # the pinned set
        await type_line(pilot, app, "SECOND make the totals round half up")
        await until(pilot, lambda: len(edit_bodies(demo_sim)) > before, "the next request")
        await until(pilot, lambda: turn_over(app), "the end of the next turn")
    body = edit_bodies(demo_sim)[-1]
    sent = json.dumps(body)
    assert body["model"] == "gpt-5.3-codex"
    assert FIRST_REPLY in sent and "rejected" in sent  # the turn and what became of it
    assert "previous_response_id" not in body  # after a restart the history goes whole
    assert len(_turns(name, repo)) == 2


async def test_fork_leaves_the_original_as_it_was(repo: Path, demo_sim: SimProcess) -> None:
    name = await _first_session(repo, demo_sim)
    app = _resumed(repo, demo_sim, Choice(Pick(name=name)))
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: "carrying on" in notice(app), "the resume")
        await type_line(pilot, app, "/fork")
        await until(pilot, lambda: "forked" in notice(app), "the fork")
        fork = app.main.driver.stored.current.info.name
        assert fork != name and name in notice(app)
        before = len(edit_bodies(demo_sim))
        await type_line(pilot, app, "SECOND make the totals round half up")
        await until(pilot, lambda: len(edit_bodies(demo_sim)) > before, "the next request")
        await until(pilot, lambda: turn_over(app), "the end of the next turn")
        await type_line(pilot, app, f"/rename {name}")  # taken: said, with a hint
        await until(pilot, lambda: "already exists" in notice(app), "the refusal")
        assert "hint:" in notice(app)
        assert "/sessions picks that one" in notice(app)  # the app's way, not the command line's
        assert "--resume" not in notice(app)
    assert len(_turns(name, repo)) == 1
    assert len(_turns(fork, repo)) == 2


async def test_fork_while_the_repository_is_not_open_forks_nothing(
        repo: Path, demo_sim: SimProcess) -> None:
    """A setting keeps the repository from opening; the stored session is open: /fork says
    the repository is not open, with a hint, and no session is forked."""
    name = await _first_session(repo, demo_sim)
    app = SparkPairApp(Launch(root=repo, session=Choice(Pick(name=name)),
                              overrides={"model.base_url": demo_sim.base_url,
                                         "session.transport": "carrier-pigeon"},
                              env={"SPARK_PAIR_API_KEY": "test-key"}))
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.main.open_error is not None, "the open error")
        await type_line(pilot, app, "/fork")
        await until(pilot, lambda: "not open" in notice(app), "the refusal")
        assert "hint: fix the error shown" in notice(app)
        assert "internal error" not in notice(app)
    with SessionStore() as store:
        assert [info.name for info in store.listed(repo)] == [name]


async def test_resume_picker_and_a_session_open_elsewhere(repo: Path,
                                                          demo_sim: SimProcess) -> None:
    name = await _first_session(repo, demo_sim)
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        with SessionStore() as store:
            info = store.named(str(repo), name)
            assert info is not None
            assert store.claim(info.id, f"{socket.gethostname()}:{holder.pid}") == ""
        app = _resumed(repo, demo_sim, Choice(picker=True))
        said: list[str] = []
        app.notify = lambda message, **kw: said.append(str(message))  # type: ignore[method-assign]
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: isinstance(app.screen, SessionsScreen)
                        and name in screen_text(app), "the picker")
            assert "1 turn" in screen_text(app)
            await pilot.press("enter")
            await until(pilot, lambda: opened(app) and said, "the warning")
            other = app.main.driver.stored.current.info.name
            assert other != name
            assert f"the session {name!r} is open in another spark-pair" in said[0]
            assert other in said[0]
    finally:
        holder.kill()
        holder.wait()
    assert len(_turns(name, repo)) == 1  # the session held elsewhere is as it was


async def test_continue_with_no_session_yet_begins_one(repo: Path, demo_sim: SimProcess) -> None:
    app = _resumed(repo, demo_sim, Choice(Pick(newest=True)))
    said: list[str] = []
    app.notify = lambda message, **kw: said.append(str(message))  # type: ignore[method-assign]
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: opened(app) and said, "the note")
        assert "no earlier session in this repository" in said[0]
        assert app.main.driver.stored.current is not None  # a new one is stored


async def test_sessions_command_switches_to_another(repo: Path, demo_sim: SimProcess) -> None:
    name = await _first_session(repo, demo_sim)
    app = _resumed(repo, demo_sim, Choice())  # a new session
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: opened(app) and app.main.driver.stored.current,
                    "the new session")
        before = len(edit_bodies(demo_sim))
        await type_line(pilot, app, "OTHER a turn of the new session")
        await until(pilot, lambda: len(edit_bodies(demo_sim)) > before, "its request")
        await until(pilot, lambda: turn_over(app), "its end")
        await type_line(pilot, app, "/sessions")
        await until(pilot, lambda: isinstance(app.screen, SessionsScreen)
                    and name in screen_text(app), "the picker")
        order = [s.name for s in app.screen.sessions]  # newest first: this new one
        await pilot.press(*["down"] * order.index(name), "enter")
        await until(pilot, lambda: "carrying on after 1 earlier turn" in notice(app),
                    "the switch")
        assert app.main.driver.stored.current.info.name == name
        assert f"session {name}" in screen_text(app)
        before = len(edit_bodies(demo_sim))
        await type_line(pilot, app, "SECOND make the totals round half up")
        await until(pilot, lambda: len(edit_bodies(demo_sim)) > before, "the next request")
        await until(pilot, lambda: turn_over(app), "the end of the next turn")
    body = edit_bodies(demo_sim)[-1]
    assert "previous_response_id" not in body  # not the other conversation's chain
    assert FIRST_REPLY in json.dumps(body) and "OTHER a turn" not in json.dumps(body)


async def test_continue_says_which_earlier_turns_go_with_the_next_request(
        repo: Path, demo_sim: SimProcess) -> None:
    with SessionStore() as store:  # a failed turn and a stopped one: never resent
        info = store.create(repo, name="fell-over")
        store.add_turn(info.id, StoredTurn("FIRST try", status="failed", error="cut"))
        store.add_turn(info.id, StoredTurn("SECOND try", reply="half", status="cancelled"))
    app = _resumed(repo, demo_sim, Choice(Pick(newest=True)))
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: "carrying on" in notice(app), "the resume")
        assert "carrying on after 2 earlier turns; none goes with the next request" in notice(app)
        assert "they go" not in notice(app)



async def test_a_session_left_without_a_turn_is_not_kept(repo: Path, demo_sim: SimProcess
                                                         ) -> None:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])  # a process that ended ...
    gone.wait()
    with SessionStore() as store:  # ... without closing its empty session (terminal closed)
        info = store.create(repo, name="left-open")
        store.claim(info.id, f"{socket.gethostname()}:{gone.pid}")
    app = _resumed(repo, demo_sim, Choice(picker=True))
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: opened(app) and app.main.driver.stored.current,
                    "the new session")
        assert not isinstance(app.screen, SessionsScreen)  # nothing to pick from
        assert "no earlier session in this repository" in notice(app), notice(app)
        await type_line(pilot, app, "/fork")  # a fork of it holds no turn either
        await until(pilot, lambda: "forked" in notice(app), "the fork")
        await pilot.press("ctrl+q")
    with SessionStore() as store:
        assert store.listed(str(repo)) == []
