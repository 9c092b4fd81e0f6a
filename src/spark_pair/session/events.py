"""What a session turn yields besides the protocol and parse events, and the union of them all.

Events are frozen snapshots: nothing in one changes after it is yielded (a Proposal, carried by
OperationProposed, is the one live object: see approval.py). Most are NamedTuples (as immutable
as a frozen dataclass, at a fifth of the cost to define: a cold `run` defines them before its
request goes out); those with an `index` field (a tuple has index()) or an `Any` field (the
app's type check allows no Any) stay frozen dataclasses.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, NamedTuple

from ..base.errors import SparkPairError
from ..edits.ops import Operation
from ..edits.parse_events import FileFinished, FileStarted, HunkStarted, LineAdded
from ..protocol.events import (
    Completed,
    Failed,
    FirstToken,
    Metrics,
    ModelChanged,
    Retrying,
    Rewound,
    Started,
    Steered,
    TextDelta,
    TransportChanged,
    Usage,
)
from .approval import Decision, Proposal


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


class TurnStarted(NamedTuple):
    turn_id: str
    prompt: str
    files: tuple[str, ...]  # files whose content went into the context
    context_tokens: int  # estimate of the input size
    followup: bool  # only the new instruction and on-disk changes were prepared



@dataclass(frozen=True, slots=True)
class ContextChosen:
    """What the request shows besides the instruction, right after `TurnStarted`: each file
    with the reason it is there and how it was shown (`workspace.context.ContextFile`), the
    files withheld (path, why, whether the instruction named it) and the repository map's
    tokens."""

    files: tuple[Any, ...]
    withheld: tuple[tuple[str, str, bool], ...] = ()
    map_tokens: int = 0


@dataclass(frozen=True, slots=True)
class OperationProposed:
    """An operation is complete and its proposal goes to the approver (again, for a stale
    file: then `proposal.stale` is True)."""

    proposal: Proposal

    @property
    def index(self) -> int:
        return self.proposal.index

    @property
    def op(self) -> Operation:
        return self.proposal.op


@dataclass(frozen=True, slots=True)
class Decided:
    index: int
    op: Operation
    decision: Decision


@dataclass(frozen=True, slots=True)
class Stale:
    """A target file changed on disk after the request went out (one event per change)."""

    path: str
    index: int | None  # the operation on that path, None while it is still being written


@dataclass(frozen=True, slots=True)
class Refused:
    index: int
    op: Operation
    reason: str
    kind: RefusalKind


class Applied(NamedTuple):
    turn_id: str
    changed: tuple[str, ...]
    notes: tuple[str, ...]


class RepairStarted(NamedTuple):
    """Hunks that match nowhere in their files go back to the model (one round per turn):
    (operation index, hunk index, path) of each."""

    hunks: tuple[tuple[int, int, str], ...]
    model: str


@dataclass(frozen=True, slots=True)
class Looked:
    """The model asked for more before its diff (`NEED:` lines, once per turn): the names it
    asked for, each file the one follow-up request sends (`workspace.look.Sent`: path, reason,
    tokens, shown, regions), each name not sent with why, and the tokens added. The follow-up's
    reply is the turn's. `first_ms`: how long the request that asked took."""

    asked: tuple[str, ...]
    files: tuple[Any, ...]
    refused: tuple[tuple[str, str], ...]
    tokens: int
    first_ms: int = 0


class RepairRetrying(NamedTuple):
    """The repair request is retried (its `Retrying`: the main request's are yielded as is)."""

    retry: Retrying


@dataclass(frozen=True, slots=True)
class RepairFinished:
    """The repair round is over: `outcome` (session.repair.RepairOutcome) says which hunks now fit
    and why the others do not; the operations it mended are proposed again."""

    outcome: Any


@dataclass(slots=True)
class TurnResult:
    turn_id: str
    status: TurnStatus
    text: str = ""
    operations: list[Operation] = field(default_factory=list)
    decisions: list[Decision | None] = field(default_factory=list)
    outcomes: list[Outcome] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    error: SparkPairError | None = None
    usage: Usage | None = None
    metrics: Metrics | None = None
    retries: int = 0
    model: str = ""
    transport: str = ""
    response_id: str | None = None
    form: str = ""  # how well-formed the reply's diff was (store.forms.Form; "": no diff)
    repair: Any = None  # the repair round's outcome (session.repair.RepairOutcome), if one ran

    @property
    def ok(self) -> bool:
        return self.error is None


class TurnFinished(NamedTuple):
    result: TurnResult


SessionEvent = (TurnStarted | ContextChosen | Started | TextDelta | FirstToken | Usage | Retrying
                | Rewound | TransportChanged | ModelChanged | Completed | Failed | FileStarted
                | HunkStarted | LineAdded | FileFinished | OperationProposed | Stale | Decided
                | Refused | Applied | TurnFinished | Steered | RepairStarted | RepairRetrying
                | RepairFinished | Looked)


class Frame(NamedTuple):
    """The events of one interval of a turn, for a screen that repaints at frame rate."""

    events: tuple[SessionEvent, ...]
    text: str  # the model text that arrived in these events
    partial_line: str  # the diff line still being written (after the last complete one)

    @property
    def last(self) -> bool:
        """Whether this frame ends the turn (it holds the TurnFinished)."""
        return bool(self.events) and isinstance(self.events[-1], TurnFinished)
