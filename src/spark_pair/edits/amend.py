"""Amending a proposed change by hand: the text a person saved, turned back into a change.

A person edits the *resulting* text of one hunk (its context and added lines, as the file will
read) or the whole content of a created file. `amend_hunk` keeps the hunk's old side exactly
(so it is located and checked as before) and rebuilds its new side from the saved text, so
what gets applied is exactly what was saved. Unchanged text means no amendment (None).
"""

from __future__ import annotations

import difflib

from ..base.errors import EditError
from .ops import Hunk


def hunk_result(hunk: Hunk) -> str:
    """The text a hunk's region will have once applied (what the editor opens)."""
    body = "\n".join(hunk.new_lines)
    return body if hunk.no_newline_new or not body else body + "\n"


def _check_text(text: str, what: str) -> None:
    if "\x00" in text:
        raise EditError(f"the amended {what} holds a NUL byte; nothing was changed",
                        hint="save it as plain text and try again")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise EditError(f"the amended {what} is not valid UTF-8 text; nothing was changed",
                        hint="save it as UTF-8 and try again") from exc


def amend_hunk(hunk: Hunk, saved: str) -> Hunk | None:
    """A hunk with the same old side whose new side is `saved` (None if nothing changed).

    A missing final newline counts only where the hunk already ends the file without one;
    carriage returns are dropped (applying keeps each file's own line endings).
    """
    _check_text(saved, "hunk")
    at_eof_without_nl = hunk.no_newline_new or hunk.no_newline_old
    no_nl = bool(saved) and not saved.endswith("\n") and at_eof_without_nl
    body = saved[:-1] if saved.endswith("\n") else saved
    new = [ln.removesuffix("\r") for ln in body.split("\n")] if saved else []
    if new == hunk.new_lines and no_nl == hunk.no_newline_new:
        return None
    old = hunk.old_lines
    lines: list[str] = []
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            lines += [" " + ln for ln in old[i1:i2]]
            continue
        lines += ["-" + ln for ln in old[i1:i2]]
        lines += ["+" + ln for ln in new[j1:j2]]
    return Hunk(hunk.old_start, hunk.old_len, hunk.new_start, len(new), lines, hunk.section,
                hunk.no_newline_old, no_nl)


def amend_content(content: str, saved: str) -> str | None:
    """A created file's amended content (None if nothing changed)."""
    _check_text(saved, "file")
    saved = saved.replace("\r\n", "\n") if "\r\n" not in content else saved
    return None if saved == content else saved
