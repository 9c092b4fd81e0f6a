"""What an instruction writes: code-like names, dotted names, packages and flags, paths.

    names = identifiers("rename `parse_header` in Session.get")
    names.strong   # {"parse_header", "Session", "get"}
    named_paths(root, "fix src/a.py", index.files)   # [("src/a.py", 1.0, False)]
"""

from __future__ import annotations

import keyword
import re
from pathlib import Path
from typing import NamedTuple

from .symbols import SOURCE_SUFFIXES

FILE_SUFFIXES = frozenset({*SOURCE_SUFFIXES, ".md", ".rst", ".txt", ".json", ".toml", ".yaml",
                           ".yml", ".cfg", ".ini", ".html", ".css", ".scss", ".lock", ".xml",
                           ".csv", ".sql", ".env", ".pem", ".key", ".tcss", ".svg"})
PATHISH = re.compile(r"[\w.\-/]*[\w\-]\.[A-Za-z][\w]{0,7}\b|[\w.\-]+/[\w.\-/]+"
                      r"|(?<![\w/.])\.[A-Za-z][\w.\-]*")
URL = re.compile(r"\b[A-Za-z][A-Za-z0-9+.\-]*://\S*")
_IDENT = re.compile(r"``([^`\n]{2,80})``|`([^`\n]{2,80})`"
                    r"|[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
# a commit-style prefix, `fix(parser): ...` (its type is no call; its scope names a place)
COMMIT_PREFIX = re.compile(r"^([ \t]*(?:[-*][ \t]+)?)(?:feat|fix|chore|docs?|tests?|refactor|"
                           r"perf|ci|build|style|dx|sec|types|lint|deps)(?:\(([^)\n]*)\))?!?:"
                           r"[ \t]", re.M | re.I)
# a name with a hyphen or a slash (`content-type`, gopkg.in/yaml.v3), or a flag (--verbose)
_LITERAL = re.compile(r"`?(?<![\w./-])(--)?([A-Za-z0-9_][\w.]*(?:[-/][\w.]+)+"
                      r"|(?<=--)[A-Za-z]\w+)`?")
_DOTTED = re.compile(r"(?<![\w./-])[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?![\w./-]*\w)")
CAMEL = re.compile(r"[a-z0-9][A-Z]")
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

# the reserved words of the languages a repository holds: written in a quoted line of code
# (`import calc; assert x`), never a name to look for
KEYWORDS = frozenset({*keyword.kwlist, *"""abstract auto await break case catch char const
    continue default defer delete do done elif else enum esac export extends extern fi final
    fn for func function go goto if impl implements import in instanceof interface let local
    loop mod mut namespace new nil null package private protected pub public readonly require
    return select static struct switch then throw throws typedef typeof undefined unsafe use
    var void volatile where while yield""".split()})
# a fix round's instruction quotes its check command (store.sessions.FIX_ROUND): the programs
# it runs and its flags are the check's, not names of the code
CHECK_COMMAND = re.compile(r"^After your change the check `([^`\n]*)`")


def check_words(instruction: str) -> tuple[set[str], tuple[int, int]]:
    """The programs a fix round's check command runs (the first word of each of its shell
    commands) and where the command is in `instruction` ((0, 0): no fix round)."""
    m = CHECK_COMMAND.match(instruction)
    if m is None:
        return set(), (0, 0)
    programs = {part.split()[0].rsplit("/", 1)[-1]
                for part in re.split(r"[;&|]+", m.group(1)) if part.split()}
    return programs, m.span(1)


class Names(NamedTuple):
    strong: set[str]  # code-like identifiers
    weak: set[str]  # plain words, alone and joined into identifiers ("parse header")
    pairs: set[tuple[str, str]]  # (owner, member) of dotted names (`Session.get`)
    dotted: set[str]  # code-like only as a part of a dotted name (`debug.log`)


def identifiers(instruction: str) -> Names:
    """The names an instruction writes. Code-like: in backticks, with an underscore, a digit
    or a capital inside, called (`style()`), or a part of a dotted name (`req.socket`)."""
    strong: set[str] = set()
    dotted: set[str] = set()
    pairs: set[tuple[str, str]] = set()
    plain: list[str] = []
    programs, _ = check_words(instruction)
    for m in _IDENT.finditer(instruction):
        quoted = m.group(1) or m.group(2)
        if quoted is not None:
            for word in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", quoted):
                if len(word) >= 3 and word not in KEYWORDS and word not in programs:
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
            if len(word) < 3 or word in programs:
                continue
            if word in KEYWORDS:  # `import(`, `return(`: the language's, no name
                if word.lower() not in STOP:
                    plain.append(word)
                continue
            if called or "_" in word.strip("_") or CAMEL.search(word) or any(
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
    return Names(strong | dotted, weak, pairs, dotted)


def _pairs(token: str) -> set[tuple[str, str]]:
    """(owner, member) of each dotted name in `token` (not a file name)."""
    out: set[tuple[str, str]] = set()
    for name in re.findall(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+", token):
        words = name.split(".")
        if f".{words[-1].lower()}" not in FILE_SUFFIXES:
            out.update(zip(words, words[1:], strict=False))
    return out


def literals(instruction: str, listed: dict) -> list[str]:
    """Names written with a hyphen or a slash that name no file: quoted (`content-type`), a
    command-line flag (--list-themes) or a module path (gopkg.in/yaml.v3); then dotted names
    (`req.connection`, ``typing.NoReturn``). Their users are found as for identifiers, as
    written (a package's name leads to the manifest that declares it)."""
    out: dict[str, None] = {}
    _, (start, end) = check_words(instruction)
    for m in _LITERAL.finditer(instruction):
        token = m.group(2).rstrip(".")
        quoted = m.group(0).startswith("`") and m.group(0).endswith("`")
        flag = m.group(1) is not None
        if flag and start <= m.start() < end:
            continue  # the check command's own flag
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


def named_paths(root: Path, instruction: str, listed: dict) -> list[tuple[str, float, bool]]:
    """(path, weight, missing) for paths and file names written in the instruction."""
    out: dict[str, tuple[float, bool]] = {}
    by_base: dict[str, list[str]] | None = None
    for m in PATHISH.finditer(instruction):
        token = path_token(m.group(0))
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


def path_token(text: str) -> str:
    """A path as written (`./a.py`, `a.py.`, `b/a.py` from a diff) as a repo path ('' for one
    that climbs out of the repository)."""
    text = text.rstrip(".").removeprefix("./").lstrip("/")
    return "" if ".." in text.split("/") else text
