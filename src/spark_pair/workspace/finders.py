"""Where the index and git say an instruction's words are: the files defining its names, the
files using them, the files whose paths hold its words, and the tests of a file by their names.
Each finder returns plain tuples; `candidates.suggest` weighs them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .layout import SPLIT, is_manifest, is_test, path_words, subject
from .naming import CAMEL, STOP
from .symbols import SOURCE_SUFFIXES

if TYPE_CHECKING:
    from .index import RepoIndex
    from .symbols import Definition

MAX_DEFINERS = 6  # a name defined in more files than this says little about where to look
MAX_NAMES = 6  # identifiers followed to their users, at most
MAX_WORDS = 12  # plain words looked for inside the names of definitions, at most
MAX_PATH_GROUP = 3  # files whose paths hold the same words of the instruction, at most
WEAK_PATH = 6.0  # the score of a path whose words are in many paths (adds to other reasons)
MAX_LITERALS = 3  # names with a hyphen or a slash followed to their users, at most
MAX_LITERAL_CODE = 4  # files of code mentioning a package or flag named all over, at most
MAX_USERS = 8  # a name used in more files than this is not followed to its users


def definers(index: RepoIndex, strong: set[str], weak: set[str],
              dotted: Collection[tuple[str, str]] = ()) -> list[tuple[str, str, int, float]]:
    """(name, path, line, score) for files defining a named identifier. A member of a dotted
    name (`Session.get`) counts in the files that define its owner too, however common."""
    out: list[tuple[str, str, int, float]] = []
    by_name: dict[str, dict[str, int]] = {}
    for rel, d in index.defining(strong | weak, any_case=True):
        by_name.setdefault(d.name, {}).setdefault(rel, d.line)
    owners = {o: set(by_name.get(o, ())) for o, _ in dotted}
    for owner, member in dotted:
        for rel in owners[owner] & set(by_name.get(member, ())):
            out.append((member, rel, by_name[member][rel], 60.0))
    strong_lower = {s.lower() for s in strong}
    for name, files in by_name.items():
        if len(files) > MAX_DEFINERS:
            continue
        if name in strong:
            base = 60.0
        elif name.lower() in strong_lower:
            base = 45.0
        elif "_" in name or CAMEL.search(name):
            base = 40.0  # two plain words joined: "parse header" -> parse_header
        else:
            base = 10.0  # a plain word that is also a name: not enough on its own
        share = base / (1 + 0.5 * (len(files) - 1))
        out.extend((name, rel, line, share) for rel, line in files.items())
    return out


def partial_definers(index: RepoIndex, instruction: str
                      ) -> list[tuple[str, str, int, float]]:
    """(name, path, line, score) for files whose definitions' names hold a plain word of the
    instruction (`pager`: `_pipepager`, `echo_via_pager`) or two words written one after the
    other ("setup result": `handleSetupResult`): a word found in few files, in several of a
    file's names, or several words in one file add up."""
    words = {w.lower() for w in re.findall(r"[A-Za-z]{4,}", instruction)} - STOP
    words = set(sorted(words, key=lambda w: (-len(w), w))[:MAX_WORDS])
    plain = [w.lower() for w in re.findall(r"[A-Za-z]{3,}", instruction)]
    pairs = {a + b for a, b in zip(plain, plain[1:], strict=False)
             if a not in STOP and b not in STOP}
    pairs = set(sorted(pairs, key=lambda w: (-len(w), w))[:MAX_WORDS])
    words |= pairs
    by_word: dict[str, dict[str, list[Definition]]] = {}
    for rel, d in index.containing(sorted(words)):
        lname = d.name.lower()
        for w in words:
            if w in lname:
                by_word.setdefault(w, {}).setdefault(rel, []).append(d)
    scores: dict[str, float] = {}
    first: dict[str, Definition] = {}
    for files in by_word.values():
        if len(files) > 2 * MAX_DEFINERS:
            continue  # a word in the names of many files says little
        for rel, defs in files.items():
            scores[rel] = scores.get(rel, 0.0) + 6.0 + 2.0 * min(len(defs), 3)
            first.setdefault(rel, defs[0])
    return [(first[rel].name, rel, first[rel].line, score) for rel, score in scores.items()]


def users(root: Path, index: RepoIndex, names: list[str], literals: Sequence[str] = ()
           ) -> list[tuple[str, str, tuple[int, ...]]]:
    """(name, path, lines) for files that mention one of `names` or `literals` as a whole
    word. A package manifest mentioning a literal (a package's name) is kept however many
    other files do."""
    names = [*names[:MAX_NAMES], *literals[:MAX_LITERALS]]
    if not names:
        return []
    from ..base.git import run_git

    args = ["grep", "-n", "-I", "-w", "-F", "--no-color"]  # tracked files (--untracked: slow)
    for name in names:
        args += ["-e", name]
    res = run_git(root, *args, timeout=5)
    hits: dict[str, dict[str, list[int]]] = {}
    if res is not None and res.returncode in (0, 1):
        for raw in res.stdout.splitlines()[:5000]:
            parts = raw.decode("utf-8", "replace").split(":", 2)
            if len(parts) < 3 or not parts[1].isdigit():
                continue
            rel, line, text = parts[0], int(parts[1]), parts[2]
            if rel not in index.files:
                continue
            for name in names:
                if re.search(rf"\b{re.escape(name)}\b", text):
                    hits.setdefault(name, {}).setdefault(rel, []).append(line)
    out: list[tuple[str, str, tuple[int, ...]]] = []
    for name, files in hits.items():
        ranked = sorted(files.items(), key=lambda kv: (-len(kv[1]), kv[0]))
        if len(files) > MAX_USERS:
            # a name used all over the repository says little about where to look, but its
            # tests still test it; a package or a flag is declared in a manifest and handled in
            # a few files of code (its docs and completions mention it too)
            keep = [kv for kv in ranked if is_test(kv[0])][:3]
            if name in literals:
                code = [kv for kv in ranked if not is_test(kv[0])
                        and os.path.splitext(kv[0])[1].lower() in SOURCE_SUFFIXES]
                keep += [kv for kv in ranked if is_manifest(kv[0])]
                keep += code if len(code) <= MAX_LITERAL_CODE else []
            ranked = keep
        out.extend((name, rel, tuple(lines[:50])) for rel, lines in ranked)
    return out


