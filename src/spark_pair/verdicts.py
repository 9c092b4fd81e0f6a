"""What a person made of a turn's proposals, hunk by hunk: kept, amended or rejected.

`verdicts_of` reads a turn's operations and decisions (an operation without hunks, a create,
delete or bare rename, counts as one unit). `note_for_model` is the brief, exact account the
next request gives the model, so a follow-up ("try again") starts from what is on disk; the
request store keeps the verdicts for `spark-pair stats` (`shares`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from .approval import Decision
from .edits.amend import hunk_result
from .edits.ops import Create, Modify, Operation, OpKind, Rename, op_kind

NOTE_LINES = 40  # lines of one amended hunk shown to the model, at most


class Fate(StrEnum):
    KEPT = "kept"  # applied as proposed
    AMENDED = "amended"  # applied as a person rewrote it
    REJECTED = "rejected"  # not applied, by a person's choice


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


def _label(op: Operation) -> str:
    return f"{op.src} -> {op.dst}" if isinstance(op, Rename) else op.path


def verdicts_of(ops: Sequence[Operation], decisions: Sequence[Decision | None]) -> list[Verdict]:
    """One verdict per proposed hunk (or per operation without hunks), in order."""
    out: list[Verdict] = []
    for i, (op, d) in enumerate(zip(ops, decisions, strict=False)):
        if d is None:
            continue
        path, kind = _label(op), op_kind(op)
        hunks = op.hunks if isinstance(op, Modify | Rename) else []
        if not d.accepted:
            units = range(len(hunks)) if hunks else [None]
            notes = dict(d.notes)
            out += [Verdict(i, path, kind, h, Fate.REJECTED,
                            notes.get(h, d.reason) if h is not None else d.reason)
                    for h in units]
            continue
        if not hunks:
            if isinstance(op, Create) and d.content is not None:
                out.append(Verdict(i, path, kind, None, Fate.AMENDED, text=d.content))
            else:
                out.append(Verdict(i, path, kind, None, Fate.KEPT))
            continue
        chosen = set(range(len(hunks)) if d.hunks is None else d.hunks)
        own, notes = dict(d.amended), dict(d.notes)
        for h in range(len(hunks)):
            if h not in chosen:
                out.append(Verdict(i, path, kind, h, Fate.REJECTED, notes.get(h, "")))
            elif h in own:
                out.append(Verdict(i, path, kind, h, Fate.AMENDED, text=hunk_result(own[h])))
            else:
                out.append(Verdict(i, path, kind, h, Fate.KEPT))
    return out


def _what(v: Verdict) -> str:
    if v.hunk is not None:
        return f"{v.path} hunk {v.hunk + 1}"
    match v.kind:
        case OpKind.CREATE:
            return f"{v.path} (create)"
        case OpKind.DELETE:
            return f"{v.path} (delete)"
        case OpKind.RENAME:
            return f"{v.path} (rename)"
    return v.path


def _quote(text: str) -> str:
    return '"' + " ".join(text.split()) + '"'


def note_for_model(verdicts: Iterable[Verdict]) -> str:
    """The account of the last reply's review for the next request ('' when nothing was
    rejected or amended: the files already show what was applied)."""
    vs = list(verdicts)
    if not any(v.fate != Fate.KEPT for v in vs):
        return ""
    lines = ["Review of your previous reply (the files on disk reflect exactly this; hunks "
             "are numbered from 1 in the order you wrote them):"]
    kept = [_what(v) for v in vs if v.fate == Fate.KEPT]
    if kept:
        lines.append("- applied as you proposed: " + "; ".join(kept))
    for v in vs:
        if v.fate == Fate.AMENDED:
            body = v.text.splitlines()
            cut = len(body) > NOTE_LINES
            shown = "\n".join(body[:NOTE_LINES]) + ("\n[... cut]" if cut else "")
            lines.append(f"- applied as the user rewrote it: {_what(v)}; it now reads:\n"
                         f"```\n{shown}\n```")
    for v in vs:
        if v.fate == Fate.REJECTED:
            why = f" (reason: {_quote(v.reason)})" if v.reason.strip() else " (no reason given)"
            lines.append(f"- rejected, not applied: {_what(v)}{why}")
    return "\n".join(lines) + "\n"


@dataclass(slots=True)
class Shares:
    """How much of one model's proposed hunks survived review."""

    model: str
    proposed: int = 0
    kept: int = 0
    amended: int = 0
    rejected: int = 0
    turns: int = 0

    def share(self, fate: Fate) -> float:
        count = {Fate.KEPT: self.kept, Fate.AMENDED: self.amended,
                 Fate.REJECTED: self.rejected}[fate]
        return count / self.proposed if self.proposed else 0.0

    def as_dict(self) -> dict[str, object]:
        return {"model": self.model, "turns": self.turns, "proposed_hunks": self.proposed,
                "kept": self.kept, "amended": self.amended, "rejected": self.rejected,
                **{f"{f}_share": round(self.share(f), 4) for f in Fate}}


def shares(rows: Iterable[tuple[str, str, Fate]]) -> list[Shares]:
    """Per model (sorted), from (model, turn id, fate) rows of the request store."""
    by: dict[str, Shares] = {}
    turns: dict[str, set[str]] = {}
    for model, turn_id, fate in rows:
        s = by.setdefault(model, Shares(model))
        turns.setdefault(model, set()).add(turn_id)
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
