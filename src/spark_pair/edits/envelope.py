"""The `*** Begin Patch` envelope Codex-family models emit, read line by line into a Builder.

Grammar: `*** Begin Patch`, then file sections, then `*** End Patch`. A section is
`*** Add File: P` (every line `+text`), `*** Delete File: P`, or `*** Update File: P`
(optionally `*** Move to: Q`) followed by chunks: `@@` or `@@ anchor` then ` `/`-`/`+` lines,
optionally ending with `*** End of File`.

A line that does not fit (a line without `+` in an added file, an unmarked line in an update)
is a ParseError: the file would differ from the text, so nothing is written.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from ..base.errors import ParseError
from ..base.printable import shown
from .ops import Hunk
from .syntax import DEV_NULL, parse_hunk_header


class Builder(Protocol):
    """What the envelope reader drives (the diff parser implements it)."""

    @property
    def open_hunk(self) -> Hunk | None:
        """The hunk lines go into now, None between hunks."""

    @property
    def in_file(self) -> bool:
        """A file section is open."""

    def begin_file(self, old: str, new: str) -> None:
        """End the open file (if any) and start one: old/new as in `---`/`+++` lines."""

    def move_to(self, path: str) -> bool:
        """Make the open file a rename to `path`; False once its changes have begun."""

    def start_hunk(self, hunk: Hunk) -> None:
        """Start a hunk whose line counts are not checked."""

    def add_line(self, line: str) -> None:
        """One ` `/`-`/`+`/`\\` line of the open hunk."""

    def end_file(self) -> None:
        """End the open file (an operation is built from it)."""


@dataclass(slots=True)
class EnvelopeState:
    mode: str = ""  # "" | add | update | delete
    path: str = ""
    blanks: int = 0  # empty lines seen in an added file (a separator only if a `***` follows)


_SECTIONS = (("*** Add File:", "add"), ("*** Update File:", "update"),
             ("*** Delete File:", "delete"))


def _refuse(state: EnvelopeState, what: str, text: str) -> ParseError:
    return ParseError(f"the patch envelope's section for {shown(state.path)} holds {what}: "
                      f"{shown(text[:80])!s}",
                      hint="nothing was written: the file would differ from the reply's text; "
                           "regenerate the turn")


def line(builder: Builder, state: EnvelopeState, text: str) -> bool:
    """Handle one envelope line; False once the envelope is over."""
    if text.startswith("***") or text.strip() == "*** End Patch":
        state.blanks = 0  # empty lines before a marker separate sections
        return _marker(builder, state, text)
    if not builder.in_file:
        return True  # stray text before the first section
    if state.mode == "add":
        if text == "":
            state.blanks += 1
            return True
        if not text.startswith("+") or state.blanks:
            raise _refuse(state, "a line without '+' in an added file", text or " ")
        builder.add_line(text)
        return True
    if state.mode != "update":
        return True  # a deleted file's old lines, if the model wrote them
    if text.startswith("@@"):
        h = builder.open_hunk
        if h is not None and not h.lines:  # stacked anchors: '@@ class A' then '@@ def f():'
            extra = text[2:].strip()
            h.section = f"{h.section} {extra}".strip() if extra else h.section
            return True
        hunk = parse_hunk_header(text)
        if hunk.old_start is None:
            hunk.section = text[2:].strip()
        builder.start_hunk(hunk)
        return True
    if text[:1] in (" ", "-", "+", "\\") or text == "":
        if builder.open_hunk is None:
            builder.start_hunk(Hunk(None, None, None, None))
        builder.add_line(text if text else " ")
        return True
    raise _refuse(state, "a line without a ' ', '-' or '+' marker (a context line that lost its "
                         "leading space?)", text)


def _marker(builder: Builder, state: EnvelopeState, text: str) -> bool:
    if text.strip() == "*** End Patch":
        builder.end_file()
        return False
    for tag, mode in _SECTIONS:
        if text.startswith(tag):
            path = text[len(tag):].strip()
            state.mode, state.path = mode, path
            if mode == "add":
                builder.begin_file(DEV_NULL, path)
                builder.start_hunk(Hunk(0, None, 1, None))
            elif mode == "delete":
                builder.begin_file(path, DEV_NULL)
                builder.end_file()
            else:
                builder.begin_file(path, path)
            return True
    if text.startswith("*** Move to:") and state.mode == "update" and builder.in_file:
        if not builder.move_to(text[len("*** Move to:"):].strip()):
            raise _refuse(state, "a '*** Move to:' after its changes began", text)
    return True  # '*** End of File' and other markers
