"""Automatic context: the files an instruction needs, each with the reason it was chosen.

    found = suggest(root, "rename parse_header to parse_head", index, pinned=["a.py"])
    found.files      # [Candidate("http/utils.py", Why.DEFINES, "parse_header", ...), ...]
    found.withheld   # [Withheld(".env", "looks like a secret (.env*)", named=True)]

Reasons, strongest first: the instruction names the file (a path or a file name); the file
defines an identifier the instruction names (the index of definitions); the file was edited on
disk recently (the watcher, or git's uncommitted changes); an earlier turn showed or changed it;
the file uses an identifier the instruction names and the repository defines (git grep); its
path holds words of the instruction. A file git ignores, a link that leaves the repository, a
binary or huge file, and a file that looks like a secret (`SECRET_PATTERNS`, `[context] never`)
is never chosen; named in the instruction, it is listed in `withheld` with the reason, so a
front end can say how to add it by hand.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

from .symbols import SOURCE_SUFFIXES

if TYPE_CHECKING:
    from .index import RepoIndex


class Why(StrEnum):
    NAMED = "named"  # the instruction names the file
    DEFINES = "defines"  # it defines an identifier the instruction names
    EDITED = "edited"  # changed on disk recently
    EARLIER = "earlier"  # an earlier turn showed or changed it
    USES = "uses"  # it uses an identifier the instruction names
    PATH = "path"  # its path holds words of the instruction


@dataclass(frozen=True, slots=True)
class Candidate:
    path: str
    why: Why
    detail: str = ""  # the identifier or the words
    score: float = 0.0
    lines: tuple[int, ...] = ()  # relevant lines (definitions, uses): shown if it is cut
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
MAX_DEFINERS = 6  # a name defined in more files than this says little about where to look
MAX_USERS = 8  # files using one identifier, at most
_PATHISH = re.compile(r"[\w.\-/]*[\w\-]\.[A-Za-z][\w]{0,7}\b|[\w.\-]+/[\w.\-/]+"
                      r"|(?<![\w/.])\.[A-Za-z][\w.\-]*")
_IDENT = re.compile(r"`([^`\n]{2,80})`|[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_SPLIT = re.compile(r"[/._\-\s]+")
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
    scores: dict[str, list[Candidate]] = {}

    def add(c: Candidate) -> None:
        scores.setdefault(c.path, []).append(c)

    named = _named_paths(root, instruction, listed)
    for rel, weight, missing in named:
        add(Candidate(rel, Why.NAMED, score=100.0 * weight, missing=missing))
    strong, weak = _identifiers(instruction)
    defined = _definers(index, strong, weak)
    for name, rel, line, score in defined:
        add(Candidate(rel, Why.DEFINES, name, score, (line,)))
    for i, rel in enumerate(edited[:5]):
        if rel in listed:
            add(Candidate(rel, Why.EDITED, score=35.0 - 4 * i))
    for rel in earlier:
        if rel in listed:
            add(Candidate(rel, Why.EARLIER, score=25.0))
    used = {name for name, *_ in defined if name in strong}
    for name, rel, lines in _users(root, index, sorted(used)):
        add(Candidate(rel, Why.USES, name, 20.0, lines))
    for rel, words, score in _path_matches(instruction, listed):
        add(Candidate(rel, Why.PATH, " ".join(words), score))

    skip = set(pinned) | set(dropped)
    ranked: list[Candidate] = []
    for rel, reasons in scores.items():
        if rel in skip:
            continue
        best = max(reasons, key=lambda c: c.score)
        total = sum(max((c.score for c in reasons if c.why == w), default=0.0) for w in Why)
        lines = tuple(sorted({n for c in reasons for n in c.lines}))
        info = listed.get(rel)
        ranked.append(Candidate(rel, best.why, best.detail, total, lines, best.missing,
                                0 if info is None else info.size // 4))
    ranked.sort(key=lambda c: (-c.score, c.path))
    named_set = {rel for rel, _, _ in named}
    for c in ranked:
        reason = withheld_reason(c.path, listed, never)
        if reason is not None:
            found.withheld.append(Withheld(c.path, reason, c.path in named_set))
        elif c.score >= MIN_SCORE and len(found.files) < max_files:
            found.files.append(c)
    found.withheld.extend(_named_but_unlisted(root, instruction, listed, skip))
    return found


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
def _identifiers(instruction: str) -> tuple[set[str], set[str]]:
    """(code-like identifiers, plain words joined into identifiers) named in the instruction.
    Code-like: in backticks, or with an underscore, a dot, a digit or a capital inside."""
    strong: set[str] = set()
    plain: list[str] = []
    for m in _IDENT.finditer(instruction):
        quoted = m.group(1)
        if quoted is not None:
            for word in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", quoted):
                if len(word) >= 3:
                    strong.add(word)
            continue
        token = m.group(0)
        parts = token.split(".")
        if len(parts) > 1 and f".{parts[-1].lower()}" in FILE_SUFFIXES:
            continue  # a file name (the named paths take it)
        for word in parts:
            if len(word) < 3:
                continue
            if "_" in word.strip("_") or _CAMEL.search(word) or any(ch.isdigit() for ch in word):
                strong.add(word)
            elif word.lower() not in STOP:
                plain.append(word)
    weak: set[str] = set()
    for a, b in zip(plain, plain[1:], strict=False):
        weak.add(f"{a}_{b}".lower())
        weak.add(f"{a}{b}".lower())
    weak |= {w for w in plain if len(w) >= 4}
    return strong, weak


def _definers(index: RepoIndex, strong: set[str], weak: set[str]
              ) -> list[tuple[str, str, int, float]]:
    """(name, path, line, score) for files defining a named identifier."""
    out: list[tuple[str, str, int, float]] = []
    by_name: dict[str, dict[str, int]] = {}
    for rel, d in index.defining(strong | weak, any_case=True):
        by_name.setdefault(d.name, {}).setdefault(rel, d.line)
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


def _users(root: Path, index: RepoIndex, names: list[str]
           ) -> list[tuple[str, str, tuple[int, ...]]]:
    """(name, path, lines) for files that mention one of `names` as a whole word."""
    if not names:
        return []
    from ..git import run_git

    args = ["grep", "-n", "-I", "-w", "-F", "--untracked", "--no-color"]
    for name in names[:5]:
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
            for name in names[:5]:
                if re.search(rf"\b{re.escape(name)}\b", text):
                    hits.setdefault(name, {}).setdefault(rel, []).append(line)
    out: list[tuple[str, str, tuple[int, ...]]] = []
    for name, files in hits.items():
        ranked = sorted(files.items(), key=lambda kv: -len(kv[1]))[:MAX_USERS]
        out.extend((name, rel, tuple(lines[:50])) for rel, lines in ranked)
    return out


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
    """A path as written (`./a.py`, `a.py.`, `b/a.py` from a diff) as a repo path."""
    text = text.rstrip(".").removeprefix("./")
    return text.removeprefix("/")


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


def _path_matches(instruction: str, listed: dict) -> list[tuple[str, list[str], float]]:
    """(path, matched words, score) for files whose path holds words of the instruction."""
    words = {w.lower() for w in re.findall(r"[A-Za-z][A-Za-z0-9]{2,}", instruction)}
    words -= STOP
    if not words:
        return []
    stems: dict[str, int] = {}
    parts_of: dict[str, tuple[str, list[str]]] = {}
    for rel in listed:
        base = os.path.splitext(rel)[0]
        stem = base.rsplit("/", 1)[-1].lower().lstrip(".")
        parts_of[rel] = (stem, [p.lower() for p in _SPLIT.split(base) if p])
        stems[stem] = stems.get(stem, 0) + 1
    out = []
    for rel, (stem, parts) in parts_of.items():
        matched = [p for p in dict.fromkeys(parts) if p in words]
        if not matched:
            continue
        stem_hit = stem in words and stems[stem] <= 3  # the file's own name, and rare
        if len(matched) >= 2 or stem_hit:
            score = 6.0 * len(matched) + (6.0 if stem_hit else 0.0)
            out.append((rel, matched, score))
    out.sort(key=lambda t: -t[2])
    return out[:MAX_FILES]
