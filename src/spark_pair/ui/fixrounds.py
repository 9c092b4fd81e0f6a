"""The app's fix loop: when the check fails after `t`, its output goes back to the model as the
next turn, up to `[review] fix_rounds`; then escalation to `[model] stronger` per
`[review] escalate` (session.fixloop has the rule).

Each round is a normal turn (streamed, reviewed, journaled: /undo takes each back) started
through the screen; once the person has decided it and it is applied, the check runs again. A
round whose check passes ends the loop and says so; a rejected, stopped or unfit round ends it;
escape stops it. A loop that ends without a pass asks keep or roll back (unless the person has
just answered that on the check): roll back takes back the whole task, every applied round and
the tried turn, newest first, byte for byte. Every model change is said in the notice, and the
model goes back to the drafting one when an escalated loop ends.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Protocol

from ..base.errors import SparkPairError
from ..session.events import TurnResult
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
from .host import ScreenParts

if TYPE_CHECKING:
    from .commits import Commits
    from .driver import Driver

SENDS = "alt+y keeps the turn and sends"  # how a plan that sends the output to the model starts


class FixHost(ScreenParts, Protocol):
    """What the fix loop uses of the main screen: its turns, driver and commits."""

    driver: Driver
    commits: Commits
    trying: bool  # `t`: the check runs once the turn is applied

    def sent_context(self) -> list[str]: ...

    def start_turn(self, prompt: str, files: Sequence[str]) -> bool: ...

    def run_queued(self) -> None: ...


class AppFixRounds:
    """The app's check and fix rounds (a headless run's are headless.fixrounds.RunFixRounds)."""

    def __init__(self, screen: FixHost) -> None:
        """`screen`: the main screen (its turns, notice, driver and settings)."""
        self.screen = screen
        self.loop: Loop | None = None
        self.prompt = ""  # the task's instruction (a new one starts a new task)
        self.in_round = False  # the turn running now is a fix round
        self.active = False  # rounds are under way (escape stops them)
        self.ended = False  # the task's loop ended (passed, stopped, out of rounds)
        self.drafter = ""  # the model the task started on (the loop goes back to it)
        self.changed: list[str] = []  # files the task's turns changed
        self.turns: list[tuple[str, str]] = []  # the task's applied turns: (label, turn id)
        self.stopping = False  # escape during a round under review: asked once it is over
        self.asking = False  # the loop's end is asked or rolled back: queued turns wait
        self.instruction = ""  # what the turn running now was asked (a cut reply's is resent)

    # ---- the task ---------------------------------------------------------------------------

    def turn_started(self, prompt: str, *, resent: bool) -> None:
        """A turn starts: a new instruction (not a round, regenerate or escalate) is a new task;
        so is the same instruction sent again once its task ended (passed, kept, rolled back)."""
        self.instruction = prompt
        if self.in_round or (resent and self.loop is not None and not self.ended):
            return
        settings = self.screen.driver.opened.settings
        review = settings.review
        self.loop = Loop(review.fix_rounds, Escalate(review.escalate),
                         settings.model.stronger.strip())
        self.prompt, self.active, self.ended, self.changed = prompt, False, False, []
        self.turns, self.stopping = [], False
        self.drafter = self.screen.driver.opened.client.model

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
        if self.stopping:
            back = self._back_what().replace("rolls", "roll", 1)
            return (f"the fix loop was stopped (escape): keep {self._kept_what()} (alt+y) or "
                    f"{back} (alt+n)?")
        model = self.screen.driver.opened.client.model
        step = replace(loop).after_check(False)  # (asked of a copy: nothing moves yet)
        if step == Step.FIX:
            return (f"{SENDS} this output to {model} as fix round {loop.fixes + 1} of "
                    f"{loop.fix_rounds} · alt+n {self._back_what()} and ends the loop")
        if step == Step.ESCALATE:
            return (f"{SENDS} this output to the stronger model {loop.stronger} (escalated) "
                    f"· alt+n {self._back_what()} and ends the loop")
        if step == Step.ASK:
            return (f"{SENDS} this output on: you are asked whether the stronger model "
                    f"{loop.stronger} takes the next round · alt+n {self._back_what()}")
        back = self._back_what().replace("rolls", "roll", 1)
        return (f"{self._still_fails(loop)} and the loop ends: keep {self._kept_what()} (alt+y) "
                f"or {back} (alt+n)?")

    def _kept_what(self) -> str:
        return "this turn" if len(self.turns) < 2 else f"the task's {len(self.turns)} turns"

    def _back_what(self) -> str:
        return ("rolls it back" if len(self.turns) < 2 else
                f"rolls back the whole task ({len(self.turns)} turns)")

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
        if self.stopping and not result.passed:  # the person answered keep on the check
            self._end(f"fix loop stopped (escape); kept: {self._kept_what()} (/undo takes "
                      "each back)")
            return True
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

    def rolled_back(self, turn_id: str = "") -> bool:
        """alt+n on the check: the task's loop ends. True: the task had more than this turn
        and all of it goes back (said when done); False: the caller rolls back this turn."""
        if self.loop is None or self.ended:
            return False
        self._record(turn_id or None, False)  # (its check failed: the task counts in stats)
        whole = len(self.turns) > 1 and any(t == turn_id for _, t in self.turns)
        if whole:
            self._hold()
            self.screen.run_worker(self._roll_back_task(), group="fixloop",
                                   exit_on_error=False)
        else:
            self._end("")
        return whole

    def round_over(self, result: TurnResult) -> None:
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
        if result.status == "rejected" and reason and not self.stopping:
            step = loop.after_rejection(True)
            if step in (Step.ASK, Step.ESCALATE):
                self.active = True
                self._next(step, self.prompt, why="two rejections with a reason")
                return
        if self.stopping:
            self._ask("fix loop stopped (escape): the round was not applied")
        elif was_round or self.active:
            what = {"rejected": "rejected (you decided)", "cancelled": "stopped"}.get(
                str(result.status), "not applied")
            unfit = "; ".join(dict.fromkeys(_unfit_why(v) for v in verdicts
                                            if v.fate == Fate.UNFIT))
            if unfit and not any(v.fate == Fate.REJECTED for v in verdicts):  # the tool's
                what = f"not applied: it could not apply ({unfit}); you rejected nothing"
            elif unfit:
                what = (f"not applied: part of it could not apply ({unfit}), you rejected the "
                        "rest")
            if result.error is not None and str(result.status) != "cancelled":
                what = f"not applied ({result.error.message})"
            self._ask(f"the fix loop ends: round {loop.round} was {what}")

    def stop(self) -> None:
        """Escape between rounds, or while one is under review (decided as any turn first):
        the loop ends and asks keep or roll back."""
        if not self.active or self.asking:
            return
        if self.in_round and self.screen.turn_worker is not None:
            self.stopping, self.active = True, False  # asked once the round is over
            self.screen.say("fix loop stopped (escape): no further round; decide this one as "
                            "any turn, then keep or roll back the task is asked")
            return
        self._ask("fix loop stopped (escape)")

    # ---- rounds -----------------------------------------------------------------------------

    def _next(self, step: Step, prompt: str, why: str = "", said: str = "") -> None:
        loop = self.loop
        assert loop is not None
        if step == Step.FIX:
            index = loop.next_round(step)
            self._start(index, prompt, (f"{said} · " if said else "") +
                        f"fix round {index} of {loop.fix_rounds} on "
                        f"{self.screen.driver.opened.client.model}: the check's output goes back "
                        "to the model · escape stops the loop")
            return
        why = why or self._still_fails(loop)
        if step == Step.ASK:
            def answered(yes: bool | None) -> None:
                if yes:
                    self._escalate(prompt, why)
                else:
                    self._ask(f"not escalated: {why}")

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
            self._ask("the fix loop stops: the stronger model could not be opened", back=False)
            return
        self._start(index, prompt, said)

    def _start(self, index: int, prompt: str, said: str) -> None:
        screen = self.screen
        self.in_round = True
        files = list(dict.fromkeys([*screen.sent_context(), *self.changed]))
        if not screen.start_turn(prompt, files):
            self.in_round = False
            self._ask(f"the fix loop stops: round {index} could not start")
            return
        # once decided and applied, the check runs again (when one is configured)
        screen.trying = bool(screen.driver.opened.settings.review.check.strip())
        screen.say(said)

    def applied(self, changed: list[str], checking: bool, turn_id: str = "") -> None:
        """A turn was applied (`checking`: the check runs next)."""
        self.changed.extend(p for p in changed if p not in self.changed)
        if turn_id and self.loop is not None and not self.ended:
            label = "the tried turn" if not self.turns else f"round {self.loop.round}"
            self.turns.append((label, turn_id))
        if self.stopping and self.in_round and not checking:
            self._ask("fix loop stopped (escape)")
            return
        if self.in_round and not checking:  # no check to run: the round is all
            self._end(f"round {self.loop.round if self.loop else 0} was applied "
                      "(/undo takes it back)")

    def _ask(self, text: str, back: bool = True) -> None:
        """The loop ends without a pass: keep what the task applied, or roll all of it back."""
        if not self.turns:
            self._end(f"{text}; nothing of this task is written", back)
            return
        n = len(self.turns)
        self._hold()
        what = "its turn" if n == 1 else f"all {n} of its turns ({_labels(self.turns[::-1])})"

        def answered(keep: bool | None) -> None:
            if keep:
                self._end(f"{text}; kept: {what} stay{'s' if n == 1 else ''} written (/undo "
                          "takes each back)", back)
            else:
                self.screen.run_worker(self._roll_back_task(text, back), group="fixloop",
                                       exit_on_error=False)

        self.screen.app.push_screen(ConfirmScreen(
            f"{text}. Keep what the task wrote (alt+y), or roll back {what}, newest first, "
            "byte for byte (alt+n)?"), answered)

    def _hold(self) -> None:
        """The loop is over but its question or roll back is not: no further round, and
        queued turns wait (they go once `_end` runs)."""
        self.ended, self.in_round, self.active, self.asking = True, False, True, True

    async def _roll_back_task(self, text: str = "", back: bool = True) -> None:
        """Every applied turn of the task, newest first (a turn undone meanwhile is passed
        over); stops at the first that can not go back and says what stays."""
        try:
            self.screen.say(await self._roll_back_turns(text))
        finally:
            self._end("", back)

    async def _roll_back_turns(self, text: str) -> str:
        from ..base.printable import shown
        from .review_state import Undone
        from .widgets.review import ReviewPane

        screen, driver = self.screen, self.screen.driver
        done: list[str] = []
        back: list[str] = []  # the turn ids rolled back, newest first
        files: list[str] = []
        lead = f"{text}; " if text else ""
        for i in range(len(self.turns) - 1, -1, -1):
            label, turn_id = self.turns[i]
            try:
                if await driver.undone(turn_id):
                    continue
                restored = (await driver.undo(turn_id)).paths
            except SparkPairError as exc:
                record_rollback(driver, back)
                stays = _labels(self.turns[i::-1])
                return (lead + (f"rolled back {', '.join(done)}; " if done else "") +
                        f"{label} could not be rolled back ({exc.message}): {stays} "
                        f"stay{'s' if i == 0 else ''} written · /undo takes "
                        f"{'it' if i == 0 else 'each'} back once the file is as the turn "
                        "left it")
            done.append(label)
            back.append(turn_id)
            files.extend(p for p in restored if p not in files)
            screen.query_one(ReviewPane).set_undone(turn_id, Undone.ROLLED_BACK)
        record_rollback(driver, back)
        await screen.commits.after_undo()
        return (lead + f"rolled back the whole task: {len(done)} turn(s), newest first "
                f"({', '.join(done)}), byte for byte: "
                f"{', '.join(map(shown, files)) or 'no file'} as before the task")

    def _end(self, text: str, back: bool = True) -> None:
        self.active = self.in_round = self.stopping = self.asking = False
        self.ended = True
        if text:
            self.screen.say(text)
        self.screen.run_queued()  # turns queued meanwhile go now
        if back:
            self._go_back(text)

    def _go_back(self, text: str) -> None:
        """An escalated loop is over: the drafting model again (see _back)."""
        loop = self.loop
        if loop is not None and loop.escalated and self.drafter and \
                self.screen.driver.opened.client.model != self.drafter:
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
            loop.task_id, loop.round, model or runtime.client.model, turn_id,
            passed, loop.escalated and loop.round > 0 and runtime.client.model == loop.stronger,
            time.time()))


def record_rollback(driver: Driver, turn_ids: Sequence[str]) -> None:
    """Turns rolled back after their check (newest first) are kept as rolled back: the stored
    session, the stats (not applied turns) and the next request, which tells the model."""
    runtime = driver.runtime
    notes = [driver.stored.rolled_back(t) if driver.stored is not None else ""
             for t in turn_ids]
    if runtime is None or not turn_ids:
        return
    for turn_id in turn_ids:
        runtime.store.record_rollback(turn_id)
    note = notes[0] or ("Outcome of your previous reply: applied, then rolled back (the user "
                        "did not keep it; the files are as before it).")
    if len(turn_ids) > 1:
        note += (f"\nYour {len(turn_ids) - 1} earlier change(s) for this task were rolled "
                 "back too: the files are as before the task.")
    runtime.workspace.tell(note)


def _unfit_why(verdict: Verdict) -> str:
    """What the tool said of an operation it left out: its path and why."""
    why = verdict.reason.removeprefix("it can not be applied: ")
    return why if verdict.path in why else f"{verdict.path}: {why}"


def _labels(turns: list[tuple[str, str]]) -> str:
    return ", ".join(label for label, _ in turns)


def _could_escalate(loop: Loop) -> bool:
    return bool(loop.stronger) and loop.escalate != Escalate.OFF


def _rounds(n: int) -> str:
    return "the first turn" if n == 0 else f"{n} round{'s' if n > 1 else ''}"
