"""Operations back to unified diff text (display, dry runs; control characters shown escaped)
and text pairs to a Modify."""

from __future__ import annotations

import difflib
from collections.abc import Sequence

from ..base.printable import shown, shown_text
from .locate import Locator, Stop, check_stop
from .ops import Create, Delete, Hunk, Modify, Operation, Rename


def _lines(text: str) -> list[str]:
    return [ln.removesuffix("\r") for ln in text.split("\n")][:-1] + (
        [text.rsplit("\n", 1)[-1]] if text and not text.endswith("\n") else [])


def _hunk_text(hunk: Hunk, old_start: int, new_start: int) -> str:
    old_n, new_n = len(hunk.old_lines), len(hunk.new_lines)
    a = old_start + 1 if old_n else old_start
    b = new_start + 1 if new_n else new_start
    section = f" {shown_text(hunk.section)}" if hunk.section else ""
    if hunk.placement is not None and hunk.placement.loose:  # (git reads no further than @@)
        section += f" ~ loose: {hunk.placement.describe()}"
    out = [f"@@ -{a},{old_n} +{b},{new_n} @@{section}"]
    last_old = last_new = -1
    for ln in hunk.lines:
        out.append(shown_text(ln if ln[:1] in (" ", "-", "+") else " " + ln))
        if ln[:1] in (" ", "-"):
            last_old = len(out)
        if ln[:1] in (" ", "+"):
            last_new = len(out)
    marks = []
    if hunk.no_newline_old and last_old > 0:
        marks.append(last_old)
    if hunk.no_newline_new and last_new > 0 and last_new not in marks:
        marks.append(last_new)
    for at in sorted(marks, reverse=True):
        out.insert(at, "\\ No newline at end of file")
    return "\n".join(out) + "\n"


def _hunks_text(hunks: Sequence[Hunk], base_text: str | None, stop: Stop = None) -> str:
    base = Locator(_lines(base_text)) if base_text is not None else None
    out = []
    pos = 0  # 0-based old line where the next hunk may start
    delta = 0  # new minus old line numbers so far
    for h in hunks:
        check_stop(stop)
        placed = h.placement.line if base is not None and h.placement is not None else None
        at = (placed - 1 if placed is not None else
              base.first(h.old_lines, pos) if base is not None and h.old_lines else None)
        if at is None:
            if h.old_start is not None:
                at = max(h.old_start - (1 if h.old_lines else 0), 0)
            else:
                at = pos
        out.append(_hunk_text(h, at, at + delta))
        pos = at + len(h.old_lines)
        delta += len(h.new_lines) - len(h.old_lines)
    return "".join(out)


def render_op(op: Operation, base_text: str | None = None, stop: Stop = None) -> str:
    """One operation as a git-style unified diff; numbers are exact when base_text is given.
    For people: paths and content are shown escaped (never raw control or bidi characters).
    Raises Cancelled once stop() is true (checked before each hunk)."""
    if isinstance(op, Rename):
        src, dst = shown(op.src), shown(op.dst)
        head = f"diff --git a/{src} b/{dst}\nrename from {src}\nrename to {dst}\n"
        if not op.hunks:
            return head
        return head + f"--- a/{src}\n+++ b/{dst}\n" + _hunks_text(op.hunks, base_text, stop)
    path = shown(op.path)
    head = f"diff --git a/{path} b/{path}\n"
    if isinstance(op, Create):
        lines = _lines(op.content)
        head += "new file mode 100644\n"
        if not lines:
            return head
        h = Hunk(0, 0, 1, len(lines), ["+" + ln for ln in lines],
                 no_newline_new=not op.content.endswith("\n"))
        return head + f"--- /dev/null\n+++ b/{path}\n" + _hunk_text(h, 0, 0)
    if isinstance(op, Delete):  # the lines the reply removes, else the file it would remove
        head += "deleted file mode 100644\n"
        if op.binary:
            return head + f"Binary files a/{path} and /dev/null differ\n"
        if op.lines:
            h = Hunk(1, len(op.lines), 0, 0, ["-" + ln for ln in op.lines])
        elif base_text:
            lines = _lines(base_text)
            h = Hunk(1, len(lines), 0, 0, ["-" + ln for ln in lines],
                     no_newline_old=not base_text.endswith("\n"))
        else:
            return head
        return head + f"--- a/{path}\n+++ /dev/null\n" + _hunk_text(h, 0, 0)
    return head + f"--- a/{path}\n+++ b/{path}\n" + _hunks_text(op.hunks, base_text, stop)


def render_ops(ops: Sequence[Operation], bases: dict[str, str] | None = None, *,
               stop: Stop = None) -> str:
    """Every operation of a turn as one diff text (bases: current text per path, optional).
    Raises Cancelled once stop() is true (checked before each operation and hunk)."""
    bases = bases or {}
    out = []
    for op in ops:
        check_stop(stop)
        out.append(render_op(op, bases.get(op.path), stop))
    return "".join(out)


def diff_texts(path: str, old: str, new: str, context: int = 3) -> Modify:
    """The Modify that turns `old` into `new` (difflib), with exact line numbers."""
    a, b = _lines(old), _lines(new)
    # the last line is a different line when only one side ends without a newline
    ka = a[:-1] + [a[-1] + "\0"] if a and not old.endswith("\n") else list(a)
    kb = b[:-1] + [b[-1] + "\0"] if b and not new.endswith("\n") else list(b)
    hunks = []
    for group in difflib.SequenceMatcher(None, ka, kb, autojunk=False).get_grouped_opcodes(context):
        i1, j1 = group[0][1], group[0][3]
        i2, j2 = group[-1][2], group[-1][4]
        lines: list[str] = []
        for tag, a1, a2, b1, b2 in group:
            if tag == "equal":
                lines += [" " + x for x in a[a1:a2]]
                continue
            lines += ["-" + x for x in a[a1:a2]]
            lines += ["+" + x for x in b[b1:b2]]
        h = Hunk(i1 + 1 if i2 > i1 else i1, i2 - i1, j1 + 1 if j2 > j1 else j1, j2 - j1, lines)
        h.no_newline_old = i2 == len(a) and bool(a) and not old.endswith("\n")
        h.no_newline_new = j2 == len(b) and bool(b) and not new.endswith("\n")
        hunks.append(h)
    return Modify(path, hunks)
