"""The footer at 80 columns: the focused pane's most important keys first, ? always, nothing
left over at the end of the line (pilot against the simulator as a real process)."""

from __future__ import annotations

from pathlib import Path

from support.apps import all_proposed, make_app, opened, screen_text, until

from spark_pair.sim.process import SimProcess
from spark_pair.ui.screens.help import HelpScreen
from spark_pair.ui.widgets.prompt import Prompt


def footer_line(app: object) -> str:
    """The last row, without its spaces (the screenshot keeps some and not others)."""
    return screen_text(app).splitlines()[-1].replace(" ", "")  # type: ignore[arg-type]


def in_order(line: str, keys: list[str]) -> bool:
    at = [line.find(k) for k in keys]
    return -1 not in at and at == sorted(at)


async def test_the_footer_shows_what_matters_at_80_columns(repo: Path,
                                                          demo_sim: SimProcess) -> None:
    app = make_app(repo, demo_sim, prompt="")
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: opened(app), "the open repository")
        await pilot.pause()
        line = footer_line(app)
        assert in_order(line, ["send", "tabpane", "f1keys", "^ppalette"]), line
        assert line.endswith("palette")  # nothing after it
        prompt = app.main.query_one(Prompt)
        await pilot.press("?", "w", "h", "y", "?")  # ? is text, on an empty prompt too
        assert prompt.value == "?why?" and not isinstance(app.screen, HelpScreen)
        await pilot.press("f1")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen), "the help")
        await pilot.press("escape")
        await pilot.pause()
        assert "f1keys" in footer_line(app) and "?keys" not in footer_line(app)
        prompt.value = ""

        app.main.start_turn("add a discount", list(app.main.context))
        await until(pilot, lambda: all_proposed(app), "every proposal")
        await pilot.pause()
        line = footer_line(app)
        # the review's chords, from the prompt (it keeps the focus), most important first;
        # enter's label among the last to go (the review's c, e, t give way to it at 80)
        assert in_order(line, ["alt+ayes", "rno", "Aall", "Rrest", "ddel/ren",
                               "⏎decidefirst", "f1keys", "^ppalette"]), line
        assert line.endswith("palette")
        await pilot.press("alt+shift+r")
