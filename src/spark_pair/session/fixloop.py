"""Fix rounds and escalation: the loop that turns a fast draft into a change whose check passes.

When the configured check fails after a turn was applied, its output (the tail, within a token
budget, the key redacted, terminal escapes removed) goes back to the model as the next turn's
instruction (`fix_instruction`), up to a number of rounds. Each round is a normal turn: the
front end streams, reviews and journals it as any other. The rule for which model writes the
next round, and when to stop, lives here (`Loop`), so `run` and the app follow the same one:

- a passing check ends the loop (green);
- a failed check starts a fix round while rounds are left;
- after the fix rounds fail, after two rejections with a reason in one task, or when the
  server's own limit (its context window: the prompt and the reply together) cut a reply
  (`window_full`), the next round goes to the stronger model, as `escalate` says: "auto" sends
  it, "ask" asks the person first, "off" stops; a task is escalated once;
- a round the person rejects (or stops) ends the loop: the person decided.

`run --fix N --escalate` sends the last of its N rounds to the stronger model (`round_model`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from enum import StrEnum

from ..base.errors import IncompleteReply, redact
from ..protocol.metrics import estimate_tokens
from ..store.sessions import FIX_ROUND
from ..workspace.checkrun import CheckResult

CHECK_FENCE = "check-output"  # the block a fix instruction carries the output in (the sim reads it)
OUTPUT_TOKENS = 2000  # the check output's budget in a fix instruction
REJECTIONS_TO_ESCALATE = 2  # rejections with a reason in one task before escalation
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-_]")


class Escalate(StrEnum):
    AUTO = "auto"  # the next round goes to the stronger model, said on screen
    ASK = "ask"  # the person is asked first
    OFF = "off"  # never: the loop stops


class Step(StrEnum):
    GREEN = "green"  # the check passed: done
    FIX = "fix"  # another round on the same model
    ESCALATE = "escalate"  # the next round on the stronger model
    ASK = "ask"  # ask the person whether to escalate
    STOP = "stop"  # no round left (or the person ended it)


def tail_within(text: str, budget_tokens: int = OUTPUT_TOKENS) -> tuple[str, int]:
    """The last lines of `text` that fit `budget_tokens` (a longer last line keeps its end),
    and how many lines were left out before them."""
    lines = text.rstrip("\n").split("\n")
    kept: list[str] = []
    used = 0
    for line in reversed(lines):
        cost = estimate_tokens(line + "\n")
        if used + cost > budget_tokens:
            if not kept:  # one long line: its end
                kept.append(line[-budget_tokens * 4:])
            break
        kept.append(line)
        used += cost
    return "\n".join(reversed(kept)), len(lines) - len(kept)


def clean_output(text: str) -> str:
    """Check output as the model may read it: key redacted, terminal escapes and carriage
    returns (progress bars) removed, fences defused."""
    text = _ESCAPES.sub("", redact(text))
    text = "\n".join(line.rsplit("\r", 1)[-1] if "\r" in line else line
                     for line in text.replace("\r\n", "\n").split("\n"))
    return text.replace("```", "'''")


def fix_instruction(result: CheckResult, budget_tokens: int = OUTPUT_TOKENS) -> str:
    """The next turn's instruction after a failed check: what failed and its output's tail."""
    output, left_out = tail_within(clean_output(result.output), budget_tokens)
    if result.timed_out:
        what = f"did not finish in {result.duration_s:.0f} s and was stopped"
    elif result.error:
        what = f"could not start ({redact(result.error)})"
    elif result.exit_code is not None and result.exit_code < 0:
        what = f"was killed by signal {-result.exit_code}"
    else:
        what = f"failed with exit code {result.exit_code}"
    more = f" (the last lines; {left_out} earlier lines left out)" if left_out else ""
    return (f"{FIX_ROUND}{redact(result.command)}` {what}. Its output"
            f"{more}:\n\n```{CHECK_FENCE}\n{output or '(no output)'}\n```\n\n"
            "Change the code so that the check passes. Do not change the check itself, and "
            "keep the changes you made that were right.")


_ENVIRONMENT = re.compile(
    r"command not found|: not found$|No module named|ModuleNotFoundError|"
    r"Permission denied|No such file or directory|cannot execute|is not recognized as",
    re.IGNORECASE | re.MULTILINE)


def environment_cause(result: CheckResult) -> str:
    """The line of a failed check's output that points at the environment rather than the code
    (a command or module not found, permission denied; exit 126/127; a check that could not
    start), or '' when nothing does. Such a failure is asked about before it goes to the model:
    a fix round can not install a module."""
    if result.passed or result.timed_out:
        return ""
    if result.error:
        return f"the check could not start: {redact(result.error)}"
    lines = clean_output(result.output).splitlines()
    found = [line.strip() for line in lines if _ENVIRONMENT.search(line)]
    if found:
        return found[-1][:200]
    if result.exit_code in (126, 127):
        return (f"exit {result.exit_code}: the shell could not "
                f"{'run' if result.exit_code == 126 else 'find'} a command")
    return ""


def window_full(error: object) -> bool:
    """Whether a reply was cut by the server's own limit, below the max_tokens it was sent:
    the prompt filled the model's context window (a larger max_tokens would not help)."""
    from ..protocol.errors_map import LIMIT_REASONS

    return isinstance(error, IncompleteReply) and error.details.get("reason") in LIMIT_REASONS \
        and error.details.get("output_limit") is False


def round_model(index: int, rounds: int, model: str, stronger: str, escalate: bool) -> str:
    """Who writes round `index` (0: the first turn) of a headless run with `rounds` fix rounds:
    with `escalate`, the last fix round goes to the stronger model."""
    if escalate and stronger and rounds > 0 and index == rounds:
        return stronger
    return model


@dataclass(slots=True)
class Loop:
    """One task's progress through its rounds (the app's rule): feed it each round's outcome,
    it says the next step."""

    fix_rounds: int
    escalate: Escalate = Escalate.ASK
    stronger: str = ""
    task_id: str = field(default_factory=lambda: os.urandom(6).hex())
    round: int = 0  # the round running or just finished (0: the first turn)
    fixes: int = 0  # fix rounds sent on the drafting model
    escalated: bool = False
    reasons: int = 0  # rejections with a reason in this task
    asked: bool = False  # escalation was offered (once per task)

    def after_check(self, passed: bool) -> Step:
        """The step after a round's check."""
        if passed:
            return Step.GREEN
        if self.fixes < self.fix_rounds and not self.escalated:
            return Step.FIX
        return self._escalation()

    def after_rejection(self, with_reason: bool) -> Step:
        """The step after the person rejected a round (a reason counts toward escalation)."""
        self.reasons += with_reason
        if self.reasons >= REJECTIONS_TO_ESCALATE:
            return self._escalation()
        return Step.STOP

    def after_cut(self) -> Step:
        """The step after a reply the model's context window cut (`window_full`)."""
        return self._escalation()

    def _escalation(self) -> Step:
        if self.escalated or not self.stronger or self.escalate == Escalate.OFF or self.asked:
            return Step.STOP
        if self.escalate == Escalate.ASK:
            self.asked = True
            return Step.ASK
        return Step.ESCALATE

    def next_round(self, step: Step) -> int:
        """Count the round a FIX or ESCALATE (or an accepted ASK) starts; its index."""
        self.round += 1
        if step == Step.FIX:
            self.fixes += 1
        else:
            self.escalated = True
        return self.round
