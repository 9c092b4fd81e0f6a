"""Lines for people that fit 80 columns: a heading followed by a file list that wraps onto
indented lines and is cut with "(+N more)" when it would run long; what the repair round did."""

from __future__ import annotations

from collections.abc import Sequence

from ..base.termwrap import wrap
from ..session.events import RepairFinished, RepairStarted

WIDTH = 80
INDENT = "    "
_MORE_ROOM = len(" (+99999 more)")


def file_lines(head: str, files: Sequence[str], *, width: int = WIDTH,
               first_width: int | None = None, max_lines: int = 4) -> list[str]:
    """`head` then the files ("a, b, c"), wrapped onto indented lines within `width`
    (`first_width` for the first line, when a prefix goes before it), at most `max_lines` lines;
    what does not fit is counted as "(+N more)"."""
    lines = [head]
    limit = first_width or width
    if len(lines) == max_lines:
        limit -= _MORE_ROOM
    for n, name in enumerate(files):
        if len(name) > width - len(INDENT) - _MORE_ROOM:  # a very long path keeps its tail
            name = "…" + name[-(width - len(INDENT) - _MORE_ROOM - 1):]
        piece = name if n == len(files) - 1 else name + ","
        line = lines[-1]
        candidate = (line + " " + piece) if line.strip() else line + piece
        if len(candidate) <= limit:
            lines[-1] = candidate
            continue
        if len(lines) >= max_lines:
            lines[-1] = (lines[-1] + " " if lines[-1].strip() else lines[-1]) + \
                f"(+{len(files) - n} more)"
            break
        lines.append(INDENT + piece)
        limit = width - (_MORE_ROOM if len(lines) == max_lines else 0)
    return lines


def repair_text(event: RepairStarted | RepairFinished, width: int = WIDTH - 12) -> str:
    """What stderr says of the repair round: that it runs, then per hunk fixed or why not
    (lines of at most `width` columns, the prefix `spark-pair: ` aside)."""
    if isinstance(event, RepairStarted):
        who = event.model or "the model"
        lines = [f"repair: {len(event.hunks)} hunk(s) match nowhere in their file; asking {who} "
                 "once more, with the file's real lines"]
    else:
        lines = [f"repair: {line}" for line in event.outcome.lines()]
    return "\n".join(part for line in lines for part in wrap(line, width))
