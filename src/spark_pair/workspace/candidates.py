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
import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from .history import changed_with, recent_commits
from .layout import SPLIT, changelogs, is_manifest, is_test, path_words, subject
from .symbols import SOURCE_SUFFIXES

if TYPE_CHECKING:
    from .index import RepoIndex
    from .symbols import Definition


class Why(StrEnum):
    NAMED = "named"  # the instruction names the file
    DEFINES = "defines"  # it defines an identifier the instruction names
    EDITED = "edited"  # changed on disk recently
    EARLIER = "earlier"  # an earlier turn showed or changed it
    USES = "uses"  # it uses an identifier the instruction names
    PATH = "path"  # its path holds words of the instruction
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
            case Why.LOG:
                return f"changelog ({self.detail})"
            case Why.TEST:
                return f"test of {self.detail}"
            case Why.CHANGES:
                return f"changes with {self.detail}"


@dataclass(frozen=True, slots=True)
class Withheld:
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
FILE_SUFFIXES = frozenset({*SOURCE_SUFFIXES, ".md", ".rst", ".txt", ".json", ".toml", ".yaml",
                           ".yml", ".cfg", ".ini", ".html", ".css", ".scss", ".lock", ".xml",
                           ".csv", ".sql", ".env", ".pem", ".key", ".tcss", ".svg"})
MAX_FILES = 12  # automatic files, at most
MIN_SCORE = 12.0  # weaker evidence is not enough on its own
BODY_LINES = 200  # lines of a named definition's body shown when its file is cut, at most
MAX_DEFINERS = 6  # a name defined in more files than this says little about where to look
MAX_NAMES = 6  # identifiers followed to their users, at most
MAX_WORDS = 12  # plain words looked for inside the names of definitions, at most
LEADERS = 3  # the best-ranked files, whose companions (tests, history) come along
COMPANION = 22.0  # the score of a leading file's test (a little over a file using a name)
MAX_PATH_GROUP = 3  # files whose paths hold the same words of the instruction, at most
WEAK_PATH = 6.0  # the score of a path whose words are in many paths (adds to other reasons)
MAX_LITERALS = 3  # names with a hyphen or a slash followed to their users, at most
MAX_LITERAL_CODE = 4  # files of code mentioning a package or flag named all over, at most
MAX_USERS = 8  # a name used in more files than this is not followed to its users
_PATHISH = re.compile(r"[\w.\-/]*[\w\-]\.[A-Za-z][\w]{0,7}\b|[\w.\-]+/[\w.\-/]+"
                      r"|(?<![\w/.])\.[A-Za-z][\w.\-]*")
