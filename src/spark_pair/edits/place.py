"""Placing one hunk in a file: exactly, with whitespace normalised (its added lines re-based by
the indentation offset of its old lines), or without an edge context line the file does not
have; a ConflictError naming the hunk when it goes nowhere, or to more than one place."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ..base.errors import ConflictError, SparkPairError
from .locate import Locator
from .ops import Hunk
from .placement import Loose, Placement, indent_significant

EXCERPT_LINES = 3
EXCERPT_WIDTH = 72


def _hunk_name(hunk: Hunk, path: str) -> str:
    head = "@@ -{} +{} @@".format(
        "?" if hunk.old_start is None else f"{hunk.old_start},{hunk.old_len}",
        "?" if hunk.new_start is None else f"{hunk.new_start},{hunk.new_len}",
    )
    return f"{path or 'file'} hunk {head}"


def hunk_excerpt(hunk: Hunk) -> str:
    """The hunk's first lines, each on its own indented line (cut to fit 80 columns)."""
    out = []
    for ln in hunk.lines[:EXCERPT_LINES]:
        ln = ln.removesuffix("\r")
        out.append("    " + (ln if len(ln) <= EXCERPT_WIDTH else ln[:EXCERPT_WIDTH - 1] + "…"))
    if len(hunk.lines) > EXCERPT_LINES:
        out.append("    …")
    return "\n".join(out)


def absent(locator: Locator, hunk: Hunk) -> str:
    """Names the hunk's first old line that is nowhere in the file (its number in the hunk and
    by its @@ line, its text cut to fit 80 columns), for a "not in the file" conflict."""
    index = locator.index(len(locator.keys) - 1)  # (the loosest way lines are compared)
    old = 0
    for n, ln in enumerate(hunk.lines, 1):
        if ln[:1] == "+":
            continue
        if index.key(ln[1:]) not in index.ids:
            start = hunk.old_start or 0
            by = f" (line {start + old} by its @@ line)" if start > 0 else ""
            text = ln[1:].removesuffix("\r")
            text = text if len(text) <= 76 else text[:75] + "…"
            return f'line {n} of the hunk{by} is nowhere in the file: "{text}"'
        old += 1
    return "each of its lines is in the file, but not in this order"


def conflict(hunk: Hunk, path: str, what: str, named: str = "") -> ConflictError:
    """A conflict naming the hunk on the first line (then, indented, the line `named` as the
    cause, also in its details); its first lines follow, indented."""
    excerpt = hunk_excerpt(hunk)
    shown = named if len(named) <= 78 else named.replace(': "', ':\n  "', 1)  # (80 columns)
    return ConflictError(f"{_hunk_name(hunk, path)}: {what}" + (f"\n  {shown}" if named else "")
                         + (f"\n{excerpt}" if excerpt else ""), named=named)


def reason(error: SparkPairError) -> str:
    """An error's first line, and the line a conflict names, if any (for one-line causes)."""
    named = error.details.get("named")
    first = error.message.partition("\n")[0]
    return f"{first}; {named}" if named else first


def locate(locator: Locator, hunk: Hunk, lo: int, delta: int, path: str) -> tuple[int, int]:
    """Where the hunk's old side starts, and under which key it matched (0: exactly): the match
    nearest the stated position, never a guess."""
    lines = locator.lines
    old = hunk.old_lines
    expected = None
    if hunk.old_start is not None:
        expected = max(hunk.old_start - (1 if old else 0), 0) + delta
    if not old:
        if not lines:
            return 0, 0
        if expected is None:
            raise conflict(hunk, path, "only adds lines and gives no position")
        if not lo <= expected <= len(lines):
            raise conflict(hunk, path, f"position {expected + 1} is outside the file")
        return expected, 0
    for n in range(len(locator.keys)):
        index = locator.index(n)
        pat = index.pattern(old)
        if pat is None:
            continue
        first = index.find(pat, old, lo)
        if first < 0:
            continue
        second = index.find(pat, old, first + 1)
        if second < 0:
            return first, n
        if expected is None:
            found = [first, second]
            while len(found) < 5 and (at := index.find(pat, old, found[-1] + 1)) >= 0:
                found.append(at)
            many = f"{len(found)}" if len(found) < 5 else "5 or more"
            raise conflict(hunk, path, f"matches {many} places (lines "
                            f"{', '.join(str(i + 1) for i in found)}) and gives no position")
        after = index.find(pat, old, max(lo, expected))
        before = index.rfind(pat, old, lo, expected)
        if after < 0 or (before >= 0 and expected - before < after - expected):
            return before, n
        if before >= 0 and expected - before == after - expected:
            raise conflict(hunk, path, f"matches lines {before + 1} and {after + 1} "
                            "equally well")
        return after, n
    raise NotFound


