"""The operations of one turn, the proposal open for each and the decisions that came back."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from ..edits.ops import Modify, Operation, Rename, op_paths
from .approval import Action, Approver, Decision, Ended, Proposal
from .events import Decided, OperationProposed


class Proposals:
    """Asks the approver about each operation; a stale or rewound proposal is ended first."""

    def __init__(self, approver: Approver, turn_id: str) -> None:
        self.approver = approver
        self.turn_id = turn_id
        self.ops: list[Operation] = []
        self.current: list[Proposal] = []
        self.tasks: list[asyncio.Task[Decision] | None] = []
        self.decided: list[Decision | None] = []
        self.on_answer: Callable[[Proposal], None] = lambda p: None

    def add(self, op: Operation) -> int:
        self.ops.append(op)
        self.current.append(Proposal(self.turn_id, len(self.ops) - 1, op))
        self.tasks.append(None)
        self.decided.append(None)
        return len(self.ops) - 1

    def ask(self, index: int, *, stale: bool) -> OperationProposed:
        """Put operation `index` to the approver (again); its earlier decision no longer counts."""
        proposal = Proposal(self.turn_id, index, self.ops[index], stale=stale)
        self.current[index] = proposal
        self.decided[index] = None
        task = asyncio.ensure_future(self.approver.decide(proposal))
        self.tasks[index] = task
        task.add_done_callback(lambda _: self.on_answer(proposal))
        return OperationProposed(proposal)

    def answered(self, proposal: Proposal) -> Decided | None:
        """The Decided event for a finished decide() task (None for an ended proposal)."""
        i = proposal.index
        task = self.tasks[i] if i < len(self.tasks) else None
        if proposal.ended is not None or task is None or self.current[i] is not proposal:
            return None
        decision = _checked(_decision_of(task), self.ops[i])
        self.decided[i] = decision
        return Decided(i, self.ops[i], decision)

    def pending(self) -> bool:
        return any(d is None and t is not None and p.ended is None
                   for d, t, p in zip(self.decided, self.tasks, self.current, strict=True))

    def index_of(self, path: str) -> int | None:
        return next((i for i, op in enumerate(self.ops) if path in op_paths(op)), None)

    def end(self, index: int, why: Ended) -> None:
        proposal, task = self.current[index], self.tasks[index]
        if proposal.ended is None:
            proposal.ended = why
        if why is Ended.STALE:
            proposal.stale = True
        if task is not None and not task.done():
            task.cancel()
        self.tasks[index] = None
        self.decided[index] = None

    def end_all(self, why: Ended) -> None:
        for i, task in enumerate(self.tasks):
            if task is not None and not task.done():
                if self.current[i].ended is None:
                    self.current[i].ended = why
                task.cancel()

    def forget(self) -> None:
        """Drop every operation parsed so far (their text was rewound)."""
        self.end_all(Ended.REWOUND)
        self.ops, self.current, self.tasks, self.decided = [], [], [], []


def _checked(decision: Decision, op: Operation) -> Decision:
    """The decision, or a refusal when it names a hunk the operation does not have (a front
    end's mistake: which hunks were meant is never guessed)."""
    count = len(op.hunks) if isinstance(op, Modify | Rename) else 0
    named = [*(decision.hunks or ()), *(i for i, _ in decision.amended),
             *(i for i, _ in decision.notes)]
    bad = sorted({i for i in named if not (type(i) is int and 0 <= i < count)}, key=str)
    if not bad or decision.action in (Action.REFUSE, Action.SKIP):
        return decision
    have = (f"{count} hunks (0 to {count - 1})" if count > 2 else
            f"{count} hunks (0 and 1)" if count == 2 else
            "1 hunk (0)" if count == 1 else "no hunks to choose from")
    return Decision(Action.REFUSE, f"the decision names hunk {', '.join(map(str, bad))} but "
                                   f"{' -> '.join(op_paths(op))} has {have}")


def _decision_of(task: asyncio.Task[Decision]) -> Decision:
    if task.cancelled():
        return Decision(Action.SKIP, "no decision (cancelled)")
    exc = task.exception()
    if exc is not None:
        return Decision(Action.REFUSE, f"the approver failed: {exc}")
    return task.result()


