"""What of the earlier turns a request resends: the newest turns within a token budget.

The rule: failed attempts (a cut or unreadable reply, a cancel) are left out; a rejected,
refused or conflicting reply is replaced by a one-line stand-in while the outcome note keeps
what happened and the person's reasons; then the newest turns are kept while they fit in
`budget_tokens` (always the newest one, its reply cut to fit) and `max_turns`. The budget
counts instructions, replies and outcome notes; the file context a message showed when it was
first sent has a budget of its own ([context] budget_tokens). Each kept
turn's outcome ("applied to a.py", "rejected: reason") leads the next user message.

`SessionHistory` takes the place of the workspace's `History` (same calls), so a live session
and a resumed one resend by the same rule; `rule=False` resends every turn whole (kept for the
benchmark that measures what the rule saves).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..protocol.metrics import estimate_tokens
from ..protocol.request import Message
from ..store.sessions import ROLLED_BACK, UNDONE, StoredTurn
from ..workspace.prompt import History

DROPPED = frozenset({"failed", "cancelled"})  # failed attempts: never resent
# their text is not resent
STOOD_IN = frozenset({"rejected", "refused", "conflict", ROLLED_BACK, UNDONE})
STAND_IN = "(my proposed edit was not applied; the note that follows says why)"
CUT = "\n[... earlier part of this reply left out]"
UNFIT_WHY = "its lines are not in the file as it is"


@dataclass(slots=True)
class HistoryTurn:
    instruction: str
    sent: str
    reply: str
    status: str = "answered"  # a TurnStatus value once the turn is over
    outcome: str = ""  # the note the next user message begins with
    turn_id: str = ""  # the applied turn's (its outcome may change: a roll back)


class SessionHistory(History):
    """The conversation as resent (see the module docstring)."""

    def __init__(self, max_turns: int = 6, budget_tokens: int = 8000, *, rule: bool = True
                 ) -> None:
        super().__init__(max_turns)
        self.budget_tokens = budget_tokens
        self.rule = rule
        self.entries: list[HistoryTurn] = []

    # the History interface the workspace uses
    def add(self, instruction: str, reply: str, *, sent: str | None = None) -> None:
        self.entries.append(HistoryTurn(instruction, sent if sent is not None else instruction,
                                        reply))
        cap = max(self.max_turns * 4, 32)  # the rule picks from these
        if len(self.entries) > cap:
            del self.entries[: len(self.entries) - cap]

    def mark_last(self, status: str, outcome: str, turn_id: str = "") -> None:
        """How the newest turn ended (after the workspace added it)."""
        if self.entries:
            self.entries[-1].status = status
            self.entries[-1].outcome = outcome
            self.entries[-1].turn_id = turn_id or self.entries[-1].turn_id

    def mark(self, turn_id: str, status: str, outcome: str) -> None:
        """A kept turn's outcome changed (applied, then rolled back or undone)."""
        for t in self.entries:
            if turn_id and t.turn_id == turn_id:
                t.status, t.outcome = status, outcome

    def restore(self, turns: Iterable[StoredTurn]) -> str:
        """Take a stored session's turns; returns the outcome of the newest resendable one
        (for the next request's first line)."""
        self.entries = [HistoryTurn(t.instruction, t.instruction, t.reply, t.status,
                                    outcome_note(t), t.turn_id) for t in turns]
        kept = self.kept()
        return kept[-1].outcome if kept else ""

    def kept(self) -> list[HistoryTurn]:
        """The turns a request resends, oldest first."""
        if not self.rule:
            return self.entries[-self.max_turns:] if self.max_turns else []
        out: list[HistoryTurn] = []
        used = 0
        for t in reversed(self.entries):
            if t.status in DROPPED or len(out) >= self.max_turns:
                continue
            cost = _tokens(t)
            if out and used + cost > self.budget_tokens:
                break
            used += cost
            out.append(t)
        return out[::-1]

    def messages(self, *, full: bool = False) -> list[Message]:
        kept = self.kept()
        out: list[Message] = []
        lead = ""
        for i, t in enumerate(kept):
            user = t.sent if full else lead + t.instruction
            reply = t.reply
            if self.rule:
                if t.status in STOOD_IN:
                    reply = STAND_IN
                elif i == len(kept) - 1:  # (the files a message shows have their own budget)
                    reply = _fit(reply, self.budget_tokens - estimate_tokens(t.instruction)
                                 - estimate_tokens(t.outcome))
            out.append(Message("user", user))
            out.append(Message("assistant", reply))
            lead = t.outcome + "\n" if t.outcome and not full else ""
        return out

    def clear(self) -> None:
        self.entries.clear()

    def __len__(self) -> int:
        return min(len(self.kept()), self.max_turns)


