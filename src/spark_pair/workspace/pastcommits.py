"""The files of past commits whose subjects resemble an instruction (BM25 over the subjects).

    like_commits(recent_log(root, index), "fix the crash when the pager is closed", listed)
    # -> [("src/click/termui.py", 9.1, "Close the pager's stdin on exit"), ...]

An instruction that names no file or identifier often says what earlier commits said: "the
pager", "shell completion", "hydration mismatch". The subjects of the recent commits (see
`history.recent_log`) are ranked by BM25 against the instruction's plain words (those the
lexical ranking looks for, `lexical.terms`); the files the best ones changed score by those
commits' scores, a commit's score shared among its files (a commit of one file says more about
it than one of ten). A sweep (more than MAX_COMMIT_FILES files) and lock files are left out.
No network: the log is read once per HEAD and kept in the index's cache.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from .finders import bases
from .gitlog import LOCK_FILES, MAX_COMMIT_FILES, Commit
from .lexical import K1, B, idf, plain_words, terms

TOP_COMMITS = 8  # the best commits whose files count
_words: tuple[Sequence[Commit], list[frozenset[str]], float] | None = None  # a log, its words


def _subject_words(log: Sequence[Commit]) -> tuple[list[frozenset[str]], float]:
    """The words of each subject (lower case, with their bases), and the mean count, made once
    per log (a log is replaced, never changed in place)."""
    global _words
    last = _words
    if last is not None and last[0] is log:
        return last[1], last[2]
    out = []
    for c in log:
        found = plain_words(c.subject)
        out.append(frozenset(found | {b for w in found for b in bases(w)}))
    mean = max(sum(len(w) for w in out) / max(len(out), 1), 1.0)
    _words = (log, out, mean)
    return out, mean


def like_commits(log: Sequence[Commit], instruction: str, listed: dict
                 ) -> list[tuple[str, float, str]]:
    """(path, score, the subject of the best commit that changed it) of the files the commits
    most like `instruction` changed, best first ([] when none shares enough of its words: at
    least two, or its only one)."""
    wanted = terms(instruction)
    if not wanted or not log:
        return []
    words, mean = _subject_words(log)
    least = min(2, len(wanted))
    hits: list[tuple[int, list[str]]] = []
    df: dict[str, int] = {}
    for i, found in enumerate(words):
        matched = [w for w, forms in wanted.items() if forms & found]
        if matched:
            for w in matched:
                df[w] = df.get(w, 0) + 1
            if len(matched) >= least:
                hits.append((i, matched))
    total = len(log)
    weight = idf(total, df)
    scored = []
    for i, matched in hits:
        files = [rel for rel in log[i].files if rel in listed and not listed[rel].note
                 and rel.rsplit("/", 1)[-1].lower() not in LOCK_FILES]
        if not files or len(log[i].files) > MAX_COMMIT_FILES:
            continue
        norm = K1 * (1 - B + B * len(words[i]) / mean)
        score = sum(weight[w] * (K1 + 1) / (1 + norm) for w in matched)
        scored.append((score, i, files))
    scored.sort(key=lambda t: (-t[0], t[1]))  # the newer commit (log is newest first) on a tie
    by_file: dict[str, tuple[float, str]] = {}
    for score, i, files in scored[:TOP_COMMITS]:
        share = score / math.sqrt(len(files))
        for rel in files:
            old, subject = by_file.get(rel, (0.0, log[i].subject))
            by_file[rel] = (old + share, subject)
    ranked = sorted(by_file.items(), key=lambda kv: (-kv[1][0], kv[0]))
    return [(rel, score, subject) for rel, (score, subject) in ranked]
