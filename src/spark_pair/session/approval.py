"""Approval: the session awaits a Decision for every operation before anything is written.

The session calls `approver.decide(proposal)` as soon as an operation is parsed, while the
stream goes on; decisions may come back in any order and at any time before the turn ends.
Headless runs use PolicyApprover (flags); an interactive front end answers from its screen.

Deciding per hunk (what a front end does):

    class ScreenApprover:
        async def decide(self, proposal: Proposal) -> Decision:
            future = self.pending[proposal.index] = asyncio.get_running_loop().create_future()
            show(proposal)             # proposal.op.hunks, numbered from 0 as the events name them
            return await future        # resolved by the user's keys

    # the user accepted hunks 0 and 2 of operation 1 and rejected hunk 1:
    app.pending[1].set_result(Decision(Action.ACCEPT, hunks=(0, 2)))

`Decision.hunks` holds indices into `proposal.op.hunks` (the `hunk_index` of the events); None
accepts every hunk; an empty tuple keeps none (a Modify then writes nothing, a Rename only moves
the file). A Create or Delete has no hunks to choose from: it is accepted or not as a whole.
An index the operation does not have (in `hunks`, `amended` or `notes`) turns the decision into
a refusal: the turn writes nothing.

A proposal can end without a decision: the session sets `proposal.ended` (why, an `Ended`) and
then cancels the `decide()` task. When the target file changes on disk while the proposal is
open or decided-but-not-written, the old proposal ends with `Ended.STALE` and the same index is
asked again with a new Proposal whose `stale` is True: a front end keeps one pending decision
per index and replaces it when a new proposal for that index arrives.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from ..base.config import PROJECT_FILE
from ..edits.ops import Create, Delete, Hunk, Modify, Operation, Rename, op_paths


class Action(StrEnum):
    ACCEPT = "accept"  # write it (or the chosen hunks)
    REJECT = "reject"  # a person said no: the operation is skipped, the others may still apply
    REFUSE = "refuse"  # policy said no: the whole turn writes nothing
    SKIP = "skip"  # dry run: nothing is written, nothing is wrong


class Ended(StrEnum):
    """Why a proposal ended without (or before) its decision counted."""

    STALE = "stale"  # the file changed on disk: the same index is asked again
    REWOUND = "rewound"  # a retried reply differs: the operation is parsed again (new proposal)
    REPAIRED = "repaired"  # the repair round mended its hunks: the same index is asked again
    CANCELLED = "cancelled"  # the turn was cancelled
    TURN_OVER = "turn over"  # the turn failed or ended before a decision arrived


@dataclass(frozen=True, slots=True)
class Decision:
    action: Action
    reason: str = ""
    hunks: tuple[int, ...] | None = None  # accepted hunk indices (Modify/Rename); None = all
    notes: tuple[tuple[int, str], ...] = ()  # a person's reason per rejected hunk index
    amended: tuple[tuple[int, Hunk], ...] = ()  # accepted hunks a person rewrote (index, hunk)
    content: str | None = None  # a created file's content as a person rewrote it
    unfit: tuple[int | None, ...] = ()  # left out by the tool, not a person: they can not
    # apply to the file as it is (hunk indices; None: the operation as a whole)

    @property
    def accepted(self) -> bool:
        return self.action == Action.ACCEPT


@dataclass(slots=True, eq=False)  # each proposal is its own: equal only to itself
class Proposal:
    """One operation put to the approver. `stale` and `ended` are live: the session sets them
    while the approver is thinking (read them, never set them)."""

    turn_id: str
    index: int  # the operation's index in the turn (events and Decision use the same)
    op: Operation
    stale: bool = False  # the target changed on disk since the model saw it
    ended: Ended | None = None  # set just before the decide() task is cancelled


class Approver(Protocol):
    """Anything that decides on one proposal (a policy, a person at a screen)."""

    async def decide(self, proposal: Proposal) -> Decision: ...


class PolicyApprover:
    """Headless approval from flags: deletes and renames need their own permission."""

    def __init__(self, apply: bool = False, allow_delete: bool = False,
                 allow_rename: bool = False) -> None:
        self.apply = apply
        self.allow_delete = allow_delete
        self.allow_rename = allow_rename

    async def decide(self, proposal: Proposal) -> Decision:
        return self.decide_op(proposal.op)

    def decide_op(self, op: Operation) -> Decision:
        no = Action.REFUSE if self.apply else Action.SKIP
        if touches_config(op):
            return Decision(no, CONFIG_REASON)
        if isinstance(op, Delete) and not self.allow_delete:
            reason = "delete needs --allow-delete"
            if op.uncommitted:
                reason += " (the file has uncommitted changes)"
            return Decision(no, reason)
        if isinstance(op, Rename) and not self.allow_rename:
            return Decision(no, "rename needs --allow-rename")
        if not self.apply:
            return Decision(Action.SKIP, "dry run (use --apply to write)")
        return Decision(Action.ACCEPT, "allowed by flags")


CONFIG_REASON = (f"{PROJECT_FILE} is spark-pair's own config (base URL, key variable): a model "
                 "never changes it; edit it yourself")


def touches_config(op: Operation) -> bool:
    """Whether the operation writes, moves or removes a spark-pair project config file: one
    that could send the key to another server on the next run."""
    return any(p.rsplit("/", 1)[-1].lower() == PROJECT_FILE for p in op_paths(op))


def select_hunks(op: Operation, decision: Decision) -> Operation:
    """The operation limited to the hunks the decision accepted, with a person's amendments."""
    if isinstance(op, Create) and decision.content is not None:
        return Create(op.path, decision.content, op.base_hash)
    if (decision.hunks is None and not decision.amended) or not isinstance(op, Modify | Rename):
        return op
    chosen = set(range(len(op.hunks)) if decision.hunks is None else decision.hunks)
    own = dict(decision.amended)
    keep = [own.get(i, h) for i, h in enumerate(op.hunks) if i in chosen]
    if isinstance(op, Modify):
        return Modify(op.path, keep, op.base_hash)
    return Rename(op.src, op.dst, keep, op.base_hash)
