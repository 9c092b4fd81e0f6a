"""`AI!` (do it now) and `AI?` (a question) comments, in #, //, -- and ; comment styles."""

from __future__ import annotations

import re
from dataclasses import dataclass

# A comment marker, then text, with AI! / AI? either at the end or at the start of the text.
_COMMENT = re.compile(r"(?:^|\s)(?:#|//|--|;)\s*(?P<body>.*?)\s*$")
_END = re.compile(r"(?:^|\W)AI(?P<kind>[!?])$", re.IGNORECASE)
_START = re.compile(r"^AI(?P<kind>[!?])(?:\s|$)", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class AIComment:
    path: str
    line: int  # 1-based
    kind: str  # "do" (AI!) or "ask" (AI?)
    text: str  # the comment without the marker

    @property
    def key(self) -> tuple[str, str, str]:
        """Identity across edits that only move the comment."""
        return (self.path, self.kind, self.text)


def find_ai_comments(rel: str, text: str) -> list[AIComment]:
    """Every AI!/AI? comment in a file's text."""
    out: list[AIComment] = []
    if "ai" not in text.lower():
        return out
    for no, line in enumerate(text.splitlines(), 1):
        if "AI" not in line.upper():
            continue
        m = _COMMENT.search(line)
        if not m:
            continue
        body = m.group("body")
        hit = _END.search(body)
        if hit:
            rest = body[: hit.start("kind") - 2].strip()
        else:
            hit = _START.match(body)
            if not hit:
                continue
            rest = body[hit.end():].strip()
        kind = "do" if hit.group("kind") == "!" else "ask"
        out.append(AIComment(rel, no, kind, rest))
    return out
