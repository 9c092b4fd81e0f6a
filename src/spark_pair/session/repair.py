"""The repair round: hunks of a reply that match nowhere in their file go back to the same
model once, in one short follow-up request that shows the file's real lines around the best
candidate place; its answer goes through the same parser and checks as any reply.

`survey` (blocking) finds those hunks and says how the reply fits; `ask_text` and
`follow_up` make the request; `merge` (blocking) puts the answer's hunks in place of the
missed ones and checks the result. The turn (session.turn) runs the round between the end of
the stream and the write, at most once per turn.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from ..base.errors import SparkPairError
from ..base.printable import shown
from ..edits.locate import Locator, Stop, normalised
from ..edits.ops import Hunk, Modify, Operation
from ..protocol.events import Message, TurnRequest
from ..store.forms import Form, form_of

if TYPE_CHECKING:
    from ..edits.apply import Reads
    from ..protocol.events import Metrics, Usage

AROUND = 3  # file lines shown before and after the candidate place
MAX_SHOWN = 40  # file lines shown for one hunk at most
MAX_SCAN = 4000  # file lines the candidate search reads at most (around the stated line)
MAX_HUNKS = 8  # hunks one repair round asks about at most
ASK_MARK = "these lines are not in the file"  # in every repair request (the sim's scripts match it)


class Miss(NamedTuple):
    """A hunk whose old side matches nowhere in its file, and what the file has instead."""

    op_index: int
    hunk_index: int
    path: str
    hunk: Hunk
    absent: tuple[str, ...]  # its old lines that are nowhere in the file
    first: int  # 1-based first line of `shown`
    shown: tuple[str, ...]  # the file's lines around the best candidate place
    at: int = 0  # 0-based best candidate place


@dataclass(slots=True)
class Survey:
    """How a reply's operations fit the files now: the hunks to repair, whether anything else
    does not fit, whether the engine placed some hunk loosely."""

    misses: list[Miss] = field(default_factory=list)
    other_problem: str = ""  # the first problem a repair cannot mend
    loose: bool = False

    @property
    def fits(self) -> bool:
        return not self.misses and not self.other_problem


class Mended(NamedTuple):
    """One missed hunk after the round: `fixed`, or why not (`cause`)."""

    op_index: int
    hunk_index: int
    path: str
    fixed: bool
    cause: str = ""


@dataclass(slots=True)
class RepairOutcome:
    """What the repair round came to: the operations that replace those of the reply (by
    index; only those that now fit) and each missed hunk's fate."""

    ops: dict[int, Modify] = field(default_factory=dict)
    mended: list[Mended] = field(default_factory=list)
    cause: str = ""  # why nothing was mended (the request failed, the answer held no diff)
    ignored: list[str] = field(default_factory=list)  # the answer's hunks not taken, and why
    text: str = ""  # the answer
    metrics: Metrics | None = None
    usage: Usage | None = None

    @property
    def fixed(self) -> bool:
        return bool(self.mended) and all(m.fixed for m in self.mended)

    @property
    def verdict(self) -> str:
        """fixed (every missed hunk now fits), partly, or refused (none does)."""
        fixed = sum(m.fixed for m in self.mended)
        return "fixed" if self.fixed else "partly" if fixed else "refused"

    def lines(self) -> list[str]:
        """One line per missed hunk: fixed, or why not; then one per answer hunk not taken."""
        return [f"{m.path} hunk {m.hunk_index + 1}: " + ("fixed" if m.fixed else m.cause)
                for m in self.mended] + self.ignored


def placed_loosely(hunk: Hunk) -> bool:
    """Whether the edits engine placed this hunk other than exactly as written (its
    `placement`, set when the hunk is checked against the file; False when there is none)."""
    return hunk.placement is not None and hunk.placement.loose


def reply_form(survey: Survey, outcome: RepairOutcome | None) -> Form:
    """The reply's form once the round (if any) is over."""
    repaired = outcome is not None and outcome.fixed
    fits = survey.fits or (repaired and not survey.other_problem)
    return form_of(fits=fits, placed_loosely=survey.loose, repaired=repaired)


