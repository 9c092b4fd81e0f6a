"""Automatic context: the files an instruction needs, each with the reason it was chosen.

    found = suggest(root, "rename parse_header to parse_head", index, pinned=["a.py"])
    found.files      # [Candidate("http/utils.py", Why.DEFINES, "parse_header", ...), ...]
    found.withheld   # [Withheld(".env", "looks like a secret (.env*)", named=True)]

Reasons, strongest first: the instruction names the file (a path or a file name); the file
defines an identifier the instruction names (the index of definitions); the file was edited on
disk recently (the watcher, or git's uncommitted changes); an earlier turn showed or changed it;
the file uses an identifier the instruction names and the repository defines, or a package or
flag it names (git grep); its path holds words of the instruction; it is the changelog most
changes add to. The best-ranked files bring their companions: their tests (by their names) and
the file the recent commits that changed them most often changed too. A file git ignores, a
link that leaves the repository, a binary or huge file, and a file that looks like a secret
(`SECRET_PATTERNS`, `[context] never`) is never chosen; named in the instruction, it is listed
in `withheld` with the reason, so a front end can say how to add it by hand.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from ..base.config import PROJECT_FILE
from .files import uncommitted_lines
from .finders import (
    WEAK_PATH,
    definers,
    module_names,
    partial_definers,
    path_matches,
    tests_of,
    users,
)
from .gitlog import changed_with, recent_log
from .layout import changelog_lines, changelogs, path_words
from .lexical import lexical, terms
from .naming import COMMIT_PREFIX, PATHISH, URL, identifiers, literals, named_paths, path_token
from .pastcommits import like_commits

if TYPE_CHECKING:
    from .index import RepoIndex


class Why(StrEnum):
    NAMED = "named"  # the instruction names the file
    DEFINES = "defines"  # it defines an identifier the instruction names
    EDITED = "edited"  # changed on disk recently
    EARLIER = "earlier"  # an earlier turn showed or changed it
    USES = "uses"  # it uses an identifier the instruction names
    PATH = "path"  # its path holds words of the instruction
    WORDS = "words"  # its text holds the instruction's rarer words (a lexical ranking)
    LIKE = "like commit"  # past commits whose subjects resemble the instruction changed it
    LOG = "changelog"  # the changelog, when most changes add to it
    TEST = "test of"  # a test of a chosen file (by its name: test_x.py for x.py)
    CHANGES = "changes with"  # recent commits that changed a chosen file mostly changed it too


@dataclass(frozen=True, slots=True)
class Candidate:
    path: str
    why: Why
    detail: str = ""  # the identifier or the words
    score: float = 0.0
    lines: tuple[int, ...] = ()  # relevant lines (definitions, uses), the most first: shown if
    # the file is cut
    missing: bool = False  # named, not on disk yet (the instruction may create it)
    tokens: int = 0  # an estimate of the whole file's tokens (from its size)

    @property
    def label(self) -> str:
        """The reason, in words (the files pane, `run`'s notes and JSON)."""
        match self.why:
            case Why.NAMED:
                return "named, new file" if self.missing else "named"
            case Why.DEFINES:
                return f"defines {self.detail}"
            case Why.USES:
                return f"uses {self.detail}"
            case Why.EDITED:
                return "edited on disk"
            case Why.EARLIER:
                return "earlier turn"
            case Why.PATH:
                return f"path: {self.detail}"
            case Why.WORDS:
                return f"words: {self.detail}"
            case Why.LIKE:
                return f"like commit: {self.detail}"
            case Why.LOG:
                return f"changelog ({self.detail})"
            case Why.TEST:
                return f"test of {self.detail}"
            case Why.CHANGES:
                return f"changes with {self.detail}"


class Withheld(NamedTuple):
    path: str
    reason: str  # why it is never sent on its own
    named: bool  # the instruction names it (then a front end says how to add it by hand)


@dataclass(slots=True)
class Found:
    """What `suggest` found for one instruction."""

    instruction: str
    files: list[Candidate] = field(default_factory=list)  # ranked, strongest first
    withheld: list[Withheld] = field(default_factory=list)

    def paths(self) -> list[str]:
        return [c.path for c in self.files]

    def reasons(self) -> dict[str, str]:
        return {c.path: c.label for c in self.files}


# files that look like secrets: never sent unless a person adds them by hand
SECRET_PATTERNS = (".env", ".env.*", "*.env", "*.pem", "*.key", "*.p12", "*.pfx", "id_*",
                   "credentials*", ".netrc", ".pgpass", "*.keystore", "*.jks")
_CODE_SUFFIXES = frozenset({".py", ".js", ".ts", ".go", ".rs", ".java", ".rb", ".c", ".h",
                            ".cpp", ".cs", ".php", ".kt", ".swift", ".md", ".rst", ".txt"})
MAX_FILES = 12  # automatic files, at most
MIN_SCORE = 12.0  # weaker evidence is not enough on its own
LEXICAL = 16.0  # the score of the best file by the lexical ranking (the others: in proportion)
LEXICAL_FILES = 3  # files chosen by the lexical ranking, at most
LEXICAL_LINES = 6  # its best lines added to those of a file's other reasons, at most
BODY_LINES = 200  # lines of a named definition's body shown when its file is cut, at most
MODULE = 40.0  # the score of a file whose name the instruction writes as code (`get_url`)
LIKE = 30.0  # the score of the best file by the past commits like the instruction
LIKE_FILES = 3  # files chosen by the past commits, at most
LEADERS = 3  # the best-ranked files, whose companions (tests, history) come along
COMPANION = 22.0  # the score of a leading file's test (a little over a file using a name)
def suggest(root: Path, instruction: str, index: RepoIndex, *, pinned: Iterable[str] = (),
            dropped: Iterable[str] = (), edited: Sequence[str] = (),
            earlier: Sequence[str] = (), never: Sequence[str] = (),
            max_files: int = MAX_FILES) -> Found:
    """The files `instruction` needs beside `pinned` (those a person put in the context), best
    first; `dropped` are never suggested. `edited`: files changed on disk recently, newest
    first; `earlier`: files of earlier turns. Blocking (reads the index, may run git grep)."""
    found = Found(instruction)
    listed = index.files
    instruction = URL.sub(" ", instruction)  # a link's host and path name no file here
    instruction = COMMIT_PREFIX.sub(lambda m: f"{m.group(1)}{m.group(2) or ''} ", instruction)
    scores: dict[str, list[Candidate]] = {}

    def add(c: Candidate) -> None:
        scores.setdefault(c.path, []).append(c)

    named = named_paths(root, instruction, listed)
    for rel, weight, missing in named:
        add(Candidate(rel, Why.NAMED, score=100.0 * weight, missing=missing))
    names = identifiers(instruction)
    strong = names.strong
    defined = definers(index, strong, names.weak, names.pairs)
    for name, rel, line, score in defined:
        add(Candidate(rel, Why.DEFINES, name, score, (line,)))
    for name, rel, line, score in partial_definers(index, instruction):
        add(Candidate(rel, Why.DEFINES, name, score, (line,)))
    # where git says an edited file (or one an earlier turn wrote) changed: its cut shows them
    changed = uncommitted_lines(root, [r for r in dict.fromkeys([*edited[:5], *earlier])
                                       if r in listed])
    for i, rel in enumerate(edited[:5]):
        if rel in listed:
            add(Candidate(rel, Why.EDITED, score=35.0 - 4 * i, lines=changed.get(rel, ())))
    for rel in earlier:
        if rel in listed:
            add(Candidate(rel, Why.EARLIER, score=25.0, lines=changed.get(rel, ())))
    # the users of the code-like names: those the repository defines first, then the others
    # (`trimRight()`: a library's name says where it is called; not a part of `debug.log`)
    mine = {name for name, *_ in defined if name in strong}
    others = strong - mine - names.dotted
    used = sorted(mine) + sorted(others, key=lambda n: (-len(n), n))
    flags = literals(instruction, listed)
    for name, rel, lines in users(root, index, used, flags):
        add(Candidate(rel, Why.USES, name, 20.0, lines))
    for rel, name in module_names(instruction, listed):
        add(Candidate(rel, Why.PATH, name, MODULE))
    for rel, words, score in path_matches(instruction, listed):
        if score > WEAK_PATH or rel in scores:
            add(Candidate(rel, Why.PATH, " ".join(words), score))
    # the lexical ranking chooses a few files for an instruction that names nothing: no file,
    # no code-like name, no package or flag, no identifier the index knows; a file holding
    # one of several words is not enough
    if not (named or strong or flags or any(score >= 40 for *_, score in defined)):
        ranked_words = lexical(root, index, instruction)
        least = min(2, len(terms(instruction)))
        for i, (rel, score, hits, lines) in enumerate(ranked_words[:LEXICAL_FILES]):
            share = score / ranked_words[0][1]
            if (i == 0 or share >= 0.5) and len(hits) >= least:
                add(Candidate(rel, Why.WORDS, " ".join(hits), LEXICAL * share, lines))
    log = recent_log(root, index)
    commits = [c.files for c in log]
    liked = like_commits(log, instruction, listed)
    for rel, score, subject in liked[:LIKE_FILES]:
        share = score / liked[0][1]
        if share >= 0.5:
            add(Candidate(rel, Why.LIKE, _short(subject), LIKE * share))
    for rel, share in changelogs(listed, commits):
        add(Candidate(rel, Why.LOG, f"in {share:.0%} of recent commits", 14.0,
                      changelog_lines(_head(root / rel))))
    # spark-pair's own config (the base URL, the key's variable) is no context of the task
    # unless the instruction names it
    config = {rel for rel in scores if rel.rsplit("/", 1)[-1].lower() == PROJECT_FILE
              and all(c.why is not Why.NAMED for c in scores[rel])}
    skip = set(pinned) | set(dropped) | config
    totals = {rel: _total(reasons) for rel, reasons in scores.items() if rel not in skip}
    leaders = [rel for rel in sorted(totals, key=lambda r: (-totals[r], r))[:LEADERS]
               if totals[rel] >= MIN_SCORE]
    for c in _companions(listed, commits, leaders, {*strong, *(f"{a}.{b}" for a, b in
                                                               names.pairs)}):
        add(c)

    ranked: list[Candidate] = []
    logs = set(path_words(listed).logs)
    for rel, reasons in scores.items():
        if rel in skip:
            continue
        # the label: the strongest reason, "earlier turn" only when no other explains the file
        # (a file edited on disk says so, however many others were edited after it)
        best = max(reasons, key=lambda c: (c.why is not Why.EARLIER, c.score))
        score = _total(reasons)
        follows = [totals[c.detail] for c in reasons
                   if c.why in (Why.TEST, Why.CHANGES) and c.detail in totals]
        if follows:  # a companion goes up to just below the file it comes with
            own = _total([c for c in reasons if c.why not in (Why.TEST, Why.CHANGES)])
            score = max(own, min(score, max(follows) - 1))
        # the relevant lines, those of the strongest reason first (the lexical ranking's
        # only where no other reason says where to look)
        lines = tuple(dict.fromkeys(n for c in sorted(reasons, key=lambda c: -c.score)
                                    if c.why != Why.WORDS for n in c.lines))
        lexical_lines = next((c.lines for c in reasons if c.why == Why.WORDS), ())
        lines = tuple(dict.fromkeys([*lines, *lexical_lines[:LEXICAL_LINES if lines else None]]))
        if rel in logs and all(c.why != Why.LOG for c in reasons):
            # a changelog chosen for another reason (named, using a name): an entry goes at
            # its newest section, whatever brought it
            lines = tuple(dict.fromkeys([*changelog_lines(_head(root / rel)), *lines]))
        info = listed.get(rel)
        ranked.append(Candidate(rel, best.why, best.detail, score, lines, best.missing,
                                0 if info is None else info.size // 4))
    ranked.sort(key=lambda c: (-c.score, c.path))
    named_set = {rel for rel, _, _ in named}
    # the changelog most changes add to keeps a place (its head is small, often changed)
    room = max_files - any(c.why == Why.LOG and c.score >= MIN_SCORE for c in ranked[max_files:])
    for c in ranked:
        reason = withheld_reason(c.path, listed, never)
        if reason is not None:
            found.withheld.append(Withheld(c.path, reason, c.path in named_set))
        elif c.score >= MIN_SCORE and (len(found.files) < room
                                       or (c.why == Why.LOG and len(found.files) < max_files)):
            found.files.append(c)
    found.files = _with_bodies(index, found.files,
                               {(rel, line) for _, rel, line, score in defined if score >= 40})
    found.withheld.extend(_named_but_unlisted(root, instruction, listed, skip))
    return found


def _head(path: Path, size: int = 65_536) -> str:
    """The first `size` bytes of a file as text ('' when it cannot be read)."""
    try:
        with open(path, "rb") as fh:
            return fh.read(size).decode("utf-8", "replace")
    except OSError:
        return ""


def _short(text: str, width: int = 48) -> str:
    return text if len(text) <= width else text[:width - 1].rstrip() + "…"


def _total(reasons: list[Candidate]) -> float:
    """A file's score: the best of each kind of reason, added up."""
    return sum(max((c.score for c in reasons if c.why == w), default=0.0) for w in Why)


def _companions(listed: dict, commits: Sequence[frozenset[str]], leaders: Sequence[str],
                names: Collection[str]) -> list[Candidate]:
    """The files that come with the leading files: their tests (by their names), the tests of
    the names written in the instruction (`style()`: test_style.py), and the file the recent
    commits that changed a leading file most often changed too."""
    out: list[Candidate] = []
    tests = path_words(listed).tests
    for name in sorted(names):
        for rel in tests.get(name.lower(), ())[:2]:
            out.append(Candidate(rel, Why.TEST, name, COMPANION))
    for rel, source in tests_of(listed, leaders):
        out.append(Candidate(rel, Why.TEST, source, COMPANION))
    for rel, source, share in changed_with(commits, leaders, listed):
        if rel not in leaders:
            out.append(Candidate(rel, Why.CHANGES, source, 6.0 + 20.0 * share))
    return out


def withheld_reason(rel: str, listed: dict, never: Sequence[str] = ()) -> str | None:
    """Why the file is never sent on its own (None: it may be)."""
    info = listed.get(rel)
    if info is not None and info.note:
        return info.note
    name = rel.rsplit("/", 1)[-1]
    suffix = os.path.splitext(name)[1].lower()
    for pattern in never:
        if fnmatch.fnmatchcase(rel, pattern) or fnmatch.fnmatchcase(name, pattern):
            return f"matches [context] never ({pattern})"
    if suffix not in _CODE_SUFFIXES or name.startswith(".env"):
        for pattern in SECRET_PATTERNS:
            if pattern == "id_*" and suffix not in ("", ".pub"):
                continue  # a key file (id_rsa, id_ed25519.pub), not id_map.json
            if fnmatch.fnmatchcase(name, pattern):
                return f"looks like a secret ({pattern})"
    return None


def _with_bodies(index: RepoIndex, files: list[Candidate], defs: set[tuple[str, int]]
                 ) -> list[Candidate]:
    """The candidates with the lines of each named definition's body among their relevant
    lines (to its next definition, at most BODY_LINES), so a file cut into regions shows the
    body, not only its first line."""
    wanted = [c.path for c in files if any((c.path, n) in defs for n in c.lines)]
    if not wanted:
        return files
    starts = {rel: sorted({d.line for d in found})
              for rel, found in index.definitions_of(wanted, top_only=False).items()}
    out = []
    for c in files:
        lines: dict[int, None] = {}
        for n in c.lines:
            lines[n] = None
            if (c.path, n) in defs:  # its body right after it (the lines come by priority)
                after = [x for x in starts.get(c.path, ()) if x > n]
                end = min(after[0] - 1 if after else n + BODY_LINES, n + BODY_LINES)
                lines.update(dict.fromkeys([*range(n, end + 1, 8), end]))
        out.append(replace(c, lines=tuple(lines)) if len(lines) > len(c.lines) else c)
    return out


def _named_but_unlisted(root: Path, instruction: str, listed: dict,
                        skip: set[str]) -> list[Withheld]:
    """Files the instruction names that exist but are not listed (git ignores them, or they
    are in a folder never read)."""
    out: list[Withheld] = []
    for m in PATHISH.finditer(instruction):
        token = path_token(m.group(0))
        if not token or token in listed or token in skip:
            continue
        full = root / token
        try:
            exists = full.is_file() or full.is_symlink()
        except OSError:
            exists = False
        if exists:
            out.append(Withheld(token, "git ignores it", True))
    return out
