"""The second look: what the model asked for (`NEED: path` or `NEED: symbol` lines), found in
the repository and sent in one follow-up message, within a token cap.

    found = look_up(root, index, ["pkg/util.py", "parse_header"], cap=1875, ...)
    found.text     # the follow-up message (what was found, what was not, then "write the diff")
    found.files    # each file sent, with its reason ("asked by the model")
    found.refused  # (name, why) of each name not sent

Blocking (reads files, asks the index): call it in a thread.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from ..base.errors import SparkPairError
from ..protocol.metrics import estimate_tokens

if TYPE_CHECKING:  # (the prompt's rule is read at start-up: the index loads with a look)
    from .index import RepoIndex

MAX_NAMES = 3  # NEED lines looked up per turn, at most
MAX_DEF_LINES = 300  # a definition's region, at most
ASKED = "asked by the model"
LOOK_RULE = """\
- If the files shown lack something the edit needs (a file or a definition not shown), you may
  instead answer with only up to 3 lines `NEED: path/to/file.py` or `NEED: symbol_name`, nothing
  else; you then get them and write the diff. Ask at most once; when the context suffices,
  write the diff at once.
"""
FOLLOW_UP = "You asked for: "  # what the follow-up message begins with
_PATHLIKE = re.compile(r"/|\.[A-Za-z0-9]{1,8}$")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.:]*$")

Reader = Callable[[str], "str | None"]  # rel -> text (None: missing); raises SparkPairError


class Sent(NamedTuple):
    """One file the follow-up sends: its reason, tokens, how ("whole" or "regions") and the
    lines (1-based, inclusive) it shows."""

    path: str
    reason: str
    tokens: int
    shown: str
    regions: tuple[tuple[int, int], ...]


class LookedUp(NamedTuple):
    """What a look found for the names the model asked for, and the follow-up that sends it."""

    asked: tuple[str, ...]
    files: tuple[Sent, ...]
    refused: tuple[tuple[str, str], ...]  # (name, why it was not sent)
    text: str  # the follow-up message
    tokens: int  # what the files sent took
    texts: dict[str, str]  # the whole text of each file sent (for the stale checks)


def look_up(root: Path, index: RepoIndex, names: Sequence[str], *, cap: int, read: Reader,
            shown_whole: Sequence[str] = (), never: Sequence[str] = ()) -> LookedUp:
    """Find each of `names` (a path, else a symbol's definition) and fit them in `cap` tokens.
    `shown_whole`: files the request already showed whole (named, not sent again)."""
    from .prompt import _merge, _region_block, build_context

    asked = tuple(dict.fromkeys(n.strip().strip("`'\"") for n in names if n.strip()))
    asked = asked[:MAX_NAMES]
    if not index.ready:
        index.refresh()
    wanted: dict[str, tuple[str, list[tuple[int, int]]]] = {}  # path -> (reason, regions)
    refused: list[tuple[str, str]] = []
    read_once: dict[str, str | None] = {}

    def take(rel: str) -> str | None:
        """The file's text, read once (None: it cannot be sent, said in `refused`)."""
        if rel not in read_once:
            try:
                read_once[rel] = read(rel)
            except SparkPairError as exc:
                read_once[rel] = None
                refused.append((rel, exc.message))
            else:
                if read_once[rel] is None:
                    refused.append((rel, "not found"))
        return read_once[rel]
    for name in asked:
        if _PATHLIKE.search(name):
            rel, why = _path_of(root, index, name, never)
            if rel is None:
                refused.append((name, why))
            elif rel in shown_whole:
                refused.append((name, "already shown in full above"))
            else:
                wanted.setdefault(rel, (ASKED, []))
            continue
        if not _NAME.match(name):
            refused.append((name, "not a file path or a name of the code"))
            continue
        symbol = name.replace("::", ".").rsplit(".", 1)[-1]
        defs = [(p, d) for p, d in index.defining([symbol])
                if _path_of(root, index, p, never)[0] == p]
        if not defs:
            refused.append((name, "not found: no file or definition by that name in the "
                                  "repository"))
            continue
        for path, d in defs[:2]:  # the first two definitions of a common name, at most
            text = None if path in shown_whole else take(path)
            if text is None:
                continue
            span = _definition(text.splitlines(), d.line)
            reason, spans = wanted.setdefault(path, (f"{ASKED}: defines {symbol}", []))
            spans.append(span)
        if all(p in shown_whole for p, _ in defs[:2]):
            refused.append((name, "already shown in full above"))
    files: list[Sent] = []
    texts: dict[str, str] = {}
    blocks: list[str] = []
    left = cap
    for rel, (reason, spans) in wanted.items():
        text = take(rel)
        if text is None:
            continue
        lines = text.splitlines()
        block, regions = "", list(_merge(spans))
        if regions:
            block = _region_block(rel, lines, regions)
        if not block or estimate_tokens(block) > left:  # a file, or a definition too large
            focus = {rel: [a for a, _ in regions]} if regions else None
            ctx = build_context(root, [rel], left, query=" ".join(asked), focus=focus,
                                read=_given(text))
            block = ctx.text
            regions = list(ctx.partial.get(rel, ()))
            if not block:
                refused.append((rel, "over the token cap of the second look"))
                continue
        tokens = estimate_tokens(block)
        left -= tokens
        whole = not regions
        files.append(Sent(rel, reason, tokens, "whole" if whole else "regions",
                          ((1, max(1, len(lines))),) if whole else tuple(regions)))
        texts[rel] = text
        blocks.append(block)
    return LookedUp(asked, tuple(files), tuple(refused), follow_up_text(asked, blocks, refused),
                 cap - left, texts)


def follow_up_text(asked: Sequence[str], blocks: Sequence[str],
                   refused: Sequence[tuple[str, str]]) -> str:
    out = [FOLLOW_UP + ", ".join(asked) + "\n"]
    if blocks:
        out.append("\nFiles:\n\n" + "".join(blocks))
    for name, why in refused:
        out.append(f"\nNot sent: {name} ({why})")
    out.append("\n\nNow write the unified diff for the instruction above; do not ask again.\n")
    return "".join(out)


def _path_of(root: Path, index: RepoIndex, name: str, never: Sequence[str]
             ) -> tuple[str | None, str]:
    """(the repository path `name` names, '') or (None, why it is not sent)."""
    from ..base.dirs import own_file
    from ..base.errors import PathRefused
    from ..edits.paths import confine
    from .candidates import withheld_reason

    try:
        rel, full = confine(root, name.removeprefix("./"))
    except PathRefused as exc:
        return None, exc.message.removeprefix(f"refused path {name!r}: ")
    why = own_file(full)
    if why is not None:
        return None, why
    listed = index.files
    if rel not in listed:
        return None, "not found: no such file in the repository (or git ignores it)"
    why = withheld_reason(rel, listed, never)
    return (None, why) if why else (rel, "")


def _definition(lines: list[str], line: int) -> tuple[int, int]:
    """The lines of the definition starting at `line` (1-based): its decorators, then down to
    the last line before the next one indented no deeper (a closing brace included)."""
    n = len(lines)
    line = max(1, min(line, n))
    head = lines[line - 1]
    indent = len(head) - len(head.lstrip())
    first = line
    while first > 1 and lines[first - 2].strip().startswith("@"):
        first -= 1
    last = line
    for i in range(line + 1, min(n, line + MAX_DEF_LINES) + 1):
        text = lines[i - 1]
        if not text.strip():
            continue
        if len(text) - len(text.lstrip()) <= indent:
            if text.lstrip()[:1] in ("}", ")", "]") or text.strip() == "end":
                last = i
            break
        last = i
    return first, last


def _given(text: str) -> Reader:
    """A reader that gives `text` (the file already read)."""
    return lambda rel: text
