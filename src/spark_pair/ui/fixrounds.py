"""The app's fix loop: when the check fails after `t`, its output goes back to the model as the
next turn, up to `[review] fix_rounds`; then escalation to `[model] stronger` per
`[review] escalate` (session.fixloop has the rule).

Each round is a normal turn (streamed, reviewed, journaled: /undo takes each back) started
through the screen; once the person has decided it and it is applied, the check runs again. A
round whose check passes ends the loop and says so; a rejected or stopped round ends it;
escape stops it between rounds. Every model change is said in the notice, and the model goes
back to the drafting one when an escalated loop ends.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import replace
from typing import Any

from ..base.errors import SparkPairError
from ..session.fixloop import (
    Escalate,
    Loop,
    Step,
    environment_cause,
    fix_instruction,
    window_full,
)
from ..session.review import verdicts_of
from ..store.rounds import Round
from ..store.verdicts import Fate, Verdict
from ..workspace.checkrun import CheckResult
from .dialogs.confirm import ConfirmScreen

SENDS = "alt+y keeps the turn and sends"  # how a plan that sends the output to the model starts


class FixRounds:
    def __init__(self, screen: Any) -> None:
        """`screen`: the main screen (its turns, notice, driver and settings)."""
        self.screen = screen
        self.loop: Loop | None = None
        self.prompt = ""  # the task's instruction (a new one starts a new task)
        self.in_round = False  # the turn running now is a fix round
        self.active = False  # rounds are under way (escape stops them)
        self.ended = False  # the task's loop ended (passed, stopped, out of rounds)
        self.drafter = ""  # the model the task started on (the loop goes back to it)
        self.changed: list[str] = []  # files the task's turns changed
        self.instruction = ""  # what the turn running now was asked (a cut reply's is resent)

    # ---- the task ---------------------------------------------------------------------------

    def turn_started(self, prompt: str, *, resent: bool) -> None:
        """A turn starts: a new instruction (not a round, regenerate or escalate) is a new task."""
        self.instruction = prompt
        if self.in_round or (resent and self.loop is not None):
            return
        settings = self.screen.driver.settings
        review = settings.review
        self.loop = Loop(review.fix_rounds, Escalate(review.escalate),
                         settings.model.stronger.strip())
        self.prompt, self.active, self.ended, self.changed = prompt, False, False, []
        self.drafter = self.screen.driver.client.model

    def settle(self, result: CheckResult) -> bool | str | None:
        """For the check screen: True closes it at once (a round's check passes: the loop
        ends and says so); a text says what alt+y does next (the screen stays until the person
        answers); None asks keep / roll back as before."""
        loop = self.loop
        if loop is None or self.ended:
            return None
        if not (self.active or self.in_round) and (
                result.passed or not (loop.fix_rounds > 0 or _could_escalate(loop))):
            return None
        if result.passed:
            return True
        model = self.screen.driver.client.model
        step = replace(loop).after_check(False)  # (asked of a copy: nothing moves yet)
        if step == Step.FIX:
            return (f"{SENDS} this output to {model} as fix round {loop.fixes + 1} of "
                    f"{loop.fix_rounds} · alt+n rolls it back and ends the loop")
        if step == Step.ESCALATE:
            return (f"{SENDS} this output to the stronger model {loop.stronger} (escalated) "
                    "· alt+n rolls it back and ends the loop")
        if step == Step.ASK:
            return (f"{SENDS} this output on: you are asked whether the stronger model "
                    f"{loop.stronger} takes the next round · alt+n rolls it back")
        return (f"{self._still_fails(loop)} and the loop ends: keep this turn (alt+y) or roll it "
                "back (alt+n)?")

    def checked(self, result: CheckResult | None, turn_id: str, send: bool = True) -> bool:
        """The check after a kept turn; False: the loop has nothing to say (plain keep).
        `send`: the person let the output go to the model (not for an environment failure)."""
        loop = self.loop
        if loop is None or self.ended or result is None or not self.active and (
                result.passed or not (loop.fix_rounds or _could_escalate(loop))):
            self._record(turn_id, None if result is None else result.passed)  # (off: plain)
            return False
        self._record(turn_id, result.passed)
        self.in_round = False
        if not send and not result.passed and replace(loop).after_check(False) != Step.STOP:
            self._end(f"{result.describe()}; kept, and nothing went to the model: "
                      f"{environment_cause(result) or 'the output points at the environment'}"
                      " · fix that, then try again (/undo puts the turn back)")
            return True
        step = loop.after_check(result.passed)
        if step == Step.GREEN:
            self._end(f"the check passes after {_rounds(loop.round)}: the loop ends "
                      "(/undo takes back each round)")
        elif step == Step.STOP:
            self._end(self._still_fails(loop) + ("" if loop.stronger else
                      "; set [model] stronger to escalate") + "; kept (/undo takes it back)")
        else:
            self.active = True
            self._next(step, fix_instruction(result), said=result.describe())
        return True

    def rolled_back(self) -> None:
        """alt+n on the check: the turn goes back and the task's loop ends (the roll back's
        notice says what was restored)."""
        if self.loop is not None and not self.ended:
            self._end("")

    def round_over(self, result: Any) -> None:
        """A turn ended without being applied (rejected, stopped, failed)."""
        loop = self.loop
        if loop is None or self.ended:
            return
        was_round, self.in_round = self.in_round, False
        verdicts = verdicts_of(result.operations, result.decisions)
        reason = any(v.fate == Fate.REJECTED and v.reason.strip() for v in verdicts)
        if was_round or self.active:
            self._record(None, None, result.model)
        if window_full(result.error):  # the prompt filled the window: a larger one may fit it
            step = loop.after_cut()
            if step in (Step.ASK, Step.ESCALATE):
                self.active = True
                self._next(step, self.instruction, why=f"the reply was cut by "
                           f"{result.model or 'the model'}'s context window")
                return
        if result.status == "rejected" and reason:
            step = loop.after_rejection(True)
            if step in (Step.ASK, Step.ESCALATE):
                self.active = True
                self._next(step, self.prompt, why="two rejections with a reason")
                return
        if was_round or self.active:
            what = {"rejected": "rejected (you decided)", "cancelled": "stopped"}.get(
                str(result.status), "not applied")
            if str(result.status) == "rejected" and not any(
                    v.fate == Fate.REJECTED for v in verdicts):  # the tool's, not yours
                what = "not applied: it could not apply (" + "; ".join(dict.fromkeys(
                    _unfit_why(v) for v in verdicts if v.fate == Fate.UNFIT)) + \
                    "); you rejected nothing"
            
            if result.error is not None and str(result.status) != "cancelled":
                what = f"not applied ({result.error.message})"
            self._end(f"the fix loop ends: round {loop.round} was {what}; earlier rounds "
                      "stay applied, /undo takes each back")

    def stop(self) -> None:
        """Escape between rounds (or while one is under review: it is decided as any turn)."""
        if self.active:
            self._end("fix loop stopped (escape): the applied rounds stay; /undo takes each "
                      "back")

    # ---- rounds -----------------------------------------------------------------------------

    def _next(self, step: Step, prompt: str, why: str = "", said: str = "") -> None:
        loop = self.loop
        assert loop is not None
        if step == Step.FIX:
            index = loop.next_round(step)
            self._start(index, prompt, (f"{said} · " if said else "") +
                        f"fix round {index} of {loop.fix_rounds} on "
                        f"{self.screen.driver.client.model}: the check's output goes back to "
                        "the model · escape stops the loop")
            return
        why = why or self._still_fails(loop)
        if step == Step.ASK:
            def answered(yes: bool | None) -> None:
                if yes:
                    self._escalate(prompt, why)
                else:
                    self._end(f"not escalated: {why}; the applied rounds stay (/undo takes "
                              "each back)")

            self.screen.app.push_screen(ConfirmScreen(
                f"{why}. Send the next round to the stronger model {loop.stronger}?"), answered)
        else:
            self._escalate(prompt, why)

    def _escalate(self, prompt: str, why: str) -> None:
        loop = self.loop
        assert loop is not None
        index = loop.next_round(Step.ESCALATE)
        self.screen.run_worker(self._switch_and_start(
            index, prompt, f"escalated ({why}): round {index} goes to the stronger model "
                           f"{loop.stronger} · escape stops the loop"), group="fixloop",
            exit_on_error=False)

    async def _switch_and_start(self, index: int, prompt: str, said: str) -> None:
        loop = self.loop
        assert loop is not None
        self.screen.say(f"switching to {loop.stronger} for the escalated round…")
        try:
            await self.screen.driver.reopen(**{"model.name": loop.stronger})
        except SparkPairError as exc:
            self.screen.show_error(exc)
            self._end("", back=False)
            return
        self._start(index, prompt, said)

    def _start(self, index: int, prompt: str, said: str) -> None:
        screen = self.screen
        self.in_round = True
        files = list(dict.fromkeys([*screen.sent_context(), *self.changed]))
        if not screen.start_turn(prompt, files):
            self.in_round = False
            self._end(f"the fix loop stops: round {index} could not start", back=True)
            return
        # once decided and applied, the check runs again (when one is configured)
        screen.trying = bool(screen.driver.settings.review.check.strip())
        screen.say(said)

    def applied(self, changed: list[str], checking: bool) -> None:
        """A turn was applied (`checking`: the check runs next)."""
        self.changed.extend(p for p in changed if p not in self.changed)
        if self.in_round and not checking:  # no check to run: the round is all
            self._end(f"round {self.loop.round if self.loop else 0} was applied "
                      "(/undo takes it back)")

    def _end(self, text: str, back: bool = True) -> None:
        self.active = self.in_round = False
        self.ended = True
        loop = self.loop
        if text:
            self.screen.say(text)
        self.screen.run_queued()  # turns queued meanwhile go now
        if back and loop is not None and loop.escalated and self.drafter and \
                self.screen.driver.client.model != self.drafter:
            self.screen.run_worker(self._back(text), group="fixloop", exit_on_error=False)

    async def _back(self, text: str) -> None:
        """After an escalated loop: the drafting model again, said on screen (once the turn
        under review, if any, is over: a connection is not switched under a turn)."""
        worker = self.screen.turn_worker
        if worker is not None:
            with contextlib.suppress(Exception):
                await worker.wait()
        try:
            await self.screen.driver.reopen(**{"model.name": self.drafter})
        except SparkPairError as exc:
            self.screen.show_error(exc)
            return
        self.screen.say(f"{text} · back on {self.drafter}" if text else
                        f"back on {self.drafter}")

    def _still_fails(self, loop: Loop) -> str:
        return f"the check still fails after {_rounds(loop.round)}"

    def _record(self, turn_id: str | None, passed: bool | None, model: str = "") -> None:
        loop, runtime = self.loop, self.screen.driver.runtime
        if loop is None or runtime is None:
            return
        runtime.store.record_round(Round(
            loop.task_id, loop.round, model or self.screen.driver.client.model, turn_id,
            passed, loop.escalated and loop.round > 0 and self.screen.driver.client.model ==
            loop.stronger, time.time()))


def _unfit_why(verdict: Verdict) -> str:
    """What the tool said of an operation it left out: its path and why."""
    why = verdict.reason.removeprefix("it can not be applied: ")
    return why if verdict.path in why else f"{verdict.path}: {why}"


def _could_escalate(loop: Loop) -> bool:
    return bool(loop.stronger) and loop.escalate != Escalate.OFF


def _rounds(n: int) -> str:
    return "the first turn" if n == 0 else f"{n} round{'s' if n > 1 else ''}"
