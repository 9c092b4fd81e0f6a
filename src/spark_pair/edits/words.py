"""Word-level changes within a changed line pair, for highlighting both sides of a diff.

Lines are split into tokens (identifier-like words, runs of blanks, single other characters).
The tokens the two lines start and end with in common are equal whatever the alignment; the
middle is compared with difflib's SequenceMatcher. Spans are character offsets into each line,
half-open, merged where they touch. Pairs that share too little get no spans: the whole line is
the change, and marking nearly every word would only add noise. So do pairs whose middles are
too long to compare quickly (the matcher's cost grows with the square of their length).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

Span = tuple[int, int]
_TOKEN = re.compile(r"\w+|\s+|.", re.DOTALL)
MAX_LINE = 2000  # longer lines are not compared word by word (cost grows with length squared)
MIN_SHARED = 0.3  # share of equal characters below which a pair is not marked
MAX_TOKENS = 500  # differing middle tokens of both lines above which a pair is not marked


def tokens(line: str) -> list[str]:
    return _TOKEN.findall(line)


def _spans(toks: Sequence[str], ranges: list[tuple[int, int]]) -> list[Span]:
    starts = [0]
    for t in toks:
        starts.append(starts[-1] + len(t))
    out: list[Span] = []
    for a, b in ranges:
        if a == b:
            continue
        s, e = starts[a], starts[b]
        if out and out[-1][1] == s:
            out[-1] = (out[-1][0], e)
        else:
            out.append((s, e))
    return out


def _opcodes(a: list[str], b: list[str]) -> list[tuple[str, int, int, int, int]] | None:
    """SequenceMatcher's opcodes for the token lists, the common ends taken as equal first;
    None when the middles are too long to compare."""
    n = min(len(a), len(b))
    head = 0
    while head < n and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < n - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    mid_a, mid_b = a[head:len(a) - tail], b[head:len(b) - tail]
    if len(mid_a) + len(mid_b) > MAX_TOKENS:
        return None
    codes = [("equal", 0, head, 0, head)] if head else []
    if mid_a or mid_b:
        matcher = difflib.SequenceMatcher(None, mid_a, mid_b, autojunk=False)
        codes += [(tag, i1 + head, i2 + head, j1 + head, j2 + head)
                  for tag, i1, i2, j1, j2 in matcher.get_opcodes()]
    if tail:
        codes.append(("equal", len(a) - tail, len(a), len(b) - tail, len(b)))
    return codes


def word_spans(old: str, new: str) -> tuple[list[Span], list[Span]] | None:
    """Changed character spans of `old` and of `new`; None when the pair should not be marked
    word by word (equal, too long, or too different)."""
    if old == new or len(old) > MAX_LINE or len(new) > MAX_LINE:
        return None
    a, b = tokens(old), tokens(new)
    codes = _opcodes(a, b)
    if codes is None:
        return None
    shared = sum(len("".join(a[i1:i2])) for tag, i1, i2, _, _ in codes if tag == "equal")
    if 2 * shared < MIN_SHARED * (len(old) + len(new)):
        return None
    old_r: list[tuple[int, int]] = []
    new_r: list[tuple[int, int]] = []
    for n, (tag, i1, i2, j1, j2) in enumerate(codes):
        if tag == "equal":
            # one separator between two changes (`foo.bar` -> `baz.qux`) reads as one change
            inner = 0 < n < len(codes) - 1 and i2 - i1 == 1 and len(a[i1]) == 1
            if not (inner and not a[i1].isalnum()):
                continue
        if old_r and old_r[-1][1] == i1 and new_r[-1][1] == j1:
            old_r[-1], new_r[-1] = (old_r[-1][0], i2), (new_r[-1][0], j2)
        else:
            old_r.append((i1, i2))
            new_r.append((j1, j2))
    return _spans(a, old_r), _spans(b, new_r)


def hunk_word_spans(lines: Sequence[str]) -> dict[int, list[Span]]:
    """The changed words of a hunk's lines (markers kept, so offsets count the marker): for
    each line of a compared pair, its spans (empty when the pair is a whole-line change)."""
    out: dict[int, list[Span]] = {}
    for i, j in line_pairs(lines):
        found = word_spans(lines[i][1:], lines[j][1:])
        old, new = found if found is not None else ([], [])
        out[i] = [(s + 1, e + 1) for s, e in old]
        out[j] = [(s + 1, e + 1) for s, e in new]
    return out


def line_pairs(lines: Sequence[str]) -> list[tuple[int, int]]:
    """Index pairs (removed line, added line) of a hunk's lines (markers kept) to compare word
    by word: within each run of removed lines followed by added lines, the first removed with
    the first added, and so on."""
    pairs: list[tuple[int, int]] = []
    i, n = 0, len(lines)
    while i < n:
        if lines[i][:1] != "-":
            i += 1
            continue
        j = i
        while j < n and lines[j][:1] == "-":
            j += 1
        k = j
        while k < n and lines[k][:1] == "+":
            k += 1
        pairs += list(zip(range(i, j), range(j, k), strict=False))
        i = k if k > j else j
    return pairs
