"""The files of past commits whose subjects resemble an instruction (BM25 over the subjects).

    like_commits(recent_log(root, index), "fix the crash when the pager is closed", listed)
    # -> [("src/click/termui.py", 9.1, "Close the pager's stdin on exit"), ...]

An instruction that names no file or identifier often says what earlier commits said: "the
pager", "shell completion", "hydration mismatch". The subjects of the recent commits (see
`history.recent_log`) are ranked by BM25 against the instruction's plain words (those the
lexical ranking looks for, `lexical.terms`); the files the best ones changed score by those
commits' scores, a commit's score shared among its files (a commit of one file says more about
it than one of ten). A sweep (more than MAX_COMMIT_FILES files) and lock files are left out.
No network: the log is read once per HEAD and kept in the index's cache. Where a file it chose
is cut into regions, the lines those commits wrote in it are shown (`past_lines`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from .finders import bases
from .gitlog import LOCK_FILES, MAX_COMMIT_FILES, Commit
from .lexical import K1, B, idf, plain_words, terms

TOP_COMMITS = 8  # the best commits whose files count
PAST_COMMITS = 2  # commits per file whose lines are looked for in it now, at most
PAST_LINES = 40  # lines of a file those commits wrote, at most
PAST_SECONDS = 5  # the `git show` of those commits, at most
MIN_TEXT = 8  # characters of a written line, at least, for it to say where (not `}` or `else:`)
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
                 ) -> list[tuple[str, float, str, tuple[str, ...]]]:
    """(path, score, the subject of the best commit that changed it, the ids of those commits,
    best first) of the files the commits most like `instruction` changed, best first ([] when
    none shares enough of its words: at least two, or its only one)."""
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
    by_file: dict[str, tuple[float, str, tuple[str, ...]]] = {}
    for score, i, files in scored[:TOP_COMMITS]:
        share = score / math.sqrt(len(files))
        for rel in files:
            old, subject, shas = by_file.get(rel, (0.0, log[i].subject, ()))
            by_file[rel] = (old + share, subject, (*shas, log[i].sha))
    ranked = sorted(by_file.items(), key=lambda kv: (-kv[1][0], kv[0]))
    return [(rel, score, subject, shas) for rel, (score, subject, shas) in ranked]


def past_lines(root: Path, picks: Sequence[tuple[str, tuple[str, ...]]]
               ) -> dict[str, tuple[int, ...]]:
    """For each (path, commit ids) of `picks`: the lines of the file now that those commits
    wrote (found by their text: the file has changed since), those of the first commit first, at
    most PAST_LINES. A change like an earlier one is often made where that one was. One
    `git show` (PAST_SECONDS at most); {} when git fails."""
    wanted = {(sha, rel) for rel, shas in picks for sha in shas[:PAST_COMMITS] if sha}
    if not wanted:
        return {}
    from ..base.git import run_git

    ids = list(dict.fromkeys(sha for sha, _ in sorted(wanted)))
    paths = sorted({rel for _, rel in wanted})
    res = run_git(root, "show", "-U0", "--no-color", "--no-renames", "--no-ext-diff",
                  "--format=%x01%H", *ids, "--", *paths, timeout=PAST_SECONDS)
    if res is None or res.returncode != 0:
        return {}
    added: dict[tuple[str, str], list[str]] = {}
    sha = rel = ""
    for raw in res.stdout.decode("utf-8", "replace").splitlines():
        if raw.startswith("\x01"):
            sha, rel = raw[1:].strip(), ""
        elif raw.startswith("+++ "):
            rel = raw[6:] if raw.startswith("+++ b/") else ""
        elif raw.startswith("+") and rel and (sha, rel) in wanted:
            text = raw[1:].strip()
            if len(text) >= MIN_TEXT and any(ch.isalnum() for ch in text):
                added.setdefault((sha, rel), []).append(text)
    out: dict[str, tuple[int, ...]] = {}
    for rel, shas in picks:
        texts = [t for sha in shas[:PAST_COMMITS] for t in added.get((sha, rel), ())]
        if not texts:
            continue
        try:
            now = (root / rel).read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
        where: dict[str, list[int]] = {}
        for n, line in enumerate(now, 1):
            where.setdefault(line.strip(), []).append(n)
        found: dict[int, None] = {}
        for text in texts:
            at = where.get(text, ())
            if 0 < len(at) <= 2:  # a line found all over the file says nowhere
                found.update(dict.fromkeys(at))
        if found:
            out[rel] = tuple(found)[:PAST_LINES]
    return out
