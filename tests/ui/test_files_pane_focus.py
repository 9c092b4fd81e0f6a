"""The files pane taking the focus: a row is highlighted at once, and Textual hears of the
focus once (its own focus handler is not called a second time by the pane)."""

from __future__ import annotations

from textual import events
from textual.app import App, ComposeResult
from textual.containers import Vertical
from textual.widgets import Input

from spark_pair.ui.widgets.files import FilesPane


class Box(Vertical):
    def __init__(self) -> None:
        super().__init__()
        self.focused_below: list[str] = []

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        self.focused_below.append(type(event.widget).__name__)


class Panes(App[None]):
    def compose(self) -> ComposeResult:
        yield Input()
        with Box():
            yield FilesPane()


async def test_focus_highlights_a_row_and_is_told_once() -> None:
    app = Panes()
    async with app.run_test(size=(60, 16)) as pilot:
        pane = app.query_one(FilesPane)
        pane.context = {"a.py": 10, "b.py": 20}
        pane.refresh_items()
        await pilot.pause()
        assert pane.highlighted is None and not pane.has_focus
        pane.focus()
        await pilot.pause()
        assert pane.has_focus
        assert pane.highlighted is not None
        assert pane.get_option_at_index(pane.highlighted).id in ("a.py", "b.py")
        assert app.query_one(Box).focused_below == ["FilesPane"]
