"""What a session turn yields besides the protocol and parse events, and the union of them all.

Events are frozen snapshots: nothing in one changes after it is yielded (a Proposal, carried by
OperationProposed, is the one live object: see approval.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from .approval import Decision, Proposal
from .edits.ops import Operation
from .edits.parser import FileFinished, FileStarted, HunkStarted, LineAdded
from .errors import SparkPairError
from .protocol.events import (
    Completed,
    Failed,
    FirstToken,
    Metrics,
    ModelChanged,
    Retrying,
    Rewound,
    Started,
    TextDelta,
    TransportChanged,
    Usage,
)
from .values import Frozen, Value, set_field


class TurnStatus(StrEnum):
    APPLIED = "applied"  # files were written (journaled for undo)
    DRY_RUN = "dry_run"  # checked, nothing written on purpose
    REJECTED = "rejected"  # every operation was rejected
    NO_CHANGES = "no_changes"  # the reply held no operation, or none that changes a byte
    REFUSED = "refused"  # policy refused an operation: nothing written
    CONFLICT = "conflict"  # an operation does not apply (conflict, stale, path): nothing written
    CANCELLED = "cancelled"
    FAILED = "failed"


class RefusalKind(StrEnum):
    POLICY = "policy"
    STALE = "stale"
    CONFLICT = "conflict"
    PATH = "path"


class Outcome(StrEnum):
    """What happened to one operation once the turn is over."""

    APPLIED = "applied"
    NOT_APPLIED = "not_applied"  # skipped (dry run), rejected, or the turn wrote nothing


class TurnStarted(Frozen):
    __slots__ = ("turn_id", "prompt", "files", "context_tokens", "followup")
    turn_id: str
    prompt: str
    files: tuple[str, ...]  # files whose content went into the context
    context_tokens: int  # estimate of the input size
    followup: bool  # only the new instruction and on-disk changes were prepared

    def __init__(self, turn_id: str, prompt: str, files: tuple[str, ...], context_tokens: int,
                 followup: bool) -> None:
        set_field(self, "turn_id", turn_id)
        set_field(self, "prompt", prompt)
        set_field(self, "files", files)
        set_field(self, "context_tokens", context_tokens)
        set_field(self, "followup", followup)


@dataclass(frozen=True, slots=True)
class ContextChosen:
    """What the request shows besides the instruction, right after `TurnStarted`: each file
    with the reason it is there and how it was shown (`workspace.context.ContextFile`), the
    files withheld (path, why, whether the instruction named it) and the repository map's
    tokens."""

    files: tuple[Any, ...]
    withheld: tuple[tuple[str, str, bool], ...] = ()
    map_tokens: int = 0


class OperationProposed(Frozen):
    """An operation is complete and its proposal goes to the approver (again, for a stale
    file: then `proposal.stale` is True)."""

    __slots__ = ("proposal",)
    proposal: Proposal

    def __init__(self, proposal: Proposal) -> None:
        set_field(self, "proposal", proposal)

    @property
    def index(self) -> int:
        return self.proposal.index

    @property
    def op(self) -> Operation:
        return self.proposal.op


class Decided(Frozen):
    __slots__ = ("index", "op", "decision")
    index: int
    op: Operation
    decision: Decision

    def __init__(self, index: int, op: Operation, decision: Decision) -> None:
        set_field(self, "index", index)
        set_field(self, "op", op)
        set_field(self, "decision", decision)


class Stale(Frozen):
    """A target file changed on disk after the request went out (one event per change)."""

    __slots__ = ("path", "index")
    path: str
    index: int | None  # the operation on that path, None while it is still being written

    def __init__(self, path: str, index: int | None) -> None:
        set_field(self, "path", path)
        set_field(self, "index", index)


class Refused(Frozen):
    __slots__ = ("index", "op", "reason", "kind")
    index: int
    op: Operation
    reason: str
    kind: RefusalKind

    def __init__(self, index: int, op: Operation, reason: str, kind: RefusalKind) -> None:
        set_field(self, "index", index)
        set_field(self, "op", op)
        set_field(self, "reason", reason)
        set_field(self, "kind", kind)


class Applied(Frozen):
    __slots__ = ("turn_id", "changed", "notes")
    turn_id: str
    changed: tuple[str, ...]
    notes: tuple[str, ...]

    def __init__(self, turn_id: str, changed: tuple[str, ...], notes: tuple[str, ...]) -> None:
        set_field(self, "turn_id", turn_id)
        set_field(self, "changed", changed)
        set_field(self, "notes", notes)


class TurnResult(Value):
    __slots__ = ("turn_id", "status", "text", "operations", "decisions", "outcomes", "changed",
                 "notes", "error", "usage", "metrics", "retries", "model", "transport",
                 "response_id")
    turn_id: str
    status: TurnStatus
    text: str
    operations: list[Operation]
    decisions: list[Decision | None]
    outcomes: list[Outcome]
    changed: list[str]
    notes: list[str]
    error: SparkPairError | None
    usage: Usage | None
    metrics: Metrics | None
    retries: int
    model: str
    transport: str
    response_id: str | None

    def __init__(self, turn_id: str, status: TurnStatus, text: str = "",
                 operations: list[Operation] | None = None,
                 decisions: list[Decision | None] | None = None,
                 outcomes: list[Outcome] | None = None, changed: list[str] | None = None,
                 notes: list[str] | None = None, error: SparkPairError | None = None,
                 usage: Usage | None = None, metrics: Metrics | None = None, retries: int = 0,
                 model: str = "", transport: str = "", response_id: str | None = None) -> None:
        self.turn_id = turn_id
        self.status = status
        self.text = text
        self.operations = [] if operations is None else operations
        self.decisions = [] if decisions is None else decisions
        self.outcomes = [] if outcomes is None else outcomes
        self.changed = [] if changed is None else changed
        self.notes = [] if notes is None else notes
        self.error = error
        self.usage = usage
        self.metrics = metrics
        self.retries = retries
        self.model = model
        self.transport = transport
        self.response_id = response_id

    @property
    def ok(self) -> bool:
        return self.error is None


class TurnFinished(Frozen):
    __slots__ = ("result",)
    result: TurnResult

    def __init__(self, result: TurnResult) -> None:
        set_field(self, "result", result)


SessionEvent = (TurnStarted | ContextChosen | Started | TextDelta | FirstToken | Usage | Retrying
                | Rewound | TransportChanged | ModelChanged | Completed | Failed | FileStarted
                | HunkStarted | LineAdded | FileFinished | OperationProposed | Stale | Decided
                | Refused | Applied | TurnFinished)


class Frame(Frozen):
    """The events of one interval of a turn, for a screen that repaints at frame rate."""

    __slots__ = ("events", "text", "partial_line")
    events: tuple[SessionEvent, ...]
    text: str  # the model text that arrived in these events
    partial_line: str  # the diff line still being written (after the last complete one)

    def __init__(self, events: tuple[SessionEvent, ...], text: str, partial_line: str) -> None:
        set_field(self, "events", events)
        set_field(self, "text", text)
        set_field(self, "partial_line", partial_line)

    @property
    def last(self) -> bool:
        """Whether this frame ends the turn (it holds the TurnFinished)."""
        return bool(self.events) and isinstance(self.events[-1], TurnFinished)
