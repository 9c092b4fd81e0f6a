"""What ui/textual_private.py reads of Textual's private state still means what it did: a
Textual upgrade that renames the flag or changes when it is set fails here, not in the app."""

from __future__ import annotations

import inspect
import time

import pytest
from textual import constants
from textual._xterm_parser import XTermParser
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.notifications import Notification, Notify
from textual.widget import Widget
from textual.widgets import Static

from spark_pair.ui.textual_private import (
    ChordParser,
    anchor_released,
    install_chord_parser,
    keys_of,
    run_binding,
    withdraw,
)


class Tail(App[None]):
    def compose(self) -> ComposeResult:
        with VerticalScroll():
            for n in range(40):
                yield Static(f"line {n}")


class Counting(App[None]):
    BINDINGS = [("ctrl+u", "count('app')"), Binding("ctrl+p", "count('first')", priority=True)]

    def __init__(self) -> None:
        super().__init__()
        self.counted: list[str] = []

    def compose(self) -> ComposeResult:
        yield Static("x")

    def action_count(self, who: str) -> None:
        self.counted.append(who)


async def test_a_binding_runs_for_the_focus_as_it_is_now_and_none_is_said() -> None:
    app = Counting()
    async with app.run_test(size=(40, 10)):
        assert await run_binding(app, "ctrl+u") and app.counted == ["app"]
        assert await run_binding(app, "ctrl+p") and app.counted == ["app", "first"]
        assert not await run_binding(app, "f9") and app.counted == ["app", "first"]


async def test_a_toast_withdrawn_goes_before_its_timeout_and_twice_is_harmless() -> None:
    app = Tail()
    async with app.run_test(size=(40, 10)) as pilot:
        hint = Notification("enter answers nothing here", timeout=30)
        app.post_message(Notify(hint))
        await pilot.pause()
        assert [n.message for n in app._notifications] == [hint.message]
        withdraw(app, hint)
        withdraw(app, hint)
        await pilot.pause()
        assert not list(app._notifications)


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


def parsed_keys(parser: XTermParser, *reads: str) -> list[str]:
    """The keys of `reads`, each as one terminal read, then past the escape delay."""
    keys = [k for data in reads for k in keys_of(parser.feed(data))]
    time.sleep(constants.ESCAPE_DELAY + 0.05)
    return keys + keys_of(parser.tick())


def test_textual_alone_reads_two_alt_chords_of_one_read_as_a_caret_and_a_letter() -> None:
    """What the chord parser works around (when this fails, Textual reads them right itself and
    ChordParser can go)."""
    assert parsed_keys(XTermParser(), "\x1bA\x1bp") == ["circumflex_accent", "A", "alt+p"]


def test_the_chord_parser_reads_each_alt_chord_as_a_chord() -> None:
    assert parsed_keys(ChordParser(), "\x1bA\x1bp") == ["alt+shift+a", "alt+p"]
    assert parsed_keys(ChordParser(), "\x1ba", "\x1br", "\x1bt") == ["alt+a", "alt+r", "alt+t"]
    # a typed ^ stays a ^; arrows and escapes are read as before
    assert parsed_keys(ChordParser(), "^Ax\x1b[A\x1bOB") == [
        "circumflex_accent", "A", "x", "up", "down"]
    assert parsed_keys(ChordParser(), "\x1b") == ["escape"]


def test_the_chord_parser_goes_where_the_linux_driver_builds_its_parser(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from textual.drivers import linux_driver

    assert "XTermParser(" in inspect.getsource(linux_driver.LinuxDriver.run_input_thread)
    monkeypatch.setattr(linux_driver, "XTermParser", linux_driver.XTermParser)
    install_chord_parser()
    assert linux_driver.XTermParser is ChordParser


def parsed(parser: XTermParser, *reads: str) -> list[object]:
    """Every token of `reads`, each one terminal read, then past the escape delay."""
    tokens = [t for data in reads for t in parser.feed(data)]
    time.sleep(constants.ESCAPE_DELAY + 0.05)
    return tokens + list(parser.tick())


PASTED = "first \x1b[31mred\x1b[0m word\rsecond line\r"  # (a terminal pastes a newline as \r)
WRAPPED = f"\x1b[200~{PASTED}\x1b[201~"


def test_textual_alone_reads_the_rest_of_a_paste_with_an_escape_as_keys() -> None:
    """What the chord parser works around (when this fails, Textual keeps such a paste whole
    itself and the filter can go)."""
    keys = keys_of(parsed(XTermParser(), WRAPPED))
    assert "enter" in keys and "s" in keys


@pytest.mark.parametrize("cut", [None, 1, 3, 6, 9, 12, 30, len(WRAPPED) - 5, len(WRAPPED) - 3,
                                 len(WRAPPED) - 1])
def test_a_paste_with_escapes_arrives_as_one_paste_without_them(cut: int | None) -> None:
    from textual import events

    reads = [WRAPPED] if cut is None else [WRAPPED[:cut], WRAPPED[cut:]]
    tokens = parsed(ChordParser(), "a", *reads, "b")
    pastes = [t.text for t in tokens if isinstance(t, events.Paste)]
    assert pastes == [PASTED.replace("\x1b", "")]
    assert keys_of(tokens) == ["a", "b"]  # nothing of the paste went as a key


def test_escapes_outside_a_paste_are_read_as_before() -> None:
    """(a paste's start marker cut short is no paste: no text is held back or lost)"""
    want = ["x", "circumflex_accent", "left_square_bracket", "2", "0", "0", "alt+p"]
    assert parsed_keys(ChordParser(), "x\x1b[200", "\x1bp") == want
