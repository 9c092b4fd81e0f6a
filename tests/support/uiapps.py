"""Tiny apps that host the app's widgets for pilot and snapshot tests."""

from __future__ import annotations

from textual.app import App, ComposeResult

from spark_pair.ui.themes import diff_variable_defaults, install_themes
from spark_pair.ui.widgets.diff_view import DiffView
from spark_pair.ui.widgets.meter import Meter


class DiffApp(App[None]):
    """A DiffView filling the screen."""

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return diff_variable_defaults(self.current_theme)

    def compose(self) -> ComposeResult:
        yield DiffView()

    @property
    def view(self) -> DiffView:
        return self.query_one(DiffView)


class MeterApp(App[None]):
    """A Meter at the bottom of an empty screen."""

    def __init__(self, prices=None) -> None:
        super().__init__()
        self.prices = prices

    def compose(self) -> ComposeResult:
        yield Meter(self.prices)

    @property
    def meter(self) -> Meter:
        return self.query_one(Meter)


class PaneApp(App[None]):
    """The live diff above the meter, in one of the shipped themes (user themes from `user`)."""

    def __init__(self, theme_name: str | None = None, user=None, prices=None) -> None:
        super().__init__()
        self.theme_name, self.user, self.prices = theme_name, user, prices
        self.problems: list = []
        self.notices: list[str] = []

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return diff_variable_defaults(self.current_theme)

    def notify(self, message, **kw) -> None:  # type: ignore[override]
        self.notices.append(str(message))
        super().notify(message, **kw)

    def compose(self) -> ComposeResult:
        yield DiffView()
        yield Meter(self.prices)

    def on_mount(self) -> None:
        self.problems = install_themes(self, self.theme_name, user=self.user)

    @property
    def view(self) -> DiffView:
        return self.query_one(DiffView)

    @property
    def meter(self) -> Meter:
        return self.query_one(Meter)


async def words_marked(pilot, view: DiffView) -> None:
    """Let the word marks of the rows in view arrive (they are worked out off the loop) and be
    painted: every row in view is asked for, then the app runs until none is pending."""
    import time

    await pilot.pause()
    for y in range(view.size.height):
        view.render_line(y)
    deadline = time.monotonic() + 10
    while view.words_pending:
        assert time.monotonic() < deadline, "word marks never arrived"
        await pilot.pause(0.005)
    await pilot.pause()
