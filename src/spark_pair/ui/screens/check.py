"""Try before keep: the check's output live, pass/fail and duration, then keep or roll back.

The turn is already applied (journaled) when this screen opens. alt+y keeps it, alt+n rolls it back
byte for byte (the caller undoes the turn); alt+n while the check runs stops it first. Quitting
mid-check stops the check's process group and leaves the turn applied and undoable.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path

from textual import events, work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, Log
from textual.worker import WorkerCancelled, WorkerFailed

from ...workspace.checkrun import CheckResult, run_check
from .. import bindings
from ..typed import pass_typed


class CheckScreen(ModalScreen[bool]):
    """Answers True to keep the applied turn, False to roll it back."""

    BINDINGS = bindings.CHECK

    DEFAULT_CSS = """
    CheckScreen {
        align: center middle;
    }
    CheckScreen > Vertical {
        width: 90%;
        height: 80%;
        border: thick $accent;
        background: $surface;
        padding: 0 1;
    }
    CheckScreen Log {
        height: 1fr;
        border: round $secondary;
        overflow: auto;  /* scrollbars only once the output needs them */
    }
    CheckScreen #check-status {
        width: 100%;  /* wraps: the question at its end stays in view */
        text-style: bold;
    }
    """

    def __init__(self, command: str, cwd: Path, timeout_s: float,
                 settle: Callable[[CheckResult], bool | None] | None = None) -> None:
        """`settle`: told the result; an answer it returns closes the screen at once (the fix
        loop goes on), None asks keep / roll back."""
        super().__init__()
        self.command, self.cwd, self.timeout_s = command, cwd, timeout_s
        self.settle = settle
        self.result: CheckResult | None = None

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(f"check: {self.command}  (the turn is applied; running…)",
                        id="check-status", markup=False)  # a command and its result: literal
            yield Log(id="check-output", max_lines=5000)
            yield Label("[b]alt+y[/b] keep the turn   [b]alt+n[/b] roll it back (byte for byte)")

    def on_mount(self) -> None:
        self.worker = self._run()

    @work(group="check", exclusive=True, exit_on_error=False)
    async def _run(self) -> None:
        log = self.query_one(Log)
        result = await run_check(self.command, self.cwd, timeout_s=self.timeout_s,
                                 on_output=log.write)
        self.result = result
        verdict = "PASSED" if result.passed else "FAILED"
        self.query_one("#check-status", Label).update(
            f"{verdict}: {result.describe()}; keep (alt+y) or roll back (alt+n)?")
        answer = None if self.settle is None else self.settle(result)
        if answer is not None:
            self.dismiss(answer)

    def on_key(self, event: events.Key) -> None:
        pass_typed(self, event)  # a sentence typed now goes to the prompt: it answers nothing

    async def action_answer(self, keep: bool) -> None:
        if keep and self.result is None:
            self.notify("the check is still running: wait for it, or alt+n stops it and rolls "
                        "back", timeout=4)
            return
        if not self.worker.is_finished:  # stop the check (its whole process group) first
            self.worker.cancel()
            with contextlib.suppress(WorkerCancelled, WorkerFailed):
                await self.worker.wait()
        self.dismiss(keep)
