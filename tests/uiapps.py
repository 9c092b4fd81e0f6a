"""Tiny apps that host the app's widgets for pilot and snapshot tests."""

from __future__ import annotations

from textual.app import App, ComposeResult

from spark_pair.ui.themes import diff_variable_defaults
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