# ---- finding what to repair (blocking: reads the files) ------------------------------------

def survey(root: Path, ops: Sequence[Operation], *, stop: Stop = None,
           reads: Reads | None = None) -> Survey:
    """Check the operations against the files as they are; the hunks that match nowhere are
    the round's misses (at most MAX_HUNKS), anything else that does not fit is named. Each file
    is read once (`reads`: those already read for this look)."""
    from ..edits.apply import check_each

    out = Survey()
    reads = {} if reads is None else reads
    found = dict(check_each(root, ops, stop=stop, reads=reads))
    for i, op in enumerate(ops):
        hunks = op.hunks if isinstance(op, Modify) else []
        if i not in found:
            out.loose = out.loose or any(placed_loosely(h) for h in hunks)
            continue
        if not isinstance(op, Modify) or not hunks:
            out.other_problem = out.other_problem or found[i].message
            continue
        misses, problem = _misses_of(root, i, op, found[i].message, stop, reads)
        out.misses += misses
        out.other_problem = out.other_problem or problem
    if len(out.misses) > MAX_HUNKS:
        out.other_problem = out.other_problem or (
            f"{len(out.misses)} hunks match nowhere (a repair asks about {MAX_HUNKS} at most)")
        out.misses = []
    return out


def _misses_of(root: Path, index: int, op: Modify, why: str, stop: Stop, reads: Reads
               ) -> tuple[list[Miss], str]:
    """The hunks of `op` (which does not fit: `why`) that match nowhere in its file, and the
    problem a repair cannot mend, if any. The file is read and indexed once; only a hunk whose
    lines are nowhere is checked alone (the engine may still place it loosely)."""
    from ..base.errors import ConflictError
    from ..edits.apply import check_each

    lines = _file_lines(root, op.path, reads)
    locator = Locator(lines)
    misses: list[Miss] = []
    problem = ""
    for h, hunk in enumerate(op.hunks):
        old = hunk.old_lines
        if not lines or not old or locator.first(old, 0) is not None:
            continue  # its lines are there (elsewhere, or twice): not a repair's matter
        found = check_each(root, [Modify(op.path, [hunk], op.base_hash)], stop=stop,
                           reads=reads)
        if not found:
            continue
        if isinstance(found[0][1], ConflictError):
            misses.append(_miss(index, h, op.path, hunk, lines))
        else:
            problem = problem or found[0][1].message
    if not misses:
        problem = problem or why
    return misses, problem


def _file_lines(root: Path, path: str, reads: Reads) -> list[str]:
    """The lines of a regular file as the engine reads them ([] when it is none, or cannot be
    read: a FIFO or a device is never opened), read once for the look (`reads`)."""
    from ..edits import fsio
    from ..edits.apply import read_checked
    from ..edits.hunks import split_lines

    data = read_checked(root, path, reads)
    try:
        text = "" if data is None else fsio.decode(data, path)[0]
    except SparkPairError:
        return []
    return split_lines(text)[0]


def _miss(index: int, h: int, path: str, hunk: Hunk, lines: list[str]) -> Miss:
    old = hunk.old_lines
    have = {normalised(ln) for ln in lines}
    absent = tuple(ln for ln in old if normalised(ln) not in have)
    at = candidate(lines, old, hunk.old_start)
    first = max(0, at - AROUND)
    last = min(len(lines), at + len(old) + AROUND, first + MAX_SHOWN)
    return Miss(index, h, path, hunk, absent, first + 1, tuple(lines[first:last]), at)


