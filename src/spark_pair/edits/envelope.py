"""The `*** Begin Patch` envelope Codex-family models emit, read line by line into the parser.

Grammar: `*** Begin Patch`, then file sections, then `*** End Patch`. A section is
`*** Add File: P` (every line `+text`), `*** Delete File: P`, or `*** Update File: P`
(optionally `*** Move to: Q`) followed by chunks: `@@` or `@@ anchor` then ` `/`-`/`+` lines,
optionally ending with `*** End of File`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .parser import DiffParser


@dataclass(slots=True)
class EnvelopeState:
    mode: str = ""  # "" | add | update | delete


def _new_file(parser: DiffParser, **kw: object) -> None:
    from .parser import _File

    parser._end_file()
    parser._begin(_File(**kw))  # type: ignore[arg-type]


def line(parser: DiffParser, state: EnvelopeState, text: str) -> bool:
    """Handle one envelope line; False once the envelope is over."""
    from .parser import DEV_NULL, Hunk, parse_hunk_header

    stripped = text.strip()
    if stripped == "*** End Patch":
        parser._end_file()
        return False
    for tag, mode in (("*** Add File:", "add"), ("*** Update File:", "update"),
                      ("*** Delete File:", "delete")):
        if text.startswith(tag):
            path = text[len(tag):].strip()
            state.mode = mode
            if mode == "add":
                _new_file(parser, old=DEV_NULL, new=path, create_lines=[])
                parser._start_hunk(Hunk(0, None, 1, None))
            elif mode == "delete":
                _new_file(parser, old=path, new=DEV_NULL)
                parser._end_file()
            else:
                _new_file(parser, old=path, new=path)
            return True
    f = parser._file
    if f is None:
        return True  # stray text inside the envelope
    if text.startswith("*** Move to:") and state.mode == "update" and not f.started:
        f.rename_to = text[len("*** Move to:"):].strip()
        f.rename_from = f.old
        return True
    if text.startswith("*** End of File") or text.startswith("*** "):
        return True
    if state.mode == "add":
        if text.startswith("+"):
            assert f.create_lines is not None
            f.create_lines.append(text[1:])
            parser._add(text)
        return True
    if state.mode != "update":
        return True
    if text.startswith("@@"):
        h = parser._hunk
        if h is not None and not h.lines:  # stacked anchors: '@@ class A' then '@@ def f():'
            extra = text[2:].strip()
            h.section = f"{h.section} {extra}".strip() if extra else h.section
            return True
        hunk = parse_hunk_header(text)
        if hunk.old_start is None:
            hunk.section = text[2:].strip()
        parser._start_hunk(hunk)
        return True
    if text[:1] in (" ", "-", "+", "\\") or text == "":
        if parser._hunk is None:
            parser._start_hunk(Hunk(None, None, None, None))
        parser._add(text if text else " ")
    return True