_SCRIPT = frozenset({".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts"})


def _language(rel: str) -> str:
    """A file's suffix, the same for JavaScript and TypeScript (a test is in its code's)."""
    suffix = os.path.splitext(rel)[1].lower()
    return ".js" if suffix in _SCRIPT else suffix


def tests_of(listed: dict, paths: Sequence[str]) -> list[tuple[str, str]]:
    """(test, path) for the tests of each of `paths` by their names (`tests/test_termui.py` for
    `src/termui.py`), in the same language: of several, the nearest to it in the tree (two at
    most)."""
    tests = path_words(listed).tests
    out: list[tuple[str, str]] = []
    for rel in paths:
        if is_test(rel) or os.path.splitext(rel)[1].lower() not in SOURCE_SUFFIXES:
            continue
        lang = _language(rel)
        mine = [t for t in tests.get(subject(rel), ()) if t != rel and _language(t) == lang]
        if not mine:
            continue
        folder = rel.split("/")[:-1]
        steps = {}  # from its folder to the test's, in the tree
        for t in mine:
            other = t.split("/")[:-1]
            steps[t] = len(folder) + len(other) - 2 * len(os.path.commonprefix([folder, other]))
        least = min(steps.values())
        out.extend((t, rel) for t in sorted(t for t in mine if steps[t] == least)[:2])
    return out


def bases(word: str) -> set[str]:
    """The word without an English ending (`diffing`: diff, `renders`: render)."""
    out = set()
    for end in ("ing", "ed", "es", "s"):
        if word.endswith(end) and len(word) - len(end) >= 4 and not word.endswith("ss"):
            base = word[: -len(end)]
            out.add(base)
            if len(base) >= 5 and base[-1] == base[-2]:
                out.add(base[:-1])  # diffing: diff
    return out


def module_names(instruction: str, listed: dict) -> list[tuple[str, str]]:
    """(path, name) for files whose name without its suffix the instruction writes whole, a
    name of several words (`get_url` for modules/get_url.py, `_termui_impl`): a module named
    as code names its file, unless many files share the name."""
    written = {w.lower().lstrip("_") for w in re.findall(r"[A-Za-z_][A-Za-z0-9_\-]*[A-Za-z0-9]",
                                                       instruction)
               if re.search(r"[A-Za-z0-9][_\-][A-Za-z0-9]", w)}
    if not written:
        return []
    pw = path_words(listed)
    out = [(rel, stem) for rel, stem in pw.stems.items()
           if stem.lstrip("_") in written and pw.stem_count[stem] <= MAX_PATH_GROUP]
    return sorted(out)


def path_matches(instruction: str, listed: dict) -> list[tuple[str, list[str], float]]:
    """(path, matched words, score) for files whose path holds words of the instruction."""
    words = {w.lower() for w in re.findall(r"[A-Za-z][A-Za-z0-9]{2,}", instruction)}
    words -= STOP
    words |= {base for w in words for base in bases(w)} - STOP
    if not words:
        return []
    pw = path_words(listed)
    matched: dict[str, list[str]] = {}
    for word in sorted(words):
        for rel in pw.by_word.get(word, ()):
            matched.setdefault(rel, []).append(word)
    out = []
    for rel, hits in matched.items():
        if len(hits) > 1:  # in the path's order
            order = [p.lower() for p in SPLIT.split(os.path.splitext(rel)[0])]
            hits.sort(key=order.index)
        stem = pw.stems[rel]
        stem_hit = stem in words and pw.stem_count[stem] <= 3  # the file's own name, and rare
        if len(hits) >= 2 or stem_hit:
            score = 6.0 * len(hits) + (6.0 if stem_hit else 0.0)
            out.append((rel, hits, score, stem_hit))
    # words in the folders of many files (a package's name) say little about which one: they
    # only add to a file's other reasons
    groups: dict[tuple[str, ...], int] = {}
    for _, hits, _, stem_hit in out:
        if not stem_hit:
            groups[tuple(hits)] = groups.get(tuple(hits), 0) + 1
    out = [(rel, hits, score if stem_hit or groups[tuple(hits)] <= MAX_PATH_GROUP else
            min(score, WEAK_PATH), stem_hit) for rel, hits, score, stem_hit in out]
    out.sort(key=lambda t: (-t[2], t[0]))
    return [(rel, hits, score) for rel, hits, score, _ in out]
