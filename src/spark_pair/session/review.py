"""A turn's review: the verdicts a person's decisions come to, and the account of them the
next request gives the model.

`verdicts_of` reads a turn's operations and decisions (an operation without hunks, a create,
delete or bare rename, counts as one unit). `note_for_model` is the brief, exact account the
next request gives the model, so a follow-up ("try again") starts from what is on disk.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..edits.amend import hunk_result
from ..edits.ops import Create, Modify, Operation, OpKind, Rename, op_kind
from ..store.verdicts import Fate, Verdict
from .approval import Decision

NOTE_LINES = 40  # lines of one amended hunk shown to the model, at most


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
        unfit = set(range(len(hunks))) | {None} if None in d.unfit else set(d.unfit)
        if not d.accepted:
            units = range(len(hunks)) if hunks else [None]
            notes = dict(d.notes)
            out += [Verdict(i, path, kind, h, Fate.UNFIT if h in unfit else Fate.REJECTED,
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
                out.append(Verdict(i, path, kind, h, Fate.UNFIT if h in unfit else
                                   Fate.REJECTED, notes.get(h, "")))
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
        elif v.fate == Fate.UNFIT:
            lines.append(f"- could not be applied (its lines are not in the file as it is; "
                         f"not a rejection): {_what(v)} ({_quote(v.reason)})")
    return "\n".join(lines) + "\n"
