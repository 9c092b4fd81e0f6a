"""The repair round in the live diff: a note when it starts, then per hunk fixed or why not,
and the operations it mended shown again below (their hunks' rows are the ones the review
pane points at from then on)."""

from __future__ import annotations

from typing import Any

from ..base.printable import shown
from ..session.events import RepairFinished, RepairStarted


def started_text(event: RepairStarted) -> str:
    names = ", ".join(f"{shown(path)} hunk {h + 1}" for _, h, path in event.hunks)
    who = shown(event.model) if event.model else "the model"
    return (f"repair: {names} match{'es' if len(event.hunks) == 1 else ''} nowhere in the "
            f"file; asking {who} once more, with the file's real lines")


def finished_text(event: RepairFinished) -> str:
    lines = [f"repair: {line}" for line in event.outcome.lines()]
    if event.outcome.ops:
        lines.append("repair: the corrected hunks follow; review them as any other")
    return "\n".join(lines)


def notice(event: RepairStarted | RepairFinished) -> str:
    """The notice line while the round runs and once it is over."""
    if isinstance(event, RepairStarted):
        n = len(event.hunks)
        return (f"repair: {n} hunk{'s' if n > 1 else ''} match{'es' if n == 1 else ''} nowhere "
                "in the file; asking the model once more (the live diff shows what comes back)")
    outcome = event.outcome
    fixed = [m for m in outcome.mended if m.fixed]
    if outcome.fixed:
        return (f"repair: fixed {len(fixed)} hunk{'s' if len(fixed) > 1 else ''}; the corrected "
                "operation is asked again: decide it as any other")
    first = next(m for m in outcome.mended if not m.fixed)
    return (f"repair: {len(fixed)} of {len(outcome.mended)} fixed; {shown(first.path)} hunk "
            f"{first.hunk_index + 1}: {first.cause}")


def show(view: Any, event: RepairStarted | RepairFinished) -> None:
    """Add the event's rows to `view` (a DiffView, during its feed)."""
    from .widgets.diff_view import (
        _MARKER_KIND,
        Kind,
        Row,
        content_text,
        file_header_text,
        hunk_header_text,
    )

    if isinstance(event, RepairStarted):
        view._note(started_text(event))
        return
    view._note(finished_text(event))
    by = f"  · {shown(view.model)}" if view.model else ""
    for i, op in sorted(event.outcome.ops.items()):
        view.file_rows[i] = len(view.rows)
        view._add(Row(Kind.FILE, file_header_text("modify", op.path, None), i))
        for h, hunk in enumerate(op.hunks):
            view.hunk_rows[(i, h)] = len(view.rows)
            view._add(Row(Kind.HUNK, hunk_header_text(hunk) + by, i, h))
            for line in hunk.lines:
                view._add(Row(_MARKER_KIND.get(line[:1], Kind.CONTEXT), content_text(line), i, h))
        for key in [k for k in view.hunk_rows if k[0] == i and k[1] >= len(op.hunks)]:
            del view.hunk_rows[key]
