"""The key footer: one line that follows the focused pane's keys, dims the disabled ones, and
presses a key when it is clicked; it is repainted in place, never rebuilt out of widgets."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import Input

from spark_pair.ui.widgets.footer import AppFooter


class Pane(Input):
    BINDINGS = [Binding("ctrl+y", "pane_key", "pane key", tooltip="The pane's own key")]

    def action_pane_key(self) -> None:
        self.app.pressed.append("pane")  # type: ignore[attr-defined]


class FooterApp(App[None]):
    ENABLE_COMMAND_PALETTE = True
    BINDINGS = [Binding("f2", "go", "go"), Binding("f3", "stop", "stop"),
                Binding("f4", "hidden", "hidden", show=False)]

    def __init__(self) -> None:
        super().__init__()
        self.running = False
        self.pressed: list[str] = []

    def compose(self) -> ComposeResult:
        yield Input(id="plain")
        yield Pane(id="pane")
        yield AppFooter()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "stop":
            return self.running or None  # None: shown, disabled
        return not self.running if action == "go" else True  # False: not shown

    def action_go(self) -> None:
        self.pressed.append("go")
        self.running = True
        self.refresh_bindings()

    def action_stop(self) -> None:
        self.pressed.append("stop")


def shown(footer: AppFooter) -> list[tuple[str, bool]]:
    return [(k.label, k.enabled) for k in footer.keys]


async def test_the_footer_follows_focus_and_state_and_clicks_press_keys() -> None:
    app = FooterApp()
    async with app.run_test(size=(100, 10)) as pilot:
        footer = app.query_one(AppFooter)
        app.query_one("#plain").focus()
        await pilot.pause()
        assert shown(footer) == [("go", True), ("stop", False)]  # hidden keys stay hidden
        assert [k.label for k in footer.pinned] == ["palette"]
        line = footer.render().plain
        assert line.startswith("f2 go  f3 stop") and line.rstrip().endswith("^p palette")
        assert not footer.children  # one line of text: nothing to mount or lay out

        await pilot.click(AppFooter, offset=(line.index("stop"), 0))
        assert app.pressed == []  # a disabled key is not pressed
        await pilot.click(AppFooter, offset=(line.index("go"), 0))
        await pilot.pause()
        assert app.pressed == ["go"] and shown(footer) == [("stop", True)]
        assert footer.render().plain.startswith("f3 stop  ")
        await pilot.click(AppFooter, offset=(2, 0))
        assert app.pressed == ["go", "stop"]

        app.query_one("#pane").focus()  # the focused pane's keys come first
        await pilot.pause()
        assert shown(footer)[0] == ("pane key", True)
        assert footer.key_at(1) is not None and footer.key_at(1).tooltip == "The pane's own key"
        await pilot.click(AppFooter, offset=(1, 0))
        assert app.pressed[-1] == "pane"