def carrying_on(name: str, earlier: int, going: int) -> str:
    """The line a carried-on session begins with: how many earlier turns, how many of them go
    with the next request (a failed or stopped one never does; the budget may leave some out)."""
    text = f"session {name}: carrying on after {earlier} earlier turn{'s' if earlier != 1 else ''}"
    if going == earlier:
        return text + (" (it goes" if earlier == 1 else " (they go") + " with the next request)"
    if not going:
        return text + "; none goes with the next request (failed, stopped or over the budget)"
    return text + f"; {going} go{'es' if going == 1 else ''} with the next request"


def _tokens(t: HistoryTurn) -> int:
    reply = STAND_IN if t.status in STOOD_IN else t.reply
    return estimate_tokens(t.instruction) + estimate_tokens(reply) + estimate_tokens(t.outcome)


def _fit(reply: str, tokens: int) -> str:
    chars = max(tokens, 64) * 4
    return reply if len(reply) <= chars else reply[-chars:].lstrip() + CUT


def outcome_note(t: StoredTurn | Any) -> str:
    """One short paragraph: what became of a turn's reply, with a person's reasons."""
    status = t.status
    files = ", ".join(t.changed[:8]) + (" ..." if len(t.changed) > 8 else "")
    if status == "applied":
        text = f"Outcome of your previous reply: applied to {files or 'the files'}."
    elif status == ROLLED_BACK:  # applied, then taken back: the files are as before it
        text = (f"Outcome of your previous reply: applied to {files or 'the files'}, then "
                "rolled back (the user did not keep it; the files are as before it).")
    elif status == UNDONE:  # applied, then /undo: the files are as before it
        text = (f"Outcome of your previous reply: applied to {files or 'the files'}, then "
                "undone by the user (the files are as before it).")
    elif status == "dry_run":
        text = "Outcome of your previous reply: checked but not applied (a dry run)."
    elif status == "no_changes":
        text = "Outcome of your previous reply: no file changed."
    elif status in ("refused", "conflict") and (t.error or not _unfit(t.decisions)):
        text = f"Outcome of your previous reply: not applied ({t.error or status})."
    elif status == "conflict":  # the tool left out every hunk: nobody rejected anything
        text = (f"Outcome of your previous reply: not applied: {UNFIT_WHY}, not a rejection.")
    elif status == "rejected" and _unfit(t.decisions):
        text = (f"Outcome of your previous reply: not applied: some of it could not apply "
                f"({UNFIT_WHY}), the user rejected the rest.")
    elif status == "rejected":
        text = "Outcome of your previous reply: rejected by the user, not applied."
    else:
        return ""
    reasons = _reasons(t.decisions)
    if reasons:
        text += "\n" + reasons
    check = t.check
    if check:
        name = check.get("command", "the check")
        text += f"\nThe check `{name}` {'passed' if check.get('ok') else 'failed'}"
        tail = str(check.get("tail", "")).strip()
        text += f":\n{tail}" if tail and not check.get("ok") else "."
    return text


def _unfit(decisions: Sequence[dict[str, Any]]) -> bool:
    return any(d.get("fate") == "unfit" for d in decisions)


def _reasons(decisions: Sequence[dict[str, Any]]) -> str:
    lines = []
    for d in decisions:
        fate = d.get("fate")
        if fate not in ("rejected", "unfit"):
            continue
        what = d.get("path", "?") + (f" hunk {d['hunk'] + 1}" if d.get("hunk") is not None
                                     else "")
        why = " ".join(str(d.get("reason") or "").split())
        if fate == "unfit":
            lines.append(f"- could not apply (not rejected): {what}" + (f" ({why})" if why
                                                                        else ""))
        else:
            lines.append(f"- rejected: {what}" + (f' (reason: "{why}")' if why else ""))
    return "\n".join(lines)
