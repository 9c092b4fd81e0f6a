"""The main screen as its helpers see it: the parts every helper uses.

A helper of the main screen (turn_review, fixrounds, commands, ...) is handed the screen but
names, in a protocol of its own built on these, only what it uses of it; mypy checks the screen
against that protocol where the screen hands itself over. No helper imports the screen (the
screen imports them: that would be an import cycle).
"""

from __future__ import annotations

from collections.abc import Awaitable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar, overload

from textual.widget import Widget

if TYPE_CHECKING:
    from textual.app import App
    from textual.worker import Worker

W = TypeVar("W", bound=Widget)
R = TypeVar("R")


class Panes(Protocol):
    """The Textual side of the screen: its app, its widgets, its workers, its keys."""

    @property
    def app(self) -> App[object]: ...

    @overload
    def query_one(self, selector: type[W]) -> W: ...

    @overload
    def query_one(self, selector: str, expect_type: type[W]) -> W: ...

    def run_worker(self, work: Awaitable[R], *, group: str = ..., exclusive: bool = ...,
                   exit_on_error: bool = ...) -> Worker[R]: ...

    def refresh_bindings(self) -> None: ...


class Says(Protocol):
    """The notice line: what the screen says, a problem, an error, a turn in the way."""

    def say(self, text: str, op: int | None = None) -> None: ...

    def alert(self, text: str) -> None: ...

    def show_error(self, error: BaseException, nothing_written: bool = False) -> None: ...

    def busy(self, then: str) -> str: ...


class Rooted(Protocol):
    """What the app opened (the screen's `Launch`): the repository's root."""

    @property
    def root(self) -> Path: ...


class ScreenParts(Panes, Says, Protocol):
    """The parts most helpers use: panes, workers and the notice line."""

    @property
    def launch(self) -> Rooted: ...

    @property
    def turn_worker(self) -> Worker[None] | None: ...
