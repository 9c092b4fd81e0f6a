"""What the app says of the repair round: the live diff's notes (when it starts, then per hunk
fixed or why not) and the notice line."""

from __future__ import annotations

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
    n = len(outcome.ignored)
    more = f" ({n} part{'s' if n > 1 else ''} of the answer not written)" if n else ""
    if outcome.fixed:
        return (f"repair: fixed {len(fixed)} hunk{'s' if len(fixed) > 1 else ''}{more}; the "
                "corrected operation is asked again: decide it as any other")
    first = next(m for m in outcome.mended if not m.fixed)
    return (f"repair: {len(fixed)} of {len(outcome.mended)} fixed{more}; {shown(first.path)} "
            f"hunk {first.hunk_index + 1}: {first.cause}")
