"""What a repository's layout says: the words of its paths, which files are tests, and
whether changes add to its changelog. Used by the automatic context and the repository map.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import NamedTuple

SPLIT = re.compile(r"[/._\-\s]+")  # between the words of a path


class PathWords(NamedTuple):
    """The words of every listed path (lower case), made once per snapshot of the index."""

    stems: dict[str, str]  # path -> its file name without the suffix
    stem_count: dict[str, int]  # file name without the suffix -> how many files have it
    by_word: dict[str, list[str]]  # a word of a path (folder, name) -> the paths holding it
    folders: dict[str, tuple[str, int]]  # path -> (its folder, its depth)
    tests: dict[str, list[str]]  # what a test file tests (its name's subject) -> the tests
    logs: list[str]  # the changelogs near the top (CHANGES.md, HISTORY.rst, ...)


_last_words: tuple[dict, PathWords] | None = None


def path_words(listed: dict) -> PathWords:
    """The words of the paths of `listed` (an index's snapshot: replaced, never changed in
    place, so the last one's words are kept)."""
    global _last_words
    last = _last_words
    if last is not None and last[0] is listed:
        return last[1]
    stems: dict[str, str] = {}
    count: dict[str, int] = {}
    by_word: dict[str, list[str]] = {}
    folders: dict[str, tuple[str, int]] = {}
    tests: dict[str, list[str]] = {}
    logs: list[str] = []
    for rel in listed:
        base = os.path.splitext(rel)[0]
        stem = base.rsplit("/", 1)[-1].lower().lstrip(".")
        stems[rel] = stem
        count[stem] = count.get(stem, 0) + 1
        for part in {p.lower() for p in SPLIT.split(base) if p}:
            by_word.setdefault(part, []).append(rel)
        folder = os.path.dirname(rel)
        folders[rel] = (folder, rel.count("/"))
        subject = test_subject(rel)
        if subject:
            tests.setdefault(subject, []).append(rel)
        if rel.count("/") <= 1 and stem in _LOG_NAMES:
            logs.append(rel)
    words = PathWords(stems, count, by_word, folders, tests, logs)
    _last_words = (listed, words)
    return words


def is_test(rel: str) -> bool:
    """Whether the path looks like a test's (a tests folder, test_x.py, x_test.go, x.test.ts)."""
    parts = rel.lower().split("/")
    stem = parts[-1].split(".", 1)[0]
    return (any(p in ("test", "tests", "spec", "__tests__", "testing") for p in parts[:-1])
            or stem.startswith("test_") or stem.endswith(("_test", "_spec"))
            or ".test." in parts[-1] or ".spec." in parts[-1])


def test_subject(rel: str) -> str:
    """What a test file tests, by its name (lower case): `test_termui.py`, `termui_test.go`,
    `termui.spec.ts`, `TermuiTest.java`, `tests/termui.rs` -> "termui", `test/res.type.js` ->
    "res.type"; '' for another file."""
    stem = os.path.splitext(rel.rsplit("/", 1)[-1])[0]
    low = stem.lower()
    if low.startswith("test_"):
        return low[5:]
    if low.endswith(("_test", "_spec", ".test", ".spec")):
        return low[:-5]
    if low.endswith(("test", "spec")) and len(stem) > 4 and stem[-4].isupper():
        return low[:-4]  # FooTest
    return low if is_test(rel) else ""


def subject(rel: str) -> str:
    """What a source file is about, by its name (lower case): `src/vnode.ts` -> "vnode"."""
    return os.path.splitext(rel.rsplit("/", 1)[-1])[0].lower()


MANIFESTS = frozenset({"package.json", "pyproject.toml", "setup.cfg", "setup.py", "cargo.toml",
                       "go.mod", "go.sum", "gemfile", "composer.json", "pom.xml", "build.gradle",
                       "requirements.txt", "pipfile"})


def is_manifest(rel: str) -> bool:
    """Whether the path is a package manifest (package.json, pyproject.toml, go.mod, ...)."""
    return rel.rsplit("/", 1)[-1].lower() in MANIFESTS


_LOG_NAMES = frozenset({"changelog", "changes", "history", "news", "releases", "release-notes"})
LOG_COMMITS = 30  # recent commits that tell whether changes add to the changelog
LOG_SHARE = 0.2  # the share of them that must change it


def changelogs(listed: dict, commits: Sequence[frozenset[str]]) -> list[tuple[str, float]]:
    """(path, share) of the changelogs (CHANGES.md, HISTORY.rst, ... near the top) that at
    least LOG_SHARE of the last LOG_COMMITS of `commits` (newest first, each the paths it
    changed) changed: a change there usually adds to it."""
    recent = commits[:LOG_COMMITS]
    if len(recent) < 10:
        return []
    found: list[tuple[str, float]] = []
    for rel in path_words(listed).logs:
        share = sum(rel in c for c in recent) / len(recent)
        if share >= LOG_SHARE:
            found.append((rel, share))
    return found


_RELEASE = re.compile(r"\d+\.\d+|unreleased|upcoming|in development", re.I)
_RULE = frozenset("-=~^*")


def changelog_lines(text: str, limit: int = 800) -> tuple[int, ...]:
    """Where an entry goes in a changelog, most likely first: the end and the top of each part
    of its newest release's section (`## Unreleased`, `Version 8.5.0` underlined, and their
    `### Fixes`), then that section's heading and the file's head; the first lines spread out
    when no heading names a release."""
    lines = text.splitlines()[:limit]
    heads = []
    for i, line in enumerate(lines):
        s = line.strip()
        under = lines[i + 1].strip() if i + 1 < len(lines) else ""
        if s.startswith("#") or (s and not set(s) <= _RULE and len(under) >= 3
                                 and set(under) <= _RULE):
            heads.append(i + 1)
    releases = [n for n in heads if _RELEASE.search(lines[n - 1])]
    if not releases:
        return tuple(range(1, 60, 8))
    start = releases[0]
    end = releases[1] - 1 if len(releases) > 1 else len(lines)
    inner = [n for n in heads if start <= n <= end]
    out = []
    for j, head in enumerate(inner):
        last = inner[j + 1] - 1 if j + 1 < len(inner) else end
        while last > head and not lines[last - 1].strip():
            last -= 1
        out += [last, head + 1]  # an entry goes at a part's end, or at its top
    return tuple(dict.fromkeys([*out, start, 1]))
