"""Checks that find a wrong write: a result that some tool reported as applied but that is not
what the diff says. Pure functions on texts (no spark-pair import), so they judge any engine.

- placement: each hunk's new side (its lines from the first to the last changed line, with
  one neighbouring context line when it has one) is a run of consecutive lines in the result;
  the file changed by exactly the diff's `-` and `+` lines (as multisets, leading and trailing
  whitespace aside: indentation is the other check's job); and every change difflib finds
  between the original and the result lies where some hunk's old side is in the original.
- indentation (indentation-significant files): the result compiles when the original did
  (Python), and in each hunk the added lines sit at the same indentation, relative to the
  hunk's context lines, that the diff gave them (a hunk whose added lines were shifted
  differently from its context lines changed what the code means).
"""

from __future__ import annotations

import difflib
import re
import warnings
from collections import Counter
from dataclasses import dataclass, field

HUNK_HEAD = re.compile(r"^@@+ -\d*(?:,\d+)? \+\d*(?:,\d+)? @@+|^@@")
NEW_START = re.compile(r"^@@+ -\d*(?:,\d+)? \+(\d+)")
# the engine's list (spark_pair.edits.placement), kept here so the checks judge any engine
SIGNIFICANT = (
    ".py", ".pyi", ".pyw", ".pyx", ".pxd", ".yaml", ".yml", ".mk", ".coffee", ".litcoffee",
    ".hs", ".lhs", ".nim", ".nims", ".sass", ".styl", ".pug", ".jade", ".haml", ".slim",
    ".fs", ".fsx", ".fsi", ".elm", ".purs", ".idr", ".agda", ".gd", ".cabal", ".rst",
    ".star", ".bzl", ".smk",
)
SIGNIFICANT_NAMES = ("makefile", "gnumakefile", "snakefile", "build", "workspace",
                     "sconstruct", "sconscript", "procfile")
SHEBANG = re.compile(
    r"^#!\s*\S*?(?:/env(?:\s+-\S+)*\s+)?(?:\S*/)?"
    r"(python[\d.]*|pypy[\d.]*|make|gmake|snakemake|coffee|runghc|runhaskell|nim|elm|bazel)"
    r"(?:\s|$)")


@dataclass
class Hunk:
    lines: list[str]  # each with its marker: ' ', '-' or '+'
    new_start: int | None = None

    @property
    def new_side(self) -> list[str]:
        return [ln[1:] for ln in self.lines if ln[0] != "-"]

    @property
    def core(self) -> tuple[int, int]:
        """[first, last] indexes into lines of the changed lines."""
        changed = [i for i, ln in enumerate(self.lines) if ln[0] != " "]
        return (changed[0], changed[-1]) if changed else (0, len(self.lines) - 1)


@dataclass
class FileDiff:
    path: str
    hunks: list[Hunk] = field(default_factory=list)


def parse(text: str) -> dict[str, FileDiff]:
    """The diff's files and hunks, read loosely (a checker, not an applier): a hunk ends at the
    next header, hunk or fence; trailing blank lines before those are dropped."""
    files: dict[str, FileDiff] = {}
    cur: FileDiff | None = None
    hunk: Hunk | None = None
    lines = text.splitlines()
    for i, raw in enumerate(lines):
        line = raw.rstrip("\r")
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if line.startswith("--- ") and nxt.startswith("+++ "):
            hunk = None
            continue
        if line.startswith("+++ ") and (i == 0 or lines[i - 1].startswith("--- ")):
            path = line[4:].split("\t")[0].strip()
            path = path[2:] if path[:2] in ("a/", "b/") else path
            cur = files.setdefault(path, FileDiff(path))
            hunk = None
            continue
        if line.startswith("@@"):
            if cur is None:
                continue
            m = NEW_START.match(line)
            hunk = Hunk([], int(m.group(1)) if m else None)
            cur.hunks.append(hunk)
            continue
        if hunk is None:
            continue
        if line.startswith(("diff --git ", "```", "index ")):
            hunk = None
            continue
        if line == "":
            hunk.lines.append(" ")
        elif line[0] in " -+":
            hunk.lines.append(line)
        elif line.startswith("\\"):
            continue
        else:
            hunk = None
    for f in files.values():
        for h in f.hunks:
            while h.lines and h.lines[-1].strip() == "":
                h.lines.pop()
        f.hunks = [h for h in f.hunks if any(ln[0] != " " for ln in h.lines)]
    return files


def _norm(line: str) -> str:
    """Leading and trailing whitespace aside (spacing inside a line is what it says)."""
    return line.strip()


def _indent(line: str) -> int:
    expanded = line.expandtabs(8)
    return len(expanded) - len(expanded.lstrip())


