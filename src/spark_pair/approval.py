"""Approval: the session awaits a Decision for every operation before anything is written.

The TUI resolves decisions from its approve pane; headless runs use PolicyApprover (flags).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from .config import PROJECT_FILE
from .edits.ops import Delete, Modify, Operation, Rename, op_paths

ACCEPT = "accept"  # write it
REJECT = "reject"  # a person said no: the operation is skipped, the others may still apply
REFUSE = "refuse"  # policy said no: the whole turn writes nothing
SKIP = "skip"  # dry run: nothing is written, nothing is wrong


@dataclass(frozen=True, slots=True)
class Decision:
    action: str  # ACCEPT | REJECT | REFUSE | SKIP
    reason: str = ""
    hunks: tuple[int, ...] | None = None  # accepted hunk indices (Modify/Rename); None = all

    @property
    def accepted(self) -> bool:
        return self.action == ACCEPT


class Approver(Protocol):
    """Anything that decides on one operation (a policy, a person in the TUI)."""

    async def decide(self, op: Operation) -> Decision: ...


class PolicyApprover:
    """Headless approval from flags: deletes and renames need their own permission."""

    def __init__(self, apply: bool = False, allow_delete: bool = False,
                 allow_rename: bool = False) -> None:
        self.apply = apply
        self.allow_delete = allow_delete
        self.allow_rename = allow_rename

    async def decide(self, op: Operation) -> Decision:
        return self.decide_now(op)

    def decide_now(self, op: Operation) -> Decision:
        if touches_config(op):
            return Decision(REFUSE if self.apply else SKIP, CONFIG_REASON)
        if isinstance(op, Delete) and not self.allow_delete:
            reason = "delete needs --allow-delete"
            if op.uncommitted:
                reason += " (the file has uncommitted changes)"
            return Decision(REFUSE if self.apply else SKIP, reason)
        if isinstance(op, Rename) and not self.allow_rename:
            return Decision(REFUSE if self.apply else SKIP, "rename needs --allow-rename")
        if not self.apply:
            return Decision(SKIP, "dry run (use --apply to write)")
        return Decision(ACCEPT, "allowed by flags")


CONFIG_REASON = (f"{PROJECT_FILE} is spark-pair's own config (base URL, key variable): a model "
                 "never changes it; edit it yourself")


def touches_config(op: Operation) -> bool:
    """Whether the operation writes, moves or removes a spark-pair project config file: one
    that could send the key to another server on the next run."""
    return any(p.rsplit("/", 1)[-1].lower() == PROJECT_FILE for p in op_paths(op))


def select_hunks(op: Operation, decision: Decision) -> Operation:
    """The operation limited to the hunks the decision accepted."""
    if decision.hunks is None or not isinstance(op, Modify | Rename):
        return op
    keep = [h for i, h in enumerate(op.hunks) if i in set(decision.hunks)]
    if isinstance(op, Modify):
        return Modify(op.path, keep, op.base_hash)
    return Rename(op.src, op.dst, keep, op.base_hash)
