"""What ui/textual_private.py reads of Textual's private state still means what it did: a
Textual upgrade that renames the flag or changes when it is set fails here, not in the app."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Static

from spark_pair.ui.textual_private import anchor_released


class Tail(App[None]):
    def compose(self) -> ComposeResult:
        with VerticalScroll():
            for n in range(40):
                yield Static(f"line {n}")


def test_a_new_widget_has_the_flag_unset() -> None:
    widget = Widget()
    assert "_anchor_released" in vars(widget)  # set in Widget.__init__, not a class default
    assert anchor_released(widget) is False


async def test_released_by_scrolling_away_and_followed_again_at_the_end() -> None:
    app = Tail()
    async with app.run_test(size=(40, 10)) as pilot:
        view = app.query_one(VerticalScroll)
        view.anchor()
        await pilot.pause()
        assert view.is_anchored and not anchor_released(view)
        assert view.scroll_y == view.max_scroll_y > 0

        # anchored and not released: Textual follows the tail as content arrives
        await view.mount(Static("more"))
        await pilot.pause()
        assert view.scroll_y == view.max_scroll_y

        # the person scrolls up: released (still anchored), and the tail is not followed
        view.scroll_to(y=0, animate=False, immediate=True)
        await pilot.pause()
        assert view.is_anchored and anchor_released(view)
        await view.mount(Static("and more"))
        await pilot.pause()
        assert view.scroll_y == 0

        # back at the end: followed again
        view.scroll_end(animate=False, immediate=True)
        await pilot.pause()
        assert view.is_anchored and not anchor_released(view)
        await view.mount(Static("the last"))
        await pilot.pause()
        assert view.scroll_y == view.max_scroll_y