class NotFound(Exception):
    """The hunk's old side is nowhere in the file (after the earlier hunks)."""


def place(locator: Locator, hunk: Hunk, lo: int, delta: int, path: str
           ) -> tuple[int, Hunk, Placement]:
    """Where the hunk goes, the hunk as it is written there (edge lines left out, added lines
    re-based) and how it was placed."""
    skipped = 0
    try:
        at, n = locate(locator, hunk, lo, delta, path)
    except NotFound:
        at, n, hunk, skipped = _trimmed(locator, hunk, lo, path)
    how: tuple[Loose, ...] = (Loose.EDGE,) if skipped else ()
    if n == 0:
        return at, hunk, Placement(at + 1, how, skipped=skipped) if how else Placement(at + 1)
    hunk, shift, mixed = _rebase(hunk, locator.lines, at, path)
    how += (Loose.REBASED,) if shift else (Loose.WHITESPACE,)
    return at, hunk, Placement(at + 1, how, shift, skipped, mixed)


EDGE_MAX = 2  # context lines that may be left out at each end of a hunk


def _trimmed(locator: Locator, hunk: Hunk, lo: int, path: str) -> tuple[int, int, Hunk, int]:
    """The hunk without the fewest edge context lines (at most EDGE_MAX at each end) that makes
    the rest of its old side, every removed line included, match at exactly one place, once
    and after `lo`, with its added lines still anchored: (where, key, the shorter hunk, lines
    left out). Else a conflict."""
    lines = hunk.lines
    changed = [i for i, ln in enumerate(lines) if ln[0] != " "]
    loosest = locator.index(len(locator.keys) - 1)
    if not changed or not locator.lines or any(  # a removed line that is nowhere: no trim helps
            loosest.key(ln[1:]) not in loosest.ids for ln in lines if ln[0] == "-"):
        raise conflict(hunk, path, "its lines are not in the file", absent(locator, hunk))
    lead, trail = changed[0], len(lines) - 1 - changed[-1]
    ids: dict[int, list[int | None]] = {}  # per key: each old line's id in the file, or None
    for total in range(1, min(lead, EDGE_MAX) + min(trail, EDGE_MAX) + 1):
        for k in range(max(0, total - min(trail, EDGE_MAX)), min(total, lead, EDGE_MAX) + 1):
            core = replace(hunk, lines=lines[k:len(lines) - (total - k)], old_start=None if
                           hunk.old_start is None else hunk.old_start + k)
            old = core.old_lines
            solid = sum(1 for x in old if x.strip())
            if solid < (1 if any(ln[0] == "-" for ln in core.lines) else 2):
                continue  # too little left to say where it goes
            found = _unique(locator, hunk.old_lines, k, total - k, ids)
            if found is None:
                continue
            at, n, other = found
            if not _anchored(core.lines, at, len(old), len(locator.lines), k, total - k):
                continue
            if other is not None or at < lo:
                where = f"lines {at + 1} and {other + 1}" if other is not None else (
                    f"line {at + 1}, before an earlier hunk's place")
                raise conflict(hunk, path, f"its lines are not in the file; without its "
                                f"{total} edge context line(s) they match {where}, so it is "
                                "not placed")
            return at, n, core, total
    raise conflict(hunk, path, "its lines are not in the file", absent(locator, hunk))


def _anchored(core: list[str], at: int, size: int, length: int, lead: int, trail: int) -> bool:
    """Whether added lines at a cut edge still say where they go: they take the place of
    removed lines next to them, or the cut side is the file's start or end. (Added lines after
    a context line, their other neighbour cut, might belong before that neighbour instead.)"""
    def bare(lines: list[str]) -> bool:  # the added lines at this edge follow context
        marks = [ln[0] for ln in lines]
        inner = next((m for m in marks if m != "+"), " ")
        return marks[0] == "+" and inner == " "
    if lead and bare(core) and at > 0:
        return False
    return not (trail and bare(core[::-1]) and at + size < length)


