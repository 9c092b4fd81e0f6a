"""What a session turn yields besides the protocol and parse events. Plain dataclasses."""

from __future__ import annotations

from dataclasses import dataclass, field

from .approval import Decision
from .edits.ops import Operation
from .errors import SparkPairError
from .protocol.events import Metrics, Usage


@dataclass(frozen=True, slots=True)
class TurnStarted:
    turn_id: str
    prompt: str
    files: list[str]  # files whose content went into the context
    context_tokens: int  # estimate of the input size
    followup: bool  # only the new instruction and on-disk changes were prepared


@dataclass(frozen=True, slots=True)
class OperationProposed:
    index: int
    op: Operation


@dataclass(frozen=True, slots=True)
class Decided:
    index: int
    op: Operation
    decision: Decision


@dataclass(frozen=True, slots=True)
class Stale:
    """A target file changed on disk after the request went out."""

    path: str
    index: int | None  # the operation on that path, None while it is still being written


@dataclass(frozen=True, slots=True)
class Refused:
    index: int
    op: Operation
    reason: str
    kind: str  # "policy" | "stale" | "conflict" | "path"


@dataclass(frozen=True, slots=True)
class Applied:
    turn_id: str
    changed: list[str]
    notes: list[str]


# Outcome of one operation once the turn is over.
APPLIED = "applied"
NOT_APPLIED = "not_applied"  # skipped (dry run), rejected, or the turn wrote nothing


@dataclass(slots=True)
class TurnResult:
    turn_id: str
    # applied | dry_run | rejected | no_changes | refused | conflict | cancelled | failed
    status: str
    text: str = ""
    operations: list[Operation] = field(default_factory=list)
    decisions: list[Decision | None] = field(default_factory=list)
    outcomes: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    error: SparkPairError | None = None
    usage: Usage | None = None
    metrics: Metrics | None = None
    retries: int = 0
    model: str = ""
    transport: str = ""
    response_id: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass(frozen=True, slots=True)
class TurnFinished:
    result: TurnResult
