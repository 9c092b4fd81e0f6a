"""Applying a file's hunks to its text: each placed exactly or loosely (see place), in file
order and without overlap, the file's line endings kept. Pure: no disk."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import replace

from . import fsio
from .locate import Locator, Stop, check_stop
from .ops import Hunk
from .place import NotFound, absent, conflict, locate, place
from .placement import Loose, Placement


def split_lines(text: str) -> tuple[list[str], list[str]]:
    """Lines without endings, and each line's own ending ('\\n', '\\r\\n' or '' for the last)."""
    if not text:
        return [], []
    raw = text.split("\n")
    last = raw.pop()
    if "\r" not in text:
        return raw + [last] * bool(last), ["\n"] * len(raw) + [""] * bool(last)
    lines, ends = [], []
    for ln in raw:
        if ln.endswith("\r"):
            lines.append(ln[:-1])
            ends.append("\r\n")
        else:
            lines.append(ln)
            ends.append("\n")
    if last:
        lines.append(last)
        ends.append("")
    return lines, ends


def tidy(hunk: Hunk) -> Hunk:
    """Blank context lines often lose their leading space, and CR may survive from CRLF diffs;
    `@@ -0,0` on a hunk that keeps or removes lines names no line (no position)."""
    lines = [(ln or " ").removesuffix("\r") for ln in hunk.lines]
    if lines != hunk.lines:
        hunk = replace(hunk, lines=lines)
    if hunk.old_start == 0 and hunk.old_lines:
        hunk = replace(hunk, old_start=None)
    return hunk


def apply_hunks(text: str, hunks: Sequence[Hunk], path: str = "", *, stop: Stop = None,
                exact: bool = False) -> str:
    """Apply hunks, in order and without overlap, to `text`; keep the file's line endings.

    A hunk's lines are found exactly or, unless `exact`, with whitespace normalised (its added
    lines then re-based by the indentation offset of its old lines) or without an edge context
    line that is not in the file. Each hunk's `placement` says how it went. Raises
    ConflictError naming the hunk when it matches nowhere or ambiguously; Cancelled as soon as
    stop() is true (checked before each hunk).
    """
    lines, ends = split_lines(text)
    style = "\r\n" if ends and ends[0] == "\r\n" else "\n"
    final_nl = not ends or ends[-1] != ""
    out: list[str] = []
    out_ends: list[str] = []
    pos = delta = 0
    locator = Locator(lines, escapes=fsio.has_escapes(text), loose=not exact)
    order, moved = _in_file_order(hunks)
    for given in order:
        check_stop(stop)
        given.placement = None  # (until it is placed again: an earlier check's is stale)
        hunk = tidy(given)
        if any(ln[:1] not in (" ", "-", "+") for ln in hunk.lines):
            raise conflict(hunk, path, "a line without ' ', '-' or '+' marker")
        if exact:
            try:
                at, _ = locate(locator, hunk, pos, delta, path)
            except NotFound:
                raise conflict(hunk, path, "its lines are not in the file",
                               absent(locator, hunk)) from None
            placement = Placement(at + 1)
        else:
            at, hunk, placement = place(locator, hunk, pos, delta, path)
        parsed = given.loose + (Loose.REORDERED,) if id(given) in moved else given.loose
        given.placement = placement.with_parsed(parsed) if parsed else placement
        out += lines[pos:at]
        out_ends += ends[pos:at]
        i = at
        for ln in hunk.lines:
            if ln[0] == " ":
                out.append(lines[i])
                out_ends.append(ends[i])
                i += 1
            elif ln[0] == "-":
                i += 1
            else:
                out.append(ln[1:])
                out_ends.append(style)
        if hunk.old_start is not None:
            delta = at - max(hunk.old_start - (1 if hunk.old_lines else 0), 0)
        pos = i
        if i == len(lines) and hunk.no_newline_old != hunk.no_newline_new:
            final_nl = not hunk.no_newline_new
    out += lines[pos:]
    out_ends += ends[pos:]
    if not out:
        return ""
    out_ends = [e or style for e in out_ends]
    if not final_nl:
        out_ends[-1] = ""
    return "".join(map(operator.add, out, out_ends))


def _in_file_order(hunks: Sequence[Hunk]) -> tuple[Sequence[Hunk], set[int]]:
    """The hunks in the order of their stated old positions when the reply gave them out of
    order (a model that edits one function, then an earlier one), and the ids of those that
    moved; else the hunks as they are."""
    if len(hunks) < 2:
        return hunks, set()
    starts = [h.old_start for h in hunks]
    if None in starts or starts == sorted(starts):  # type: ignore[type-var]
        return hunks, set()
    order = sorted(hunks, key=lambda h: h.old_start or 0)
    return order, {id(h) for i, h in enumerate(order) if h is not hunks[i]}