def _runs(needle: list[str], hay: list[str]) -> list[int]:
    """Start indexes where `needle` (normalised) is a run of `hay` (normalised)."""
    if not needle:
        return []
    n = len(needle)
    first = needle[0]
    return [i for i in range(len(hay) - n + 1)
            if hay[i] == first and hay[i:i + n] == needle]


def _window(h: Hunk) -> tuple[list[str], int]:
    """The hunk's new side around its changes: from one context line before the first change
    to one after the last (when there are such lines); and the offset of the core in it."""
    a, b = h.core
    lo = a - 1 if a > 0 and h.lines[a - 1][0] == " " else a
    hi = b + 1 if b + 1 < len(h.lines) and h.lines[b + 1][0] == " " else b
    part = h.lines[lo:hi + 1]
    return [ln[1:] for ln in part if ln[0] != "-"], lo


@dataclass
class Verdict:
    problems: list[str] = field(default_factory=list)
    loose: bool = False  # some hunk's old side is not in the original as typed

    @property
    def wrong(self) -> bool:
        return bool(self.problems)


def place_hunk(h: Hunk, result: list[str]) -> tuple[int, list[str]] | None:
    """Where the hunk's window sits in the result (nearest its stated line), and the window;
    a window whose edge context is not there is tried without it (a tolerated invented line)."""
    window, _ = _window(h)
    hay = [_norm(x) for x in result]
    tries = [window]
    if window and h.lines and window[0] != h.lines[h.core[0]][1:]:
        tries.append(window[1:])
    if len(window) > 1:
        tries.append(window[:-1])
        tries.append(window[1:-1])
    for w in tries:
        runs = _runs([_norm(x) for x in w], hay)
        if runs:
            want = (h.new_start or 1) - 1
            return min(runs, key=lambda r: abs(r - want)), w
    return None


def placement(original: str, result: str, fd: FileDiff) -> Verdict:
    v = Verdict()
    res = result.splitlines()
    added = [ln[1:] for h in fd.hunks for ln in h.lines if ln[0] == "+"]
    removed = [ln[1:] for h in fd.hunks for ln in h.lines if ln[0] == "-"]
    for i, h in enumerate(fd.hunks):
        core_new = [ln[1:] for ln in h.lines[h.core[0]:h.core[1] + 1] if ln[0] != "-"]
        if any(ln[0] == "+" for ln in h.lines) and not _runs(
                [_norm(x) for x in core_new], [_norm(x) for x in res]):
            v.problems.append(f"{fd.path}: hunk {i + 1}'s new lines are not a run in the result")
        elif place_hunk(h, res) is None:
            v.problems.append(f"{fd.path}: hunk {i + 1} is not next to its context in the result")
    orig = original.splitlines()
    v.problems += _outside(orig, res, fd)
    v.loose = any(not _runs([ln[1:] for ln in h.lines if ln[0] != "+"], orig)
                  for h in fd.hunks if any(ln[0] != "+" for ln in h.lines))
    exact = _changed(orig, res, removed, added, str.rstrip)
    if exact is None:
        return v
    loose = _changed(original.splitlines(), res, removed, added, _norm)
    if loose is None:
        v.loose = True
        return v
    v.problems.append(f"{fd.path}: the file changed by other lines than the diff's: {loose}")
    return v


NEAR = 3  # lines of slack around a hunk's place (difflib may align a change a little aside)


def _outside(orig: list[str], res: list[str], fd: FileDiff) -> list[str]:
    """Changes (by difflib) at places of the original where no hunk's old side is: lines
    written at the wrong place. A hunk whose old side is nowhere in the original (its edge
    lines dropped too) cannot say where it belongs and vouches for nothing."""
    o = [_norm(x) for x in orig]
    spans: list[tuple[int, int]] = []
    for h in fd.hunks:
        old = [_norm(ln[1:]) for ln in h.lines if ln[0] != "+"]
        for side in (old, old[1:], old[:-1], old[1:-1]):
            found = _runs(side, o) if side else []
            if found:
                spans += [(at, at + len(side)) for at in found]
                break
        else:
            return []  # a hunk with no place in the original: this check cannot judge the file
    if not spans:
        return []
    out = []
    sm = difflib.SequenceMatcher(None, o, [_norm(x) for x in res], autojunk=False)
    for tag, i1, i2, _, _ in sm.get_opcodes():
        if tag == "equal":
            continue
        if not any(a - NEAR <= i1 and i2 <= b + NEAR for a, b in spans):
            out.append(f"{fd.path}: lines changed near line {i1 + 1}, where no hunk belongs")
    return out[:3]