def _unique(locator: Locator, old: list[str], cut: int, cut_end: int,
            ids: dict[int, list[int | None]]) -> tuple[int, int, int | None] | None:
    """(the first match, its key, a second match or None) in the whole file of `old` without
    its first `cut` and last `cut_end` lines, under the first key that finds it; None when it
    is nowhere. `ids`: each key's line ids, kept between calls."""
    part = old[cut:len(old) - cut_end]
    for n in range(len(locator.keys)):
        index = locator.index(n)
        if n not in ids:
            ids[n] = [index.ids.get(index.key(x)) for x in old]
        these = ids[n][cut:len(old) - cut_end]
        if None in these:
            continue
        pat = index.chars(these)  # type: ignore[arg-type]
        at = index.find(pat, part, 0)
        if at >= 0:
            second = index.find(pat, part, at + 1)
            return at, n, (second if second >= 0 else None)
    return None


def _indent(line: str) -> str:
    return line[:len(line) - len(line.lstrip())]


def _width(ws: str) -> str:
    """Indentation in words: '4 spaces', '1 tab', '2 tabs and 1 space', 'nothing'."""
    tabs, spaces = ws.count("\t"), len(ws) - ws.count("\t")
    words = [f"{n} {name}{'s' * (n != 1)}" for n, name in ((tabs, "tab"), (spaces, "space")) if n]
    return " and ".join(words) or "nothing"


def _shift(offset: tuple[int, str]) -> str:
    """An offset in words: 'deeper by 4 spaces', 'shallower by 1 tab', 'the same'."""
    sign, ws = offset
    return "the same" if not sign else f"{'deeper' if sign > 0 else 'shallower'} by {_width(ws)}"


def _rebase(hunk: Hunk, lines: Sequence[str], at: int, path: str) -> tuple[Hunk, int, bool]:
    """A hunk matched with whitespace normalised: its added lines moved by the indentation
    offset that maps its old lines onto the file's, when one offset does for every old line
    (shift in columns, 0 when none is needed). When none does, a file whose indentation is
    meaning (Python, YAML, ...) refuses it, naming the line; another keeps its added lines as
    written (mixed)."""
    offset: tuple[int, str] | None = None  # (+1 add / -1 cut, the indentation)
    first = 0  # the file line that set `offset`
    bad: str | None = None  # why no one offset does
    i = at
    for ln in hunk.lines:
        if ln[0] == "+":
            continue
        have, want = _indent(lines[i]), _indent(ln[1:])
        i += 1
        if not ln[1:].strip():
            continue
        if have == want:
            this: tuple[int, str] | None = (0, "")
        elif have.endswith(want):
            this = (1, have[:len(have) - len(want)])
        elif want.endswith(have):
            this = (-1, want[:len(want) - len(have)])
        else:
            this = None
        if this is None:
            tabs = "tabs in the file, spaces in the reply; " if (
                "\t" in have and " " not in have and "\t" not in want) else ""
            bad = (f"{tabs}the file indents line {i} by {_width(have)}, the reply by "
                   f"{_width(want)}")
            break
        if offset is not None and this != offset:
            bad = (f"line {first} of the file is indented {_shift(offset)} from the reply's "
                   f"line, line {i} {_shift(this)}")
            break
        offset, first = this, first or i
    if bad is None and offset is not None and offset[0] < 0:
        cut = offset[1]
        for ln in hunk.lines:
            if ln[0] == "+" and ln[1:].strip() and not ln[1:].startswith(cut):
                bad = (f"its lines are indented {_width(cut)} deeper than the file's, but its "
                       f"added line {ln[1:].strip()[:40]!r} by only {_width(_indent(ln[1:]))}")
                break
    if bad is not None:
        if indent_significant(path, lines[0] if lines else ""):
            raise conflict(hunk, path, "its lines match the file only with their indentation "
                            f"changed, and not by one amount for every line ({bad}): in this "
                            "file indentation is meaning, so it is not placed")
        return hunk, 0, True
    if offset is None or not offset[1]:
        return hunk, 0, False
    sign, ws = offset
    out = []
    for ln in hunk.lines:
        if ln[0] == "+" and ln[1:].strip():
            ln = "+" + ws + ln[1:] if sign > 0 else "+" + ln[1 + len(ws):]
        out.append(ln)
    return replace(hunk, lines=out), sign * len(ws), False
