"""Finding a hunk's old lines in a file, in time linear in the file and the hunk.

Each distinct line (under a key: exact, or without its outer whitespace) becomes one character, so a
hunk's lines are one substring and the search is str.find / str.rfind in C: no Python loop
over start positions, and a file of many identical lines costs no more than any other.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from ..base.errors import Cancelled

Stop = Callable[[], bool] | None  # true once the turn is cancelled (timeout, Ctrl-C)


def check_stop(stop: Stop) -> None:
    """Raise Cancelled once stop() is true: CPU-bound work gives way to the deadline."""
    if stop is not None and stop():
        raise Cancelled("stopped before anything was written", hint="nothing was written")


_CHARS = 0x110000  # one character per distinct line; past that, ids share characters
_UNREADABLE = re.compile("[\udc80-\udcff\ufffd]+")


def exact(line: str) -> str:
    return line


def normalised(line: str) -> str:
    """The line without its leading and trailing whitespace: spacing inside a line is what
    the line says (a string literal's), so it is never matched loosely."""
    return line.strip()


def readable(line: str) -> str:
    """The line as a model saw it: undecodable bytes (escapes) read as one U+FFFD per run."""
    return _UNREADABLE.sub("\ufffd", line)


class LineIndex:
    """A file's lines under one key, as a string with one character per line."""

    def __init__(self, lines: Sequence[str], key: Callable[[str], str]) -> None:
        self.lines, self.key = lines, key
        keys = lines if key is exact else list(map(key, lines))
        # ids in order of first occurrence: one Python step per distinct line, the rest in C
        self.ids = {k: n for n, k in enumerate(dict.fromkeys(keys))}
        self.shared = len(self.ids) > _CHARS  # a match must then be checked line by line
        numbers = map(self.ids.__getitem__, keys)
        self.text = "".join(map(chr, numbers if not self.shared else (n % _CHARS for n in numbers)))

    def pattern(self, old: Sequence[str]) -> str | None:
        """`old` as a substring of self.text, or None when a line of it is not in the file."""
        out = []
        for line in old:
            n = self.ids.get(self.key(line))
            if n is None:
                return None
            out.append(chr(n % _CHARS))
        return "".join(out)

    def chars(self, ids: Sequence[int]) -> str:
        """Line ids (from self.ids) as a substring of self.text."""
        return "".join(chr(n % _CHARS) for n in ids)

    def _holds(self, at: int, old: Sequence[str]) -> bool:
        return not self.shared or all(self.key(self.lines[at + j]) == self.key(x)
                                      for j, x in enumerate(old))

    def find(self, pat: str, old: Sequence[str], start: int) -> int:
        """The first match at or after `start`, else -1."""
        while True:
            at = self.text.find(pat, max(start, 0))
            if at < 0 or self._holds(at, old):
                return at
            start = at + 1

    def rfind(self, pat: str, old: Sequence[str], start: int, before: int) -> int:
        """The last match at or after `start` and before `before`, else -1."""
        end = before + len(pat) - 1
        while end - len(pat) >= start:
            at = self.text.rfind(pat, max(start, 0), end)
            if at < 0 or self._holds(at, old):
                return at
            end = at + len(pat) - 1
        return -1


class Locator:
    """A file's lines, indexed on first use under each key in turn: exact first, then with
    its leading and trailing whitespace ignored (unless `loose` is False). Lines holding
    undecodable bytes compare as the model saw them."""

    def __init__(self, lines: Sequence[str], escapes: bool = False, loose: bool = True) -> None:
        self.lines = lines
        first = readable if escapes else exact
        self.keys: tuple[Callable[[str], str], ...] = (first,) if not loose else (
            first, (lambda s: normalised(readable(s))) if escapes else normalised)
        self._indexes: dict[int, LineIndex] = {}

    def index(self, n: int) -> LineIndex:
        if n not in self._indexes:
            self._indexes[n] = LineIndex(self.lines, self.keys[n])
        return self._indexes[n]

    def first(self, old: Sequence[str], lo: int) -> int | None:
        """The first match of `old` at or after `lo` (exact before normalised), else None."""
        for n in range(len(self.keys)):
            index = self.index(n)
            pat = index.pattern(old)
            at = index.find(pat, old, lo) if pat else -1
            if at >= 0:
                return at
        return None
