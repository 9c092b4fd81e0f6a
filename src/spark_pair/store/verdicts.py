"""What a person made of a turn's proposals, hunk by hunk: kept, amended or rejected.

The request store keeps each `Verdict` for `spark-pair stats` (`shares`); the session's review
(verdicts_of) makes them from a turn's operations and decisions.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from ..edits.ops import OpKind


class Fate(StrEnum):
    KEPT = "kept"  # applied as proposed
    AMENDED = "amended"  # applied as a person rewrote it
    REJECTED = "rejected"  # not applied, by a person's choice
    UNFIT = "unfit"  # not applied: it could not apply to the file (the tool's refusal)


@dataclass(frozen=True, slots=True)
class Verdict:
    op_index: int
    path: str  # shown as `src -> dst` for a rename
    kind: OpKind
    hunk: int | None  # the hunk's index in the operation; None: the operation as a whole
    fate: Fate
    reason: str = ""  # a person's reason for a rejection
    text: str = ""  # what an amended hunk or file holds now

    def as_dict(self) -> dict[str, object]:
        return {"op_index": self.op_index, "path": self.path, "kind": str(self.kind),
                "hunk": self.hunk, "fate": str(self.fate), "reason": self.reason}


@dataclass(slots=True)
class Shares:
    """How much of one model's proposed hunks survived review."""

    model: str
    proposed: int = 0
    kept: int = 0
    amended: int = 0
    rejected: int = 0
    turns: int = 0
    unfit: int = 0  # hunks that could not apply: no person decided them (not in `proposed`)

    def share(self, fate: Fate) -> float:
        count = {Fate.KEPT: self.kept, Fate.AMENDED: self.amended,
                 Fate.REJECTED: self.rejected}.get(fate, 0)
        return count / self.proposed if self.proposed else 0.0

    def as_dict(self) -> dict[str, object]:
        return {"model": self.model, "turns": self.turns, "proposed_hunks": self.proposed,
                "kept": self.kept, "amended": self.amended, "rejected": self.rejected,
                "could_not_apply": self.unfit,
                **{f"{f}_share": round(self.share(f), 4) for f in Fate if f != Fate.UNFIT}}


def shares(rows: Iterable[tuple[str, str, Fate]]) -> list[Shares]:
    """Per model (sorted), from (model, turn id, fate) rows of the request store."""
    by: dict[str, Shares] = {}
    turns: dict[str, set[str]] = {}
    for model, turn_id, fate in rows:
        s = by.setdefault(model, Shares(model))
        turns.setdefault(model, set()).add(turn_id)
        if fate == Fate.UNFIT:  # the tool's refusal, not a person's review
            s.unfit += 1
            continue
        s.proposed += 1
        match fate:
            case Fate.KEPT:
                s.kept += 1
            case Fate.AMENDED:
                s.amended += 1
            case Fate.REJECTED:
                s.rejected += 1
    for model, s in by.items():
        s.turns = len(turns[model])
    return [by[m] for m in sorted(by)]