def candidate(lines: Sequence[str], old: Sequence[str], stated: int | None) -> int:
    """The 0-based line where `old` most nearly stands in `lines` (difflib's matching blocks,
    the window holding the most matched lines; the nearer to the stated line on a tie), within
    MAX_SCAN lines around the stated line."""
    want = max(0, (stated or 1) - 1)
    lo = max(0, min(want - MAX_SCAN // 2, len(lines) - MAX_SCAN))
    window = [normalised(ln) for ln in lines[lo:lo + MAX_SCAN]]
    matcher = difflib.SequenceMatcher(None, [normalised(ln) for ln in old], window,
                                      autojunk=False)
    blocks = [b for b in matcher.get_matching_blocks() if b.size]
    best, score = min(want, max(0, len(lines) - 1)), 0
    for b in blocks:
        start = max(0, b.b - b.a)
        got = sum(min(c.b + c.size, start + len(old)) - max(c.b, start) for c in blocks
                  if c.b < start + len(old) and c.b + c.size > start)
        if got > score or (got == score and abs(lo + start - want) < abs(best - want)):
            best, score = lo + start, got
    return best


# ---- the request ------------------------------------------------------------------------------

def ask_text(misses: Sequence[Miss]) -> str:
    """The follow-up instruction: each missed hunk, its lines that are not in the file, and
    what the file holds around the best candidate place."""
    from ..base.printable import shown_text
    from ..edits.render import render_ops

    parts = [f"Some hunks of your diff do not apply: {ASK_MARK} as written. Send a corrected "
             "unified diff of only these hunks (with the --- / +++ lines of their files), "
             "copying the context and removed lines exactly from the file as shown below. "
             "Nothing else."]
    for m in misses:
        text = render_ops([Modify(m.path, [m.hunk])])
        hunk = text[text.find("\n@@") + 1:].rstrip("\n")  # (without the file's header)
        parts.append(f"Hunk {m.hunk_index + 1} of {m.path}:\n```diff\n{hunk}\n```")
        if m.absent:
            parts.append("These lines are not in the file:\n```\n"
                         + "\n".join(shown_text(ln) for ln in m.absent) + "\n```")
        last = m.first + len(m.shown) - 1
        parts.append(f"This is what is there ({m.path}, lines {m.first}-{last}):\n```\n"
                     + "\n".join(shown_text(ln) for ln in m.shown) + "\n```")
    return "\n\n".join(parts)


def follow_up(request: TurnRequest, reply: str, text: str) -> TurnRequest:
    """The repair request: the turn's conversation, the reply, then the instruction (a live
    WebSocket chain sends only the instruction)."""
    return replace(request, history=[*request.history, *request.new_input,
                                     Message("assistant", reply)],
                   new_input=[Message("user", text)], task="repair")


# ---- the answer (blocking: parses, reads the files) --------------------------------------

def merge(root: Path, ops: Sequence[Operation], misses: Sequence[Miss], answer: str, *,
          stop: Stop = None) -> RepairOutcome:
    """Put the answer's hunks in place of the missed ones they replace, file by file; an
    operation is replaced only when all of it then fits the file. An answer hunk that replaces
    no missed hunk (a repeat of one that fits, an extra) is never written: `ignored` says so."""
    from ..edits.apply import check_each
    from ..edits.parser import DiffParser
    from ..edits.place import reason

    out = RepairOutcome(text=answer)
    reads: Reads = {}  # each file is read once for the answer (after it came: as it is now)
    try:
        parser = DiffParser()
        parser.feed(answer)
        parser.close()
        answered = list(parser.operations())
    except SparkPairError as exc:
        out.cause = f"the answer could not be read: {exc.message}"
        answered = []
    if not answered and not out.cause:
        out.cause = "the answer held no diff of those hunks"
    by_op: dict[int, list[Miss]] = {}
    for m in misses:
        by_op.setdefault(m.op_index, []).append(m)
    asked = {ops[i].path for i in by_op}
    out.ignored += [f"{shown(path)}: not asked about, not written" for path in
                    dict.fromkeys(op.path for op in answered if op.path not in asked
                                  or not isinstance(op, Modify))]
    for index, missed in by_op.items():
        op = ops[index]
        assert isinstance(op, Modify)
        new = [h for a in answered if a.path == op.path and isinstance(a, Modify)
               for h in a.hunks]
        cause = out.cause
        taken, ignored = _take(_file_lines(root, op.path, reads), op, missed, new)
        out.ignored += ignored
        left = [m for m in missed if not taken[m.hunk_index]]
        if left and new:
            cause = "the answer has no hunk in its place"
        elif new:
            merged = _merged(op, taken)
            found = check_each(root, [merged], stop=stop, reads=reads)
            ordered = _in_file_order(root, merged, reads) if found else None
            if ordered is not None and not check_each(root, [ordered], stop=stop, reads=reads):
                merged, found = ordered, []
            if not found:
                out.ops[index] = merged
            else:
                cause = "still does not apply: " + reason(found[0][1])
        elif not cause:
            cause = f"the answer has no hunk for {op.path}"
        out.mended += [Mended(index, m.hunk_index, m.path, index in out.ops,
                              "" if index in out.ops else cause)
                       for m in missed]
    return out


def _take(lines: list[str], op: Modify, missed: Sequence[Miss], new: Sequence[Hunk]
          ) -> tuple[dict[int, list[Hunk]], list[str]]:
    """Which answer hunks replace which missed hunk (by hunk index): the one whose candidate
    place is nearest the answer hunk's old side, which must touch that place. A hunk equal
    to one that fits (or changing one that fits, or sent twice) and a hunk far from every
    missed one are not taken: the notes say which and why."""
    locator = Locator(lines)
    asked = {m.hunk_index for m in missed}
    kept = [(i, h) for i, h in enumerate(op.hunks) if i not in asked]
    taken: dict[int, list[Hunk]] = {m.hunk_index: [] for m in missed}
    notes: list[str] = []
    for n, hunk in enumerate(new, 1):
        name = f"{shown(op.path)} answer hunk {n} ({_at_line(hunk)})"
        same = next((i for i, h in kept if h.old_lines == hunk.old_lines), None)
        if same is not None:
            how = "repeats" if op.hunks[same].lines == hunk.lines else "changes"
            notes.append(f"{name} {how} hunk {same + 1}, which was not asked about: not written")
            continue
        if any(h.lines == hunk.lines for got in taken.values() for h in got):
            notes.append(f"{name} is sent twice: written once")
            continue
        at = _place(lines, locator, hunk)
        near = [m for m in missed
                if at + len(hunk.old_lines) >= m.at and at <= m.at + len(m.hunk.old_lines)]
        if not near:
            notes.append(f"{name} replaces no hunk that was asked about: not written")
            continue
        taken[min(near, key=lambda m: abs(m.at - at)).hunk_index].append(hunk)
    return taken, notes


def _place(lines: list[str], locator: Locator, hunk: Hunk) -> int:
    """The 0-based line where an answer hunk's old side stands (the nearest to its @@ line
    when it stands more than once), or most nearly stands."""
    old = hunk.old_lines
    want = max(0, (hunk.old_start or 1) - 1)
    if not old:
        return want
    best, at = None, locator.first(old, 0)
    while at is not None and (best is None or abs(at - want) < abs(best - want)):
        best, at = at, locator.first(old, at + 1)
    return best if best is not None else candidate(lines, old, hunk.old_start)


def _at_line(hunk: Hunk) -> str:
    return f"at line {hunk.old_start}" if hunk.old_start else "with no line number"


def _in_file_order(root: Path, op: Modify, reads: Reads) -> Modify | None:
    """`op` with its hunks in the order their lines stand in the file (the engine places them
    in order), or None when that is the order already or some hunk is not found."""
    locator = Locator(_file_lines(root, op.path, reads))
    at = [locator.first(h.old_lines, 0) if h.old_lines else None for h in op.hunks]
    if any(a is None for a in at):
        return None
    order = sorted(range(len(op.hunks)), key=lambda i: at[i] or 0)
    if order == list(range(len(op.hunks))):
        return None
    return Modify(op.path, [op.hunks[i] for i in order], op.base_hash)


def _merged(op: Modify, taken: dict[int, list[Hunk]]) -> Modify:
    """`op` with each missed hunk replaced by the answer's hunks taken for it."""
    hunks: list[Hunk] = []
    for i, hunk in enumerate(op.hunks):
        hunks += taken.get(i, [hunk])
    return Modify(op.path, hunks, op.base_hash)
