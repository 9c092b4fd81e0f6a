"""The apply step of a turn: every decision is in; check what changed, then write."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any

from ..base.errors import (
    Cancelled,
    EditError,
    PathRefused,
    PolicyRefused,
    SparkPairError,
    StaleError,
)
from ..edits.ops import Create, Delete, Operation, Rename, op_paths
from ..protocol.events import TurnRequest, Usage
from ..protocol.metrics import Stopwatch, estimate_request_tokens, estimate_tokens
from .approval import Action, Decision, select_hunks
from .events import Applied, Outcome, RefusalKind, Refused, SessionEvent, TurnResult, TurnStatus
from .parts import Parts
from .proposals import Proposals
from .stale import StaleTracker

if TYPE_CHECKING:
    from ..edits.apply import AppliedTurn

ASK_REASON = "the turn asked a question (AI?): it edits no file"


class ApplyStep:
    """The apply step of a TurnRun (which holds this state)."""

    s: Parts
    prompt: str
    ask: bool
    request: TurnRequest
    result: TurnResult
    proposals: Proposals
    stale: StaleTracker
    refused: dict[int, EditError]
    looks: dict[int, tuple[bool, str | None]]
    written: AppliedTurn | SparkPairError | None
    cancel_reason: Cancelled | None
    stopwatch: Stopwatch | None

    def _straight_write(self) -> list[tuple[int, Operation]] | None:
        """The operations the apply step writes when the last look finds none of their files
        changed: every decision is in and none refuses, no operation waits on a stale check,
        and some have an effect. None when the apply step has more to weigh first."""
        decided = self.proposals.decided
        if self.cancel_reason is not None or self.ask or self.refused or any(
                d is None or d.action == Action.REFUSE for d in decided):
            return None
        chosen = [(i, select_hunks(op, d))
                  for i, (op, d) in enumerate(zip(self.proposals.ops, decided, strict=True))
                  if d is not None and d.action == Action.ACCEPT]
        return [(i, op) for i, op in chosen if has_effect(op)] or None

    def _look_then_write(self, todo: list[tuple[int, Operation]],
                         chosen: list[tuple[int, Operation]]
                         ) -> tuple[dict[int, tuple[bool, str | None]],
                                    AppliedTurn | SparkPairError | None]:
        """The last look and, when it finds no target changed, the write it would lead to
        (in the same worker thread: the end of a turn waits for one thread, not two)."""
        from ..edits.apply import apply_turn

        looks = self.stale.look(todo)
        if any(stale for stale, _ in looks.values()):
            return looks, None
        try:
            return looks, apply_turn(self.s.root, [op for _, op in chosen],
                                     journal=self.s.journal, turn_id=self.result.turn_id,
                                     summary=self._summary(), stop=self.stopping)
        except (Cancelled, EditError) as exc:  # the apply step reports it
            return looks, exc

    def _summary(self) -> str:
        return " ".join(self.prompt.split())[:200]

    # ---- apply -----------------------------------------------------------------------------

    async def _apply(self) -> AsyncIterator[SessionEvent]:
        from ..edits.apply import AppliedTurn, apply_turn, check_each, check_ops

        r = self.result
        if self.cancel_reason is not None and not isinstance(self.written, AppliedTurn):
            # (a write the last look began gave way to it: what it waited for is said too)
            stopped = self.written if isinstance(self.written, Cancelled) else None
            self._finish_error(self.cancel_reason if stopped is None else self._stopped(stopped))
            return
        ops = self.proposals.ops
        if self.ask:
            self.proposals.decided = [Decision(Action.REFUSE, ASK_REASON) for _ in ops]
        decisions = [d or Decision(Action.SKIP, "no decision") for d in self.proposals.decided]
        r.decisions = list(decisions)
        r.outcomes = [Outcome.NOT_APPLIED] * len(ops)
        refused = [(i, d.reason) for i, d in enumerate(decisions) if d.action == Action.REFUSE]
        for i, reason in refused:
            yield Refused(i, ops[i], reason, RefusalKind.POLICY)
        chosen = [(i, select_hunks(op, d))
                  for i, (op, d) in enumerate(zip(ops, decisions, strict=True))
                  if d.action == Action.ACCEPT]
        chosen = [(i, op) for i, op in chosen if has_effect(op)]
        # a dry run writes nothing but checks what --apply would write
        dry = not refused and not chosen and any(d.action == Action.SKIP for d in decisions)
        checked = chosen if not dry else [
            (i, op) for i, op in enumerate(ops)
            if decisions[i].action == Action.SKIP and has_effect(op)]
        problems: list[tuple[int, SparkPairError]] = [
            (i, err) for i, err in sorted(self.refused.items())
            if decisions[i].action != Action.REJECT]
        for i, op in checked:
            if refused or i in self.refused:
                continue
            if i not in self.looks:
                self.looks.update(await asyncio.to_thread(self.stale.look, [(i, op)]))
            if not self.looks[i][0]:
                continue  # fresh operations are checked together by apply_turn
            try:  # re-check against the newer file (off the loop, so the deadline can fire)
                found = await asyncio.to_thread(check_ops, self.s.root, [op],
                                                stop=self.stopping)
            except Cancelled as exc:
                self._finish_error(self._stopped(exc))
                return
            if found:
                problems.append((i, StaleError(found[0])))
                yield Refused(i, op, found[0], RefusalKind.STALE)
        if refused:
            self._finish_error(PolicyRefused(_refusal_message(ops, refused)),
                               TurnStatus.REFUSED)
            return
        if problems:
            self._finish_error(problems[0][1], TurnStatus.CONFLICT)
            return
        if dry:
            try:
                found_each = await asyncio.to_thread(check_each, self.s.root,
                                                     [op for _, op in checked],
                                                     stop=self.stopping)
            except Cancelled as exc:
                self._finish_error(self._stopped(exc))
                return
            if found_each:
                i, op = checked[found_each[0][0]]
                error = found_each[0][1]
                yield Refused(i, op, error.message, refusal_kind(error))
                self._finish_error(error, TurnStatus.CONFLICT)
            else:
                r.status = TurnStatus.DRY_RUN
            return
        if not chosen:
            r.status = TurnStatus.DRY_RUN if any(d.action == Action.SKIP for d in decisions) \
                else (_not_chosen(ops, decisions) if decisions else TurnStatus.NO_CHANGES)
            return
        try:
            if isinstance(self.written, SparkPairError):
                raise self.written
            applied = self.written or await to_the_end(asyncio.ensure_future(asyncio.to_thread(
                apply_turn, self.s.root, [op for _, op in chosen], journal=self.s.journal,
                turn_id=r.turn_id, summary=self._summary(), stop=self.stopping)))
        except Cancelled as exc:  # the deadline came while planning or waiting for the lock
            self._finish_error(self._stopped(exc))
            return
        except EditError as exc:
            at = exc.details.get("op_index")
            i, op = chosen[at] if isinstance(at, int) and 0 <= at < len(chosen) else next(
                ((i, op) for i, op in chosen if any(p in exc.message for p in op_paths(op))),
                chosen[0])
            yield Refused(i, op, exc.message, refusal_kind(exc))
            self._finish_error(exc, TurnStatus.CONFLICT)
            return
        for i, _ in chosen:
            r.outcomes[i] = Outcome.APPLIED
        r.changed, r.notes = list(applied.changed), list(applied.notes)
        # operations that leave every byte as it was write no turn: there is none to undo
        r.status = TurnStatus.APPLIED if applied.changed else TurnStatus.NO_CHANGES
        if self.cancel_reason is not None and applied.changed:
            r.notes.append(f"{self.cancel_reason.message} while the files were being written; "
                           "a write is never cut short, so the turn was applied whole")
        if self.s.recorder is not None:  # the request log is written meanwhile (its thread)
            self.s.recorder.flush(r.turn_id)
        yield Applied(applied.turn_id, tuple(applied.changed), tuple(r.notes))

    def stopping(self) -> bool:
        """Whether the turn was cancelled (checks and the journal lock give way to it; called
        from worker threads)."""
        return self.cancel_reason is not None

    def _stopped(self, exc: Cancelled) -> Cancelled:
        """The turn's own cancel reason, with what was stopped (e.g. who holds the lock)."""
        reason = self.cancel_reason
        if reason is None or "waiting" not in exc.details:
            return reason or exc
        return Cancelled(f"{reason.message}; {exc.message}", hint=exc.hint, **reason.details)

    def _finish_error(self, error: SparkPairError, status: TurnStatus | None = None) -> None:
        r = self.result
        r.error = error
        r.status = status or (TurnStatus.CANCELLED if isinstance(error, Cancelled)
                              else TurnStatus.FAILED)
        if isinstance(error, Cancelled) and r.metrics is None and self.stopwatch is not None:
            tokens = r.usage.output_tokens if r.usage else estimate_tokens(r.text)
            r.metrics = self.stopwatch.stopped(tokens)  # stopped: report what was measured
            if r.usage is None:  # no count from the server: estimate both ways
                r.usage = Usage(estimate_request_tokens(self.request), tokens, estimated=True)
        if not r.outcomes:
            r.outcomes = [Outcome.NOT_APPLIED] * len(self.proposals.ops)
        if not r.decisions:
            r.decisions = list(self.proposals.decided)