_URL = re.compile(r"\b[A-Za-z][A-Za-z0-9+.\-]*://\S*")
_IDENT = re.compile(r"``([^`\n]{2,80})``|`([^`\n]{2,80})`"
                    r"|[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
# a commit-style prefix, `fix(parser): ...` (its type is no call; its scope names a place)
_PREFIX = re.compile(r"^([ \t]*(?:[-*][ \t]+)?)(?:feat|fix|chore|docs?|tests?|refactor|perf|ci|"
                     r"build|style|dx|sec|types|lint|deps)(?:\(([^)\n]*)\))?!?:[ \t]",
                     re.M | re.I)
# a name with a hyphen or a slash (`content-type`, gopkg.in/yaml.v3), or a flag (--verbose)
_LITERAL = re.compile(r"`?(?<![\w./-])(--)?([A-Za-z0-9_][\w.]*(?:[-/][\w.]+)+"
                      r"|(?<=--)[A-Za-z]\w+)`?")
_DOTTED = re.compile(r"(?<![\w./-])[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?![\w./-]*\w)")
_CAMEL = re.compile(r"[a-z0-9][A-Z]")
STOP = frozenset(
    "this that with from into make file files function functions change please should would "
    "could when then also them there where which what have only each every the and for fix "
    "add use all any not but can new now too its out via one two are was you your our their "
    "has had been being does did done just like more most some such than very will shall may "
    "might must about after before above below under over again further once here why how "
    "both few other same own off until while other instead rather using used uses code line "
    "lines test tests name names value values call calls return returns set get let run "
    "bug bugs update updates remove removes rename renames move moves support typo typos "
    "docs doc readme changes changed error errors issue issues case cases it is in of to a an "
    "on at by be or as so if no do up we us".split())


def suggest(root: Path, instruction: str, index: RepoIndex, *, pinned: Iterable[str] = (),
            dropped: Iterable[str] = (), edited: Sequence[str] = (),
            earlier: Sequence[str] = (), never: Sequence[str] = (),
            max_files: int = MAX_FILES) -> Found:
    """The files `instruction` needs beside `pinned` (those a person put in the context), best
    first; `dropped` are never suggested. `edited`: files changed on disk recently, newest
    first; `earlier`: files of earlier turns. Blocking (reads the index, may run git grep)."""
    found = Found(instruction)
    listed = index.files
    instruction = _URL.sub(" ", instruction)  # a link's host and path name no file here
    instruction = _PREFIX.sub(lambda m: f"{m.group(1)}{m.group(2) or ''} ", instruction)
    scores: dict[str, list[Candidate]] = {}

    def add(c: Candidate) -> None:
        scores.setdefault(c.path, []).append(c)

    named = _named_paths(root, instruction, listed)
    for rel, weight, missing in named:
        add(Candidate(rel, Why.NAMED, score=100.0 * weight, missing=missing))
    names = _identifiers(instruction)
    strong = names.strong
    defined = _definers(index, strong, names.weak, names.pairs)
    for name, rel, line, score in defined:
        add(Candidate(rel, Why.DEFINES, name, score, (line,)))
    for name, rel, line, score in _partial_definers(index, instruction):
        add(Candidate(rel, Why.DEFINES, name, score, (line,)))
    for i, rel in enumerate(edited[:5]):
        if rel in listed:
            add(Candidate(rel, Why.EDITED, score=35.0 - 4 * i))
    for rel in earlier:
        if rel in listed:
            add(Candidate(rel, Why.EARLIER, score=25.0))
    # the users of the code-like names: those the repository defines first, then the others
    # (`trimRight()`: a library's name says where it is called; not a part of `debug.log`)
    mine = {name for name, *_ in defined if name in strong}
    others = strong - mine - names.dotted
    used = sorted(mine) + sorted(others, key=lambda n: (-len(n), n))
    for name, rel, lines in _users(root, index, used, _literals(instruction, listed)):
        add(Candidate(rel, Why.USES, name, 20.0, lines))
    for rel, words, score in _path_matches(instruction, listed):
        if score > WEAK_PATH or rel in scores:
            add(Candidate(rel, Why.PATH, " ".join(words), score))
    commits = recent_commits(root, index)
    for rel, share in changelogs(listed, commits):
        add(Candidate(rel, Why.LOG, f"in {share:.0%} of recent commits", 14.0,
                      tuple(range(1, 60, 8))))
    skip = set(pinned) | set(dropped)
    totals = {rel: _total(reasons) for rel, reasons in scores.items() if rel not in skip}
    leaders = [rel for rel in sorted(totals, key=lambda r: (-totals[r], r))[:LEADERS]
               if totals[rel] >= MIN_SCORE]
    for c in _companions(listed, commits, leaders, {*strong, *(f"{a}.{b}" for a, b in
                                                               names.pairs)}):
        add(c)

    ranked: list[Candidate] = []
    for rel, reasons in scores.items():
        if rel in skip:
            continue
        best = max(reasons, key=lambda c: c.score)
        score = _total(reasons)
        follows = [totals[c.detail] for c in reasons
                   if c.why in (Why.TEST, Why.CHANGES) and c.detail in totals]
        if follows:  # a companion goes up to just below the file it comes with
            own = _total([c for c in reasons if c.why not in (Why.TEST, Why.CHANGES)])
            score = max(own, min(score, max(follows) - 1))
        # the relevant lines, those of the strongest reason first
        lines = tuple(dict.fromkeys(n for c in sorted(reasons, key=lambda c: -c.score)
                                    for n in c.lines))
        info = listed.get(rel)
        ranked.append(Candidate(rel, best.why, best.detail, score, lines, best.missing,
                                0 if info is None else info.size // 4))
    ranked.sort(key=lambda c: (-c.score, c.path))
    named_set = {rel for rel, _, _ in named}
    for c in ranked:
        reason = withheld_reason(c.path, listed, never)
        if reason is not None:
            found.withheld.append(Withheld(c.path, reason, c.path in named_set))
        elif c.score >= MIN_SCORE and len(found.files) < max_files:
            found.files.append(c)
    found.files = _with_bodies(index, found.files,
                               {(rel, line) for _, rel, line, score in defined if score >= 40})
    found.withheld.extend(_named_but_unlisted(root, instruction, listed, skip))
    return found


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
    for rel, source in _tests_of(listed, leaders):
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


# --- the instruction's words -----------------------------------------------------------------
class _Names(NamedTuple):
    strong: set[str]  # code-like identifiers
    weak: set[str]  # plain words, alone and joined into identifiers ("parse header")
    pairs: set[tuple[str, str]]  # (owner, member) of dotted names (`Session.get`)
    dotted: set[str]  # code-like only as a part of a dotted name (`debug.log`)


def _identifiers(instruction: str) -> _Names:
    """The names an instruction writes. Code-like: in backticks, with an underscore, a digit
    or a capital inside, called (`style()`), or a part of a dotted name (`req.socket`)."""
    strong: set[str] = set()
    dotted: set[str] = set()
    pairs: set[tuple[str, str]] = set()
    plain: list[str] = []
    for m in _IDENT.finditer(instruction):
        quoted = m.group(1) or m.group(2)
        if quoted is not None:
            for word in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", quoted):
                if len(word) >= 3:
                    strong.add(word)
            pairs.update(_pairs(quoted))
            continue
        token = m.group(0)
        parts = token.split(".")
        if len(parts) > 1 and f".{parts[-1].lower()}" in FILE_SUFFIXES:
            continue  # a file name (the named paths take it)
        pairs.update(_pairs(token))
        called = instruction.startswith("(", m.end())
        for word in parts:
            if len(word) < 3:
                continue
            if called or "_" in word.strip("_") or _CAMEL.search(word) or any(
                    ch.isdigit() for ch in word):
                strong.add(word)
            elif len(parts) > 1:
                dotted.add(word)
            elif word.lower() not in STOP:
                plain.append(word)
    weak: set[str] = set()
    for a, b in zip(plain, plain[1:], strict=False):
        weak.add(f"{a}_{b}".lower())
        weak.add(f"{a}{b}".lower())
    weak |= {w for w in plain if len(w) >= 4}
    dotted -= strong
    return _Names(strong | dotted, weak, pairs, dotted)


def _pairs(token: str) -> set[tuple[str, str]]:
    """(owner, member) of each dotted name in `token` (not a file name)."""
    out: set[tuple[str, str]] = set()
    for name in re.findall(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+", token):
        words = name.split(".")
        if f".{words[-1].lower()}" not in FILE_SUFFIXES:
            out.update(zip(words, words[1:], strict=False))
    return out


def _definers(index: RepoIndex, strong: set[str], weak: set[str],
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
        elif "_" in name or _CAMEL.search(name):
            base = 40.0  # two plain words joined: "parse header" -> parse_header
        else:
            base = 10.0  # a plain word that is also a name: not enough on its own
        share = base / (1 + 0.5 * (len(files) - 1))
        out.extend((name, rel, line, share) for rel, line in files.items())
    return out


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


def _partial_definers(index: RepoIndex, instruction: str
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


def _users(root: Path, index: RepoIndex, names: list[str], literals: Sequence[str] = ()
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


def _literals(instruction: str, listed: dict) -> list[str]:
    """Names written with a hyphen or a slash that name no file: quoted (`content-type`), a
    command-line flag (--list-themes) or a module path (gopkg.in/yaml.v3); then dotted names
    (`req.connection`, ``typing.NoReturn``). Their users are found as for identifiers, as
    written (a package's name leads to the manifest that declares it)."""
    out: dict[str, None] = {}
    for m in _LITERAL.finditer(instruction):
        token = m.group(2).rstrip(".")
        quoted = m.group(0).startswith("`") and m.group(0).endswith("`")
        flag = m.group(1) is not None
        module = "/" in token and "." in token.split("/", 1)[0]
        if (("-" not in token and "/" not in token and not flag) or token in listed
                or len(token) < 4):
            continue
        if quoted or flag or module:
            out[token] = None
    for m in _DOTTED.finditer(instruction):
        token = m.group(0)
        parts = token.split(".")
        if (f".{parts[-1].lower()}" not in FILE_SUFFIXES and min(map(len, parts)) >= 2
                and token not in listed):
            out.setdefault(token, None)
    return list(out)


def _named_paths(root: Path, instruction: str, listed: dict) -> list[tuple[str, float, bool]]:
    """(path, weight, missing) for paths and file names written in the instruction."""
    out: dict[str, tuple[float, bool]] = {}
    by_base: dict[str, list[str]] | None = None
    for m in _PATHISH.finditer(instruction):
        token = _token(m.group(0))
        if not token:
            continue
        if token in listed:
            out[token] = (1.0, False)
            continue
        tail = [rel for rel in listed if rel.endswith("/" + token)] if "/" in token else []
        if not tail:
            if by_base is None:
                by_base = {}
                for rel in listed:
                    by_base.setdefault(rel.rsplit("/", 1)[-1].lower(), []).append(rel)
            tail = by_base.get(token.rsplit("/", 1)[-1].lower(), []) if "/" not in token else []
        if tail:
            for rel in tail[:3]:
                out.setdefault(rel, (1.0 / len(tail[:3]), False))
        elif "/" in token and (root / token).parent.is_dir() and not (root / token).exists():
            out.setdefault(token, (0.5, True))  # to be created where it is named
    return [(rel, w, missing) for rel, (w, missing) in out.items()]


def _token(text: str) -> str:
    """A path as written (`./a.py`, `a.py.`, `b/a.py` from a diff) as a repo path ('' for one
    that climbs out of the repository)."""
    text = text.rstrip(".").removeprefix("./").lstrip("/")
    return "" if ".." in text.split("/") else text


def _named_but_unlisted(root: Path, instruction: str, listed: dict,
                        skip: set[str]) -> list[Withheld]:
    """Files the instruction names that exist but are not listed (git ignores them, or they
    are in a folder never read)."""
    out: list[Withheld] = []
    for m in _PATHISH.finditer(instruction):
        token = _token(m.group(0))
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


_SCRIPT = frozenset({".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts"})


def _language(rel: str) -> str:
    """A file's suffix, the same for JavaScript and TypeScript (a test is in its code's)."""
    suffix = os.path.splitext(rel)[1].lower()
    return ".js" if suffix in _SCRIPT else suffix


def _tests_of(listed: dict, paths: Sequence[str]) -> list[tuple[str, str]]:
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


def _bases(word: str) -> set[str]:
    """The word without an English ending (`diffing`: diff, `renders`: render)."""
    out = set()
    for end in ("ing", "ed", "es", "s"):
        if word.endswith(end) and len(word) - len(end) >= 4 and not word.endswith("ss"):
            base = word[: -len(end)]
            out.add(base)
            if len(base) >= 5 and base[-1] == base[-2]:
                out.add(base[:-1])  # diffing: diff
    return out


def _path_matches(instruction: str, listed: dict) -> list[tuple[str, list[str], float]]:
    """(path, matched words, score) for files whose path holds words of the instruction."""
    words = {w.lower() for w in re.findall(r"[A-Za-z][A-Za-z0-9]{2,}", instruction)}
    words -= STOP
    words |= {base for w in words for base in _bases(w)} - STOP
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
