"""A lexical ranking of the files for an instruction's plain words (BM25 over the index's words).

    lexical(root, index, "fix the crash when the pager is closed")
    # -> [("src/termui.py", 7.3, ("closed", "pager"), (412, 398, ...)), ...]

For an instruction that names no identifier ("fix the crash when ..."): its words are looked up
in the words the index keeps of every text file (the parts of names, docstrings, comments,
error messages and string literals alike: `wordcount.words_of`). A file scores by BM25: a word
found in few files counts more than a common one, a word found often in a file more than once
(with a diminishing return), a long file less than a short one for the same hits. The best
files come with their lines holding the most of the words, best first (where a large file is
cut). No network, no model: a lookup in the index, then a read of those few files.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import TYPE_CHECKING

from .finders import bases
from .gitlog import LOCK_FILES
from .naming import STOP
from .wordcount import PART

if TYPE_CHECKING:
    from .index import RepoIndex

MAX_TERMS = 10  # words of the instruction looked for, at most (the longest first)
LINED = 8  # the best files whose lines are found (read from disk)
MAX_READ = 512_000  # bytes of a file read for its lines, at most
MAX_LINES = 24  # lines kept per file (those with the most words first)
K1, B = 1.2, 0.75  # BM25's term-frequency saturation and length normalisation
# words that say little about where to look, on top of the naming STOP words
_VAGUE = frozenset("crash crashes fails failing failure broken wrong correct correctly "
                   "properly handle handling handles allow allows make makes improve "
                   "improves improved ensure ensures avoid avoids when with without "
                   "instead better should default".split())


def plain_words(text: str) -> set[str]:
    """The words of `text` that can be looked for: four letters or more, lower case."""
    return {w.lower() for w in PART.findall(text) if len(w) >= 4}


def idf(total: int, df: dict[str, int]) -> dict[str, float]:
    """BM25's inverse document frequency of each word, among `total` documents."""
    return {w: math.log(1 + (total - d + 0.5) / (d + 0.5)) for w, d in df.items()}


def terms(instruction: str) -> dict[str, set[str]]:
    """The instruction's plain words, each with the forms looked for (itself and without an
    English ending): the longest MAX_TERMS."""
    words = plain_words(instruction) - (STOP | _VAGUE)
    chosen = sorted(words, key=lambda w: (-len(w), w))[:MAX_TERMS]
    return {w: {w, *bases(w)} for w in chosen}


def lexical(root: Path, index: RepoIndex, instruction: str, *, limit: int = 20
            ) -> list[tuple[str, float, tuple[str, ...], tuple[int, ...]]]:
    """(path, BM25 score, words found, best lines) of the `limit` best files, best first (the
    lines only for the LINED best)."""
    found = terms(instruction)
    if not found:
        return []
    which = {f: w for w, fs in found.items() for f in fs}
    listed = index.files
    tf: dict[str, dict[str, int]] = {}
    for rel, form, n in index.word_counts(which):
        if (rel in listed and not listed[rel].note  # a link out, binary, too large: never
                and rel.rsplit("/", 1)[-1].lower() not in LOCK_FILES):
            counts = tf.setdefault(rel, {})
            counts[which[form]] = counts.get(which[form], 0) + n
    if not tf:
        return []
    total = max(len(listed), 1)
    mean_size = max(sum(info.size for info in listed.values()) / total, 1.0)
    df: dict[str, int] = {}
    for counts in tf.values():
        for w in counts:
            df[w] = df.get(w, 0) + 1
    weight = idf(total, df)
    scored = []
    for rel, counts in tf.items():
        norm = K1 * (1 - B + B * listed[rel].size / mean_size)
        scored.append((rel, sum(weight[w] * c * (K1 + 1) / (c + norm) for w, c in counts.items()),
                       tuple(sorted(counts))))
    scored.sort(key=lambda t: (-t[1], t[0]))
    pattern = re.compile("|".join(map(re.escape, sorted(which, key=len, reverse=True))), re.I)
    return [(rel, score, words, _best_lines(root, rel, pattern) if i < LINED else ())
            for i, (rel, score, words) in enumerate(scored[:limit])]


def _best_lines(root: Path, rel: str, pattern: re.Pattern[str]) -> tuple[int, ...]:
    """The lines of `rel` holding the most of the words, best first (MAX_LINES at most)."""
    try:
        with open(root / rel, "rb") as fh:
            text = fh.read(MAX_READ).decode("utf-8", "replace")
    except OSError:
        return ()
    hits = []
    for n, line in enumerate(text.splitlines(), 1):
        found = {m.lower() for m in pattern.findall(line)}
        if found:
            hits.append((-len(found), n))
    return tuple(n for _, n in sorted(hits)[:MAX_LINES])