async def to_the_end(work: asyncio.Future[Any]) -> Any:
    """The outcome of the write in its worker thread, also when the task awaiting it is
    cancelled meanwhile: the thread cannot be stopped once it writes, so the turn reports what
    it did (the write gives way to a stop only before its first file). The cancel is spent."""
    cancelled = 0
    try:
        while True:
            try:
                return await asyncio.shield(work)
            except asyncio.CancelledError:
                if work.cancelled():
                    raise
                cancelled += 1
    finally:
        task = asyncio.current_task()
        if task is not None:
            for _ in range(cancelled):
                task.uncancel()


def refusal_kind(error: SparkPairError) -> RefusalKind:
    if isinstance(error, StaleError):
        return RefusalKind.STALE
    return RefusalKind.PATH if isinstance(error, PathRefused) else RefusalKind.CONFLICT


def _refusal_message(ops: Sequence[Operation], refused: list[tuple[int, str]]) -> str:
    """Names the refused operation by its path (indices differ between people and JSON)."""
    i, reason = refused[0]
    op = ops[i]
    what = f"rename {op.src} to {op.dst}" if isinstance(op, Rename) else (
        f"{type(op).__name__.lower()} {op.path}")
    more = f" (and {len(refused) - 1} more)" if len(refused) > 1 else ""
    return f"{what} refused: {reason}{more}; nothing was written"


def _not_chosen(ops: Sequence[Operation], decisions: Sequence[Decision]) -> TurnStatus:
    """Nothing accepted: the person's rejection, unless the tool left out every hunk (its lines
    are not in the file): then nobody rejected anything and the turn did not apply."""
    from .review import verdicts_of

    fates = {str(v.fate) for v in verdicts_of(ops, decisions)}
    return TurnStatus.CONFLICT if fates == {"unfit"} else TurnStatus.REJECTED


def has_effect(op: Operation) -> bool:
    if isinstance(op, Rename | Create | Delete):
        return True
    return bool(op.hunks)

