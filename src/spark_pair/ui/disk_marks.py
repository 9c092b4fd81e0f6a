"""The files pane's `M` marks follow the disk: a file is marked while a person's change is on
disk, not one spark-pair itself wrote (a turn, /undo, /redo, a roll back) and nobody touched
since, nor one that came and went (a temp file). Checked in a thread (stat) on every change
the watcher reports and after each write of spark-pair's own."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Protocol

from .host import Panes
from .widgets.files import FilesPane

if TYPE_CHECKING:
    from .driver import Driver


class MarksHost(Panes, Protocol):
    """What the marks use of the main screen: the files pane, workers, the driver."""

    driver: Driver


class DiskMarks:
    def __init__(self, screen: MarksHost) -> None:
        self.screen = screen
        self.pending: set[str] = set()  # reported, not yet checked
        self.running = False

    def changed(self, paths: Iterable[str]) -> None:
        """The watcher reported `paths` (or spark-pair wrote some: nothing new)."""
        self.pending |= set(paths)
        if not self.running:  # (a check under way takes what arrives meanwhile too)
            self.running = True
            self.screen.run_worker(self._refresh(), group="disk-marks", exit_on_error=False)

    def wrote(self, paths: Iterable[str]) -> None:
        """spark-pair applied a turn that wrote `paths`."""
        self.screen.run_worker(self._wrote(list(paths)), group="disk-own", exit_on_error=False)

    async def _wrote(self, paths: list[str]) -> None:
        await self.screen.driver.wrote(paths)
        self.changed(())

    async def _refresh(self) -> None:
        try:
            for _ in range(100):  # (bounded: each round takes all that was reported)
                pane = self.screen.query_one(FilesPane)
                reported, self.pending = self.pending, set()
                paths = pane.changed | reported
                kept = await self.screen.driver.by_person(paths)
                kept &= pane.changed | reported  # (a new turn meanwhile cleared the marks)
                pane.set_changed(kept, gone=paths - kept)
                if not self.pending:
                    break
        finally:
            self.running = False
