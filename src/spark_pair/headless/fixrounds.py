"""`run --apply --check CMD [--fix N] [--escalate]`: the turn, its check, and fix rounds.

Each round is a normal turn of the same session, applied under the same flags and journaled
(`spark-pair undo` takes the rounds back, newest first). After each applied round the check
runs (bounded by `[review] check_timeout_s`; a hang counts as failed); a failure's output goes
back as the next round's instruction (session.fixloop). The run ends with exit 0 when the check
passes, exit 9 (CHECK) when it still fails after N rounds (the tree keeps the last round), or
the code of a turn that failed. JSON lines: `check` after each check, `round` before each fix
round, one `end` line last.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

from ..base.errors import Cancelled, ConfigError, SparkPairError, redact
from ..base.exitcodes import ExitCode
from ..session import fixloop
from ..store.rounds import Round
from ..workspace.checkrun import CheckResult, run_check
from .stops import stop_words

if TYPE_CHECKING:
    from ..session.events import TurnResult
    from ..session.runtime import Runtime
    from .diagnostics import Diagnostics
    from .jsonl import JsonLines
    from .options import RunOptions

Drive = Callable[[str | None, list[str]], Awaitable[None]]
SHOWN_LINES = 12  # lines of a failed check's output on stderr


class RoundReport(Protocol):
    """What the rounds use of the run's reporter (runner's, which imports this module)."""

    t0: float
    code: int | None
    result: TurnResult | None
    end: dict[str, Any] | None  # the turn's `end` line, held back for the check
    failed: object
    hunks: dict[int, int]


class RoundStop(Protocol):
    """What the rounds use of the run's stop: the check it cancels, the signal it heard."""

    between: asyncio.Future[CheckResult] | None
    signal: int | None


class Checked(Protocol):
    """Where a check's result is kept with its turn (the run's stored session)."""

    def checked(self, turn_id: str, command: str, ok: bool, tail: str) -> None: ...


