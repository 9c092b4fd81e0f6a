"""Line syntax shared by the unified-diff parser and the `*** Begin Patch` envelope reader."""

from __future__ import annotations

import re

from ..base.errors import ParseError
from ..base.printable import shown
from .ops import Hunk

DEV_NULL = "/dev/null"
_HUNK_RE = re.compile(r"^@@+ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@+ ?(.*)$")
_STAMP_RE = re.compile(r"\s+\d{4}-\d\d-\d\d[ T]\d\d:\d\d(:\d\d(\.\d+)?)?(\s*[+-]\d{4})?\s*$")
_SURROGATE_RE = re.compile("[\ud800-\udfff]")


_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}


def unquote(text: str) -> tuple[str, str] | None:
    """(the path, the rest of `text`) when `text` starts with a path quoted as git quotes one
    (`"a/\\303\\251.py"`: C escapes, octal bytes), else None. Bytes that are not UTF-8 come
    back as surrogate escapes, which path confinement refuses."""
    if not text.startswith('"'):
        return None
    out = bytearray()
    i = 1
    while i < len(text):
        ch = text[i]
        if ch == '"':
            return out.decode("utf-8", "surrogateescape"), text[i + 1:]
        if ch != "\\":
            out += ch.encode("utf-8", "surrogatepass")
            i += 1
            continue
        octal = text[i + 1:i + 4]
        if len(octal) == 3 and all("0" <= c <= "7" for c in octal) and octal[0] <= "3":
            out.append(int(octal, 8))
            i += 4
        elif text[i + 1:i + 2] in _ESCAPES:
            out.append(_ESCAPES[text[i + 1]])
            i += 2
        else:
            return None  # not an escape git writes
    return None  # no closing quote


def clean_path(raw: str) -> str:
    """A header's path without timestamp, quotes or surrounding blanks; a git-quoted path
    decoded."""
    path = raw.split("\t", 1)[0]
    path = _STAMP_RE.sub("", path).strip()
    quoted = unquote(path)
    if quoted is not None and not quoted[1]:
        return quoted[0]
    if len(path) >= 2 and path[0] == path[-1] == '"':
        path = path[1:-1]
    return path


def parse_hunk_header(line: str) -> Hunk:
    m = _HUNK_RE.match(line)
    if m:
        a, b, c, d, section = m.groups()
        return Hunk(int(a), int(b) if b is not None else 1, int(c), int(d) if d is not None else 1,
                    section=section.strip())
    rest = line.lstrip("@")
    section = rest.split("@@", 1)[1].strip() if "@@" in rest else ""
    return Hunk(None, None, None, None, section=section)


def written_line(line: str, path: str) -> str:
    """A diff line as it will be written: a UTF-16 surrogate pair split across two stream
    chunks is joined into its character; a lone surrogate (not a character, so it cannot be
    written as UTF-8) is a ParseError."""
    if line.isascii() or _SURROGATE_RE.search(line) is None:
        return line
    try:
        return line.encode("utf-16-le", "surrogatepass").decode("utf-16-le")
    except UnicodeDecodeError:
        bad = next(ch for ch in line if "\ud800" <= ch <= "\udfff")
        raise ParseError(f"the diff for {shown(path)} holds a lone UTF-16 surrogate "
                         f"(U+{ord(bad):04X}), which is not a character and cannot be written: "
                         f"{shown(line[:80])}",
                         hint="nothing was written; the reply (or a proxy) is broken: regenerate "
                              "the turn") from None


def is_fence(line: str) -> bool:
    """A Markdown code fence (the model closing its diff block)."""
    return line.lstrip().startswith(("```", "~~~"))
