"""Line syntax shared by the unified-diff parser and the `*** Begin Patch` envelope reader."""

from __future__ import annotations

import re

from ..errors import ParseError
from .ops import Hunk
from .paths import shown

DEV_NULL = "/dev/null"
_HUNK_RE = re.compile(r"^@@+ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@+ ?(.*)$")
_STAMP_RE = re.compile(r"\s+\d{4}-\d\d-\d\d[ T]\d\d:\d\d(:\d\d(\.\d+)?)?(\s*[+-]\d{4})?\s*$")
_SURROGATE_RE = re.compile("[\ud800-\udfff]")


def clean_path(raw: str) -> str:
    """A header's path without timestamp, quotes or surrounding blanks."""
    path = raw.split("\t", 1)[0]
    path = _STAMP_RE.sub("", path).strip()
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
