"""Try before keep: the check's output live, pass/fail and duration, then keep or roll back.

The turn is already applied (journaled) when this screen opens. alt+y keeps it, alt+n rolls it back
byte for byte (the caller undoes the turn); alt+n while the check runs stops it first. Quitting
mid-check stops the check's process group and leaves the turn applied and undoable. A failed
check stays on screen until the person answers (in a fix loop the status says what alt+y sends
next); output that points at the environment (a module or command not found) goes to the model
only with alt+f. Letters typed here go to the prompt: they answer nothing.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path

from rich.cells import cell_len
from rich.text import Text
from textual import events, work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.notifications import Notification
from textual.screen import ModalScreen
from textual.strip import Strip
from textual.widgets import Label, Log
from textual.worker import WorkerCancelled, WorkerFailed

from ...base.errors import redact
from ...session.fixloop import environment_cause
from ...workspace.checkrun import CheckResult, run_check
from .. import bindings
from ..fixrounds import SENDS
from ..textual_private import withdraw
from ..typed import NEW_LINE, enter_hint, main_screen, pass_typed
from ..widgets.diff_rows import mark_edges
from ..widgets.prompt import MAX_ROWS, Prompt


class CheckLog(Log):
    """The check's output: a line cut at the edge is marked as in the live diff (→ it goes on,
    ← it starts left of the view)."""

    def render_line(self, y: int) -> Strip:
        strip = super().render_line(y)
        scroll_x, scroll_y = self.scroll_offset
        lines = self.lines
        if scroll_y + y >= len(lines):
            return strip
        return mark_edges(strip, cell_len(lines[scroll_y + y]), scroll_x, self.rich_style)


HELD = 4096  # characters of a line without its end held back at most (then shown as it is)
MIN_ROWS = 10  # the pane's height on a terminal too short to leave the prompt in view
RUNNING_KEYS = "[b]alt+n[/b] stop the check and roll the turn back (byte for byte)"


class CheckScreen(ModalScreen[bool]):
    """Answers True to keep the applied turn, False to roll it back."""

    BINDINGS = bindings.CHECK

    DEFAULT_CSS = """
    CheckScreen {
        align: center top;  /* above the prompt: what is typed here shows there */
    }
    CheckScreen > Vertical {
        width: 90%;
        height: 80%;  /* (then as much as leaves the prompt in view) */
        margin-top: 1;
        border: thick $accent;
        background: $surface;
        padding: 0 1;
    }
    CheckScreen Log {
        height: 1fr;
        border: round $secondary;
        overflow: auto;  /* scrollbars only once the output needs them */
    }
    CheckScreen #check-keys {
        width: 100%;  /* wraps: every key stays in view */
    }
    CheckScreen #check-status {
        width: 100%;  /* wraps: the question at its end stays in view */
        text-style: bold;
    }
    """

    def __init__(self, command: str, cwd: Path, timeout_s: float,
                 settle: Callable[[CheckResult], bool | str | None] | None = None) -> None:
        """`settle`: told the result; True closes the screen at once (a passing fix round),
        a text says what alt+y does next (the fix loop), None asks keep / roll back."""
        super().__init__()
        self.command, self.cwd, self.timeout_s = command, cwd, timeout_s
        self.settle = settle
        self.result: CheckResult | None = None
        self.sends = False  # y sends the output to the model (a fix round follows)
        self.send = False  # the answer: keep, and send the output to the model
        self.cause = ""  # the output points at the environment, not the code
        self.keys = RUNNING_KEYS  # the keys that answer now (markup)
        self.hints: list[Notification] = []  # enter's toasts naming those keys

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(f"check: {redact(self.command)}  (the turn is applied; running…)",
                        id="check-status", markup=False)  # a command and its result: literal
            yield CheckLog(id="check-output", max_lines=5000)
            yield Label(self.keys, id="check-keys")  # alt+y keeps once there is a result

    def on_mount(self) -> None:
        self.worker = self._run()
        self._above_prompt()

    def on_resize(self) -> None:
        self._above_prompt()

    def _above_prompt(self, lines: bool = False) -> None:
        """The pane ends above the prompt (and a row it may wrap to; its full height once it
        holds several lines: `lines`), the footer and the meter: letters typed here go to the
        prompt, and there they show."""
        below = main_screen(self.app)
        prompt = next(iter(below.query(Prompt)), None) if below is not None else None
        if prompt is None or not prompt.region:
            return
        lines = lines or prompt.document.line_count > 1
        grows = max(0, MAX_ROWS + 2 - prompt.region.height) if lines else 1
        free = self.size.height - prompt.region.y + grows
        self.query_one(Vertical).styles.height = max(MIN_ROWS, self.size.height - free - 1)

    @work(group="check", exclusive=True, exit_on_error=False)
    async def _run(self) -> None:
        log = self.query_one(Log)
        pending = ""  # the line being written: a key is redacted once its line is whole

        def show(text: str) -> None:
            nonlocal pending
            pending += text
            cut = pending.rfind("\n") + 1 or (len(pending) if len(pending) > HELD else 0)
            if cut:
                log.write(redact(pending[:cut]))
                pending = pending[cut:]

        result = await run_check(self.command, self.cwd, timeout_s=self.timeout_s,
                                 on_output=show)
        if pending:
            log.write(redact(pending))
        self.result = result
        self.withdraw_hints()  # they named the running check's keys (alt+n stops it)
        answer = None if self.settle is None else self.settle(result)
        if answer is True:
            self.dismiss(True)
            return
        verdict = "PASSED" if result.passed else "FAILED"
        self.cause = environment_cause(result)
        self.sends = isinstance(answer, str) and answer.startswith(SENDS)
        status = f"{verdict}: {result.describe()}"
        keys = "[b]alt+y[/b] keep the turn   [b]alt+n[/b] roll it back (byte for byte)"
        if self.cause:
            status += (f"\nthis points at the environment, not the code: {self.cause}")
        if self.cause and self.sends:
            status += ("\nnothing goes to the model unless you say so: fix the environment, "
                       "then try again")
            keys = ("[b]alt+y[/b] keep the turn, send nothing   [b]alt+f[/b] send it to the "
                    "model anyway   [b]alt+n[/b] roll it back")
        elif isinstance(answer, str):
            status += f"\n{answer}"
            if self.sends:
                keys = ("[b]alt+y[/b] keep the turn and send the output   [b]alt+n[/b] roll it "
                        "back")
        else:
            status += "; keep (alt+y) or roll back (alt+n)?"
        self.query_one("#check-status", Label).update(status)
        self.keys = keys
        self.query_one("#check-keys", Label).update(keys)
        self.refresh_bindings()

    def withdraw_hints(self) -> None:
        """enter's toasts go once the keys they name change (or the pane closes)."""
        for hint in self.hints:
            withdraw(self.app, hint)
        self.hints.clear()

    def on_unmount(self) -> None:
        self.withdraw_hints()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "send":
            return self.sends and bool(self.cause)
        if action == "answer" and parameters[:1] == (True,):
            return self.result is not None  # nothing to keep on while the check runs
        return True

    def action_send(self) -> None:
        """alt+f: the output goes to the model although it points at the environment."""
        if self.sends and self.result is not None:
            self.send = True
            self.dismiss(True)

    def on_paste(self, event: events.Paste) -> None:
        pass_typed(self, event)  # a paste goes to the prompt whole
        if "\n" in event.text:
            self._above_prompt(lines=True)  # (the prompt grows: it stays in view)

    def on_key(self, event: events.Key) -> None:
        keys = Text.from_markup(self.keys).plain  # (enter answers nothing: it says which do)
        hint = enter_hint(self, event, " · ".join(k.strip() for k in keys.split("   ") if k))
        if hint is not None:
            self.hints.append(hint)
        else:
            pass_typed(self, event)  # a sentence typed now goes to the prompt: it answers nothing
            if event.key in NEW_LINE:
                self._above_prompt(lines=True)

    async def action_answer(self, keep: bool) -> None:
        if keep and self.result is None:
            self.notify("the check is still running: wait for it, or alt+n stops it and rolls "
                        "back", timeout=4)
            return
        if not self.worker.is_finished:  # stop the check (its whole process group) first
            self.worker.cancel()
            with contextlib.suppress(WorkerCancelled, WorkerFailed):
                await self.worker.wait()
        self.send = keep and self.sends and not self.cause
        self.dismiss(keep)
