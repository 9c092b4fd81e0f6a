"""A diff's file headers (the `diff` line, `---`/`+++`, rename, copy and mode lines): what one
file's section says, and where its lines disagree about which file it is. The parser's part for
headers (edits.parser)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..base.errors import IncompleteReply, ParseError
from ..base.printable import shown
from .ops import Hunk
from .syntax import DEV_NULL, clean_path, unquote

_CUT_HINT = IncompleteReply.default_hint


def strip_prefixes(old: str | None, new: str | None) -> tuple[str | None, str | None]:
    def strip(p: str | None, pre: str) -> str | None:
        return p[2:] if p and p.startswith(pre) and len(p) > 2 else p
    if old == DEV_NULL or new == DEV_NULL:
        return strip(strip(old, "a/"), "b/"), strip(strip(new, "b/"), "a/")
    if old and new and old.startswith("a/") and new.startswith("b/"):
        return old[2:], new[2:]
    return old, new


@dataclass(slots=True)
class FileHead:
    old: str | None = None
    new: str | None = None
    created: bool = False
    deleted: bool = False
    rename_from: str | None = None
    rename_to: str | None = None
    hunks: list[Hunk] | None = None
    index: int | None = None  # the operation's index, once announced
    shown_hunks: int = 0  # hunks that got a line (the operation's hunks)
    headed: bool = False  # saw the ---/+++ pair
    binary: bool = False  # a `Binary files` / `GIT binary patch` section
    moves: tuple[str, ...] = ()  # the `rename from/to`, `copy from/to` lines seen
    git: tuple[str | None, str | None] | None = None  # the `diff` line's paths (prefixes stripped)
    pair: tuple[str | None, str | None] | None = None  # the `---`/`+++` lines' paths (likewise)
    copied: str | None = None  # the `copy from` path


def check_moves(f: FileHead, name: str) -> None:
    """git writes `rename from` with `rename to` (and `copy from` with `copy to`): one without
    the other is a header cut short, never a rename to a name guessed from other lines."""
    for verb in ("rename", "copy"):
        pair = (f"{verb} from", f"{verb} to")
        seen = [m for m in pair if m in f.moves]
        if len(seen) == 1:
            missing = pair[1] if seen[0] == pair[0] else pair[0]
            raise IncompleteReply(f"the {verb} header of {name} has a '{seen[0]}' line but no "
                                  f"'{missing}' line: the header was cut short", hint=_CUT_HINT)


def same_file(f: FileHead, pair: tuple[str | None, str | None],
               name: Callable[[FileHead], str]) -> bool:
    """Whether ---/+++ lines belong to the header-only section `f` (a `diff --git` line, maybe
    with mode or rename lines): they say what its header says. Lines naming none of its files
    begin the next file after a header-only rename, delete, create or binary section. After a
    bare `diff` line, or naming one of its files but saying something else, they are a
    ParseError (never an operation on a file the lines do not describe)."""
    clash = disagreement(f, pair)
    if clash is None:
        return True
    whole = f.created or f.deleted or f.rename_from or f.rename_to or f.binary or f.copied
    named = {path_key(p) for p in (*(f.git or ()), f.rename_from, f.rename_to) if p}
    # a bare `diff` line (maybe with index or mode lines) is nothing alone: the lines are its
    if not whole or named & {path_key(p) for p in pair if p and p != DEV_NULL}:
        raise ParseError(f"the diff for {name(f)}: {clash}", hint=CLASH_HINT)
    return False


CLASH_HINT = ("nothing was written: the reply does not say clearly which file it changes; "
               "regenerate the turn")
_Claim = tuple[str, str | None, bool]  # (which line, the path it names, a `diff` line's path)


def disagreement(f: FileHead, pair: tuple[str | None, str | None] | None) -> str | None:
    """What the header lines of one file (the `diff` line, `rename from/to`, `new/deleted file
    mode`, `---`/`+++`) say differently about its old or new file, or None when they agree.
    The `diff` line names the file on both sides, also for a new or deleted one."""
    if not (f.created or f.deleted or f.rename_from or f.rename_to) and len(
            {p for p in (*(f.git or ()), *(pair or ())) if p}) <= 1:
        return None  # the common case: every line names one file (a modify)
    old: list[_Claim] = []
    new: list[_Claim] = []
    if f.git is not None:
        old.append(("the 'diff' line", f.git[0], True))
        new.append(("the 'diff' line", f.git[1], True))
    if f.rename_from:
        old.append(("'rename from'", f.rename_from, False))
    if f.rename_to:
        new.append(("'rename to'", f.rename_to, False))
    if f.created:
        old.append(("'new file mode'", DEV_NULL, False))
    if f.deleted:
        new.append(("'deleted file mode'", DEV_NULL, False))
    if pair is not None:
        old.append(("the '---' line", pair[0], False))
        new.append(("the '+++' line", pair[1], False))
    old_name, clash = _side(old)
    if clash is None:
        new_name, clash = _side(new)
    if clash is not None:
        return clash
    if old_name == DEV_NULL and new_name == DEV_NULL:
        return "the header names /dev/null as both the old and the new file"
    for claims, other in ((old, new_name), (new, old_name)):
        gits = [p for _, p, git in claims if git and p]
        if gits and _side(claims)[0] == DEV_NULL and other not in (None, DEV_NULL) and (
                path_key(gits[0]) != path_key(other)):
            return (f"the 'diff' line names {shown(gits[0])}, the other header lines "
                    f"{shown(other)}")
    return None


def path_key(path: str | None) -> str | None:
    """A path as compared between header lines: `./a.py` and `a.py` are one file."""
    if not path or path == DEV_NULL or ("./" not in path and "//" not in path):
        return path
    return "/".join(p for p in path.split("/") if p not in ("", ".")) or path


def _named(path: str | None) -> str:
    return "no file (/dev/null)" if path == DEV_NULL else shown(path or "")


def _side(claims: list[_Claim]) -> tuple[str | None, str | None]:
    """(the path one side's claims agree on, or None; what two of them say differently)."""
    null = [c for c in claims if c[1] == DEV_NULL]
    named = [c for c in claims if c[1] and c[1] != DEV_NULL and not (null and c[2])]
    first = null[0] if null else (named[0] if named else None)
    for c in (*null, *named):
        if first is not None and path_key(c[1]) != path_key(first[1]):
            return None, (f"its header lines disagree about which file it is: {first[0]} names "
                          f"{_named(first[1])}, {c[0]} names {_named(c[1])}")
    return (first[1] if first else None), None


def header_pair(minus: str, plus: str) -> bool:
    """'--- a/x' + '+++ b/x' (or /dev/null on one side): a file header, whatever a hunk's
    counts say (models get counts wrong far more often than files hold such line pairs)."""
    old, new = clean_path(minus[4:]), clean_path(plus[4:])
    if DEV_NULL in (old, new):
        return (old == DEV_NULL) != (new == DEV_NULL)
    return old.startswith("a/") and new.startswith("b/") and old[2:] == new[2:]


def git_paths(line: str) -> tuple[str | None, str | None]:
    rest = line.split(" ", 2)[2] if line.count(" ") >= 2 else ""
    quoted = _quoted_pair(rest)
    if quoted is not None:
        return quoted
    if rest.startswith("a/") and " b/" in rest:
        old, new = rest.split(" b/", 1)
        return clean_path(old), "b/" + clean_path(new)
    parts = rest.split()
    if len(parts) == 2:
        return clean_path(parts[0]), clean_path(parts[1])
    return None, None


def _quoted_pair(rest: str) -> tuple[str, str] | None:
    """The two paths of a `diff` line when either is quoted as git quotes a path with special
    or non-ASCII characters (`"a/\\303\\251.py" "b/\\303\\251.py"`), else None."""
    first = unquote(rest)
    if first is not None:
        old, tail = first
        if not tail.startswith(" "):
            return None
        tail = tail.strip()
    else:
        at = rest.find(' "')
        if at < 0:
            return None
        old, tail = clean_path(rest[:at]), rest[at + 1:].strip()
    second = unquote(tail)
    if second is not None and not second[1].strip():
        return old, second[0]
    return (old, clean_path(tail)) if first is not None and tail else None