def _changed(orig: list[str], res: list[str], removed: list[str], added: list[str],
             key) -> str | None:
    """None when the result differs from the original by exactly the diff's lines, else a
    short account of the difference."""
    o, r = Counter(map(key, orig)), Counter(map(key, res))
    minus, plus = Counter(map(key, removed)), Counter(map(key, added))
    want_gone, want_new = minus - plus, plus - minus
    gone, new = o - r, r - o
    if gone == want_gone and new == want_new:
        return None
    parts = []
    if gone - want_gone:
        parts.append(f"lost {_few(gone - want_gone)}")
    if want_gone - gone:
        parts.append(f"kept {_few(want_gone - gone)}")
    if new - want_new:
        parts.append(f"gained {_few(new - want_new)}")
    if want_new - new:
        parts.append(f"lacks {_few(want_new - new)}")
    return "; ".join(parts) or "counts differ"


def _few(c: Counter) -> str:
    items = [repr(k.strip())[:50] for k in list(c.elements())[:2]]
    more = sum(c.values()) - len(items)
    return ", ".join(items) + (f" (+{more})" if more > 0 else "")


def significant(path: str, original: str = "") -> bool:
    name = path.rsplit("/", 1)[-1].lower()
    return name.endswith(SIGNIFICANT) or name in SIGNIFICANT_NAMES or name.startswith(
        "makefile") or SHEBANG.match(original.split("\n", 1)[0]) is not None


def python(path: str, original: str = "") -> bool:
    m = SHEBANG.match(original.split("\n", 1)[0])
    return path.lower().endswith((".py", ".pyi", ".pyw")) or bool(
        m and m.group(1).startswith(("python", "pypy")))


def compiles(text: str, path: str) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            compile(text, path, "exec", dont_inherit=True)
        except (SyntaxError, ValueError):
            return False
    return True


def indentation(original: str, result: str, fd: FileDiff) -> Verdict:
    """Added lines kept their indentation relative to their context; Python still compiles."""
    v = Verdict()
    if not significant(fd.path, original):
        return v
    if python(fd.path, original) and compiles(original, fd.path) \
            and not compiles(result, fd.path):
        v.problems.append(f"{fd.path}: the result does not compile")
    res = result.splitlines()
    for i, h in enumerate(fd.hunks):
        found = place_hunk(h, res)
        if found is None:
            continue
        at, window = found
        ctx, add = set(), set()
        kinds = _kinds(h, window)
        for k, (kind, line) in enumerate(zip(kinds, window, strict=True)):
            got = res[at + k]
            if not line.strip() or not got.strip():
                continue
            (add if kind == "+" else ctx).add(_indent(got) - _indent(line))
        if len(add) > 1:
            v.problems.append(f"{fd.path}: hunk {i + 1}'s added lines were shifted unevenly "
                              f"({sorted(add)} columns)")
        elif add and ctx and add != ctx:
            v.problems.append(f"{fd.path}: hunk {i + 1}'s added lines were shifted "
                              f"{_cols(add)} but its context {_cols(ctx)}")
    return v


def _kinds(h: Hunk, window: list[str]) -> list[str]:
    """The marker (' ' or '+') of each window line, by locating the window in the new side."""
    marked = [ln for ln in h.lines if ln[0] != "-"]
    texts = [ln[1:] for ln in marked]
    for s in range(len(texts) - len(window) + 1):
        if texts[s:s + len(window)] == window:
            return [ln[0] for ln in marked[s:s + len(window)]]
    return [" "] * len(window)


def _cols(s: set[int]) -> str:
    return ", ".join(f"{x:+d} columns" if x else "0 columns" for x in sorted(s))


def overlapping(original: str, diffs: list[FileDiff]) -> bool:
    """Whether two of these diff blocks for one file change (or add at) the same lines of the
    original, so one revises or repeats the other: their union is then no reading of the reply.
    A hunk whose old side is not at exactly one place counts as touching every other."""
    orig = [_norm(x) for x in original.splitlines()]
    spans: list[list[tuple[int, int]]] = []
    for fd in diffs:
        mine: list[tuple[int, int]] = []
        for h in fd.hunks:
            starts = _runs([_norm(ln[1:]) for ln in h.lines if ln[0] != "+"], orig)
            if len(starts) != 1:
                mine.append((-1, len(orig) + 1))
                continue
            i, run = starts[0], None
            for ln in [*h.lines, " "]:
                if ln[0] == " ":
                    if run is not None:
                        mine.append((run, i))
                    run, i = None, i + 1
                    continue
                run = i if run is None else run
                i += ln[0] == "-"
        spans.append(mine)

    def meet(a: tuple[int, int], b: tuple[int, int]) -> bool:
        if a[0] == a[1] or b[0] == b[1]:
            return a[0] <= b[1] and b[0] <= a[1]
        return a[0] < b[1] and b[0] < a[1]
    return any(meet(a, b) for k, x in enumerate(spans) for y in spans[k + 1:]
               for a in x for b in y)


def check(original: str, result: str, fd: FileDiff) -> Verdict:
    """Both checks on one file."""
    p = placement(original, result, fd)
    ind = indentation(original, result, fd)
    return Verdict(p.problems + ind.problems, p.loose)
