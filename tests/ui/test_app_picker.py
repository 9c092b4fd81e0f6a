"""What is typed in the /sessions picker filters it, in view above the list (never lost on the
way); pilot against the simulator as a real process, real session store."""

from __future__ import annotations

from pathlib import Path

from support.apps import make_app, notice, opened, screen_text, type_line, until

from spark_pair.sim.process import SimProcess
from spark_pair.store.sessions import SessionStore, StoredTurn
from spark_pair.ui.sessions import SessionsScreen
from spark_pair.ui.widgets.prompt import Prompt


async def open_picker(pilot, app, shown: str) -> SessionsScreen:
    """/sessions once the app's own session is open; the picker once it lists `shown`."""
    await until(pilot, lambda: opened(app) and app.main.driver.stored.current,
                "the new session")
    await type_line(pilot, app, "/sessions")
    await until(pilot, lambda: isinstance(app.screen, SessionsScreen)
                and shown in screen_text(app), "the picker")
    return app.screen


async def test_letters_typed_in_the_picker_filter_it_in_view(repo: Path,
                                                             demo_sim: SimProcess) -> None:
    with SessionStore() as store:
        for name, instruction in (("tidy-heron", "rename the totals helper"),
                                  ("brisk-otter", "add a discount to the invoice"),
                                  ("calm-finch", "add type hints to the parser")):
            info = store.create(repo, name=name)
            store.add_turn(info.id, StoredTurn(instruction, status="rejected"))
    app = make_app(repo, demo_sim, prompt="", **{"context.auto": "false"})
    async with app.run_test(size=(80, 24)) as pilot:
        picker = await open_picker(pilot, app, "brisk-otter")
        assert isinstance(picker, SessionsScreen)
        assert "type to filter" in screen_text(app)
        await pilot.press(*"add ")
        await pilot.pause()
        shown = screen_text(app)
        assert "filter: add" in shown and "2 of" in shown, shown
        assert "brisk-otter" in shown and "calm-finch" in shown and "tidy-heron" not in shown
        await pilot.press(*"disc")
        await pilot.pause()
        assert "filter: add disc" in screen_text(app)
        assert "calm-finch" not in screen_text(app)
        await pilot.press("backspace")
        await pilot.pause()
        assert "filter: add dis▏" in screen_text(app)
        await pilot.press("x", "x")
        await pilot.pause()
        assert "no session matches" in screen_text(app)
        await pilot.press("escape")  # clears the filter: the picker stays
        await pilot.pause()
        assert app.screen is picker and "tidy-heron" in screen_text(app)
        await pilot.press(*"otter", "enter")  # the one match, picked
        await until(pilot, lambda: "carrying on" in notice(app), "the switch")
        assert app.main.driver.stored.current.info.name == "brisk-otter"
        assert app.main.query_one(Prompt).value == ""  # nothing typed went anywhere else


async def test_the_filter_reads_every_instruction_and_enter_on_no_match_says_so(
        repo: Path, demo_sim: SimProcess) -> None:
    """`disc` finds a session whose first turn spoke of a discount though its last did not;
    enter with nothing matching says so and the picker stays."""
    with SessionStore() as store:
        info = store.create(repo, name="quiet-lark")
        store.add_turn(info.id, StoredTurn("Add a discount test to the order", status="applied"))
        store.add_turn(info.id, StoredTurn("rename the helper", status="applied"))
        other = store.create(repo, name="bold-crane")
        store.add_turn(other.id, StoredTurn("type hints for the parser", status="rejected"))
    app = make_app(repo, demo_sim, prompt="", **{"context.auto": "false"})
    async with app.run_test(size=(80, 24)) as pilot:
        picker = await open_picker(pilot, app, "quiet-lark")
        await pilot.press(*"disc")
        await pilot.pause()
        shown = screen_text(app)
        assert "quiet-lark" in shown and "bold-crane" not in shown, shown
        await pilot.press(*"zz", "enter")
        await pilot.pause()
        assert "no session matches" in screen_text(app)
        toasts = "\n".join(str(n.message) for n in app._notifications)
        assert "no session matches 'disczz'" in toasts, toasts
        assert app.screen is picker
