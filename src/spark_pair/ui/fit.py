"""Which proposed operations can not be applied to the files as they are now.

Checked as soon as an operation is proposed (in a worker thread: it reads the files), so the
review shows at once what would make the write fail: a hunk whose lines are not in the file, a
create of a file that exists, a path outside the repository, a rename or delete of a missing
file, a delete of a file that changed. What can not apply is left out; the rest of the turn can
still be decided and written.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..edits.ops import Modify, Operation

if TYPE_CHECKING:
    from ..edits.apply import Reads

WHOLE = None  # the operation as a whole (not one of its hunks)


def unfit(root: Path, op: Operation, reads: Reads | None = None) -> dict[int | None, str]:
    """Why the operation, or each of its hunks, can not be applied now ({} when it can).

    A modify whose hunks do not all fit is checked hunk by hunk: the hunks that fit alone can
    still be accepted. When none fits, the operation as a whole (WHOLE) can not apply. Its file
    is read once (`reads`: the files this look has read)."""
    from ..edits.apply import check_each
    from ..edits.place import reason as cause

    reads = {} if reads is None else reads
    found = check_each(root, [op], reads=reads)
    if not found:
        return {}
    reason = cause(found[0][1])
    if not isinstance(op, Modify) or not op.hunks:
        return {WHOLE: reason}
    each = {h: check_each(root, [Modify(op.path, [hunk], op.base_hash)], reads=reads)
            for h, hunk in enumerate(op.hunks)}
    bad: dict[int | None, str] = {h: _about_hunk(cause(problems[0][1]), op.path)
                                  for h, problems in each.items() if problems}
    if not bad:  # each fits alone, not all together
        return {WHOLE: reason}
    if len(bad) < len(op.hunks):
        return bad
    reasons = set(bad.values())
    if len(reasons) == 1:
        return {WHOLE: reasons.pop()}
    return {WHOLE: f"none of its {len(op.hunks)} hunks fits the file (the first: {bad[0]})"}


def unfit_all(root: Path, ops: Sequence[tuple[int, Operation]], reads: Reads | None = None
              ) -> list[tuple[int, Operation, dict[int | None, str]]]:
    """`unfit` for each (index, operation); only those that can not apply (blocking: call it
    in a thread). `reads` keeps the files read, for `mendable` to look at the same bytes."""
    out = []
    reads = {} if reads is None else reads
    for index, op in ops:
        problems = unfit(root, op, reads)
        if problems:
            out.append((index, op, problems))
    return out


def _first_line(message: str) -> str:
    return message.partition("\n")[0]


def _about_hunk(message: str, path: str) -> str:
    """A hunk's problem without the hunk's own name (its row shows it)."""
    first = _first_line(message)
    if first.startswith(f"{path} hunk @@"):
        return first.partition(" @@: ")[2] or first
    return first


def mendable(root: Path, ops: Sequence[tuple[int, Operation]], reads: Reads | None = None
             ) -> set[int]:
    """Of the operations that can not apply, those the repair round asks the model about once
    the reply ends (their hunks match nowhere in the file; blocking: call it in a thread).
    `reads`: the files `unfit_all` read (not read again)."""
    from ..session.repair import survey

    return {index for index, op in ops if survey(root, [op], reads=reads).misses}