class RunFixRounds:
    """A headless run's check and fix rounds (the app's are ui.fixrounds.AppFixRounds)."""

    def __init__(self, rt: Runtime, opts: RunOptions, jl: JsonLines | None, diag: Diagnostics,
                 report: RoundReport, stop: RoundStop, stored: Checked | None = None
                 ) -> None:
        """`stored`: the run's stored session (each check's result is kept with its turn, so
        a continued session tells the model, as the app's does)."""
        self.rt, self.opts, self.jl, self.diag = rt, opts, jl, diag
        self.stored = stored
        self.report, self.stop = report, stop
        self.task_id = fixloop.Loop(opts.fix).task_id
        self.model = rt.client.model
        self.stronger = rt.settings.model.stronger.strip()
        self.changed: list[str] = []  # files the rounds changed (shown to the next round)
        self.last_turn: str | None = None  # the newest applied round's turn id
        self.turns: list[str] = []  # every applied round's turn id (--commit commits them)

    async def run(self, drive: Drive) -> None:
        opts = self.opts
        if opts.escalate and not self.stronger:
            raise ConfigError("--escalate needs a stronger model, and none is configured",
                              hint='set [model] stronger = "..." in .spark-pair.toml (or the '
                                   "user config), or leave out --escalate")
        prompt: str | None = None
        index = 0
        while index <= opts.fix:
            if index:
                assert prompt is not None
                await self._start_round(index, prompt)
            await drive(prompt, list(self.changed))
            result = self.report.result
            escalated = self.rt.client.model == self.stronger != self.model
            if self.report.code != 0 or result is None:  # the turn failed: its code ends it
                self._record(index, result, None, escalated)
                if opts.escalate and not escalated and result is not None and \
                        fixloop.window_full(result.error):
                    await self._resend(index, prompt)  # the same instruction, a larger window
                    continue
                self._finish_turn_error()
                return
            self.report.code = None  # not decided yet (a hard stop now says so itself)
            if result.turn_id and result.changed:
                self.last_turn = result.turn_id
                self.turns.append(result.turn_id)
                self.changed.extend(p for p in result.changed if p not in self.changed)
            check = await self._check(index)
            if check is None:
                return  # stopped
            self._record(index, result, check.passed, escalated)
            if self.stored is not None and result.turn_id and result.changed:
                self.stored.checked(result.turn_id, check.command, check.passed, check.output)
            if check.passed:
                await self._passed(index)
                return
            prompt = fixloop.fix_instruction(check)
            index += 1
        self._end(int(ExitCode.CHECK), "check_failed",
                  f"the check still fails after {_rounds(opts.fix)}; the tree keeps the last "
                  "round's changes", hint=self._undo_hint())

    async def _passed(self, index: int) -> None:
        """The check passed: the end (with --commit, every applied round in one commit)."""
        passed = f"the check passed after {_rounds(index)}"
        if not self.opts.commit:
            self._end(0, "applied", passed)
            return
        from .commit import commit_turns

        commit, error = await commit_turns(self.rt.root, self.turns, self.rt.client,
                                           self.opts.prompt, self.rt.settings, self.diag.say)
        if error is not None:
            self._say_error(error)
        self._end(0 if error is None else int(ExitCode.COMMIT), "applied",
                  passed if error is None else f"{passed}; {error.message}", commit=commit)

    async def _start_round(self, index: int, prompt: str) -> None:
        opts = self.opts
        model = fixloop.round_model(index, opts.fix, self.model, self.stronger, opts.escalate)
        if self.rt.client.model == self.stronger:  # escalated already (a cut reply): it stays
            model = self.stronger
        escalated = model != self.rt.client.model
        if escalated:
            await self.rt.switch({"model.name": model})
        said = f"fix round {index} of {opts.fix} on {model}"
        if escalated:
            said += f" (escalated from {self.model}, the last round)"
        self.diag.say(said + ": the check's output goes back to the model")
        self._round_line(index, model, prompt)

    async def _resend(self, index: int, prompt: str | None) -> None:
        """A reply the model's context window cut: the same instruction to the stronger model
        (it counts as this round again, escalated)."""
        self.report.code = None  # the run goes on
        await self.rt.switch({"model.name": self.stronger})
        self.diag.say(f"the reply was cut by {self.model}'s context window: round {index} "
                      f"goes again to the stronger model {self.stronger} (--escalate)")
        self._round_line(index, self.stronger, prompt or self.opts.prompt)

    def _round_line(self, index: int, model: str, prompt: str) -> None:
        if self.jl is not None:
            self.jl.write({"type": "round", "round": index, "of": self.opts.fix, "model": model,
                           "escalated": model != self.model, "instruction_chars": len(prompt)})
        self.report.hunks.clear()
        self.report.failed = None
        self.report.result = None

    async def _check(self, index: int) -> CheckResult | None:
        """Run the check (Ctrl-C stops it: the run ends with 130); None when stopped."""
        opts, settings = self.opts, self.rt.settings
        timeout = settings.review.check_timeout_s
        if opts.timeout is not None:
            timeout = min(timeout, max(0.1, opts.timeout - (time.monotonic() - self.report.t0)))
        self.diag.say(f"check: {redact(opts.check)}")
        task = asyncio.ensure_future(run_check(opts.check, self.rt.root, timeout_s=timeout))
        self.stop.between = task
        try:
            result = await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise
            sig = self.stop.signal
            reason = Cancelled(stop_words(sig) if sig is not None else "stopped",
                               hint="the check was stopped; " + self._undo_hint())
            self._say_error(reason)
            self._end(int(ExitCode.INTERRUPTED), "cancelled", reason.message,
                      hint=self._undo_hint())
            return None
        finally:
            self.stop.between = None
        self.diag.say(result.describe())
        if not result.passed:
            _show_tail(self.diag, result.output)
        if self.jl is not None:
            shown, _ = fixloop.tail_within(fixloop.clean_output(result.output))
            self.jl.write({"type": "check", "round": index, "turn_id": self.last_turn,
                           "command": result.shown, "passed": result.passed,
                           "exit_code": result.exit_code, "timed_out": result.timed_out,
                           "duration_ms": round(result.duration_s * 1000, 1),
                           "output": shown, "error": result.error or None})
        return result

    def _record(self, index: int, result: TurnResult | None, passed: bool | None,
                escalated: bool) -> None:
        model = getattr(result, "model", "") or self.rt.client.model
        turn_id = result.turn_id if result is not None and result.changed else None
        self.rt.store.record_round(Round(self.task_id, index, model, turn_id, passed,
                                         escalated, time.time()))

    def _finish_turn_error(self) -> None:
        """A round's turn failed (its error is said already): its own end line and code."""
        if self.last_turn:
            self.diag.say("the earlier rounds stay applied: " + self._undo_hint())
        if self.jl is not None and self.report.end is not None:
            if self.opts.commit:
                self.report.end["commit_note"] = "a round failed: nothing was committed"
            self.jl.write(self.report.end)

    def _undo_hint(self) -> str:
        if not self.last_turn:
            return "nothing was written"
        if len(self.turns) <= 1:
            return "the turn stays applied: spark-pair undo takes it back"
        return (f"the {len(self.turns)} applied turns stay: spark-pair undo takes back the "
                "last; run it again for each earlier one")

    def _say_error(self, error: SparkPairError) -> None:
        if self.jl is not None:
            from .jsonl import error_fields

            self.jl.write({"type": "error", **error_fields(error)})

    def _end(self, code: int, status: str, message: str, hint: str = "",
             commit: dict[str, Any] | None = None) -> None:
        self.diag.say(message + (f"\n  hint: {hint}" if hint else ""))
        if commit is None and self.opts.commit:
            commit = {"commit": None, "commit_note": "the check did not pass: nothing was "
                                                     "committed"}
        if self.jl is not None:
            self.jl.write({"type": "end", "status": status, "exit_code": code,
                           "exit_name": ExitCode(code).name, "turn_id": self.last_turn,
                           "duration_ms": round((time.monotonic() - self.report.t0) * 1000, 1),
                           "message": message,
                           **(commit or {"commit": None, "commit_note": None})})
        self.report.code = code


def _rounds(fixes: int) -> str:
    if fixes == 0:
        return "the first turn"
    return f"{fixes} fix round{'s' if fixes > 1 else ''}"


def _show_tail(diag: Diagnostics, output: str) -> None:
    lines = fixloop.clean_output(output).rstrip("\n").split("\n")[-SHOWN_LINES:]
    if any(line.strip() for line in lines):
        diag.say("\n".join(["the check's output ends:", *("  | " + line for line in lines)]))

