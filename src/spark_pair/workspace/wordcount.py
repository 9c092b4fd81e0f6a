"""The words of a text as the index keeps them (for the lexical ranking, `lexical.py`)."""

from __future__ import annotations

import re

PART = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")  # a word, or a part of an identifier


def words_of(text: str) -> dict[str, int]:
    """How often each word of 4 to 24 letters occurs in `text`, lower case, identifiers split
    into their words (`parseHeader`, `parse_header`: parse, header)."""
    counts: dict[str, int] = {}
    for word in PART.findall(text):
        if 4 <= len(word) <= 24:
            word = word.lower()
            counts[word] = counts.get(word, 0) + 1
    return counts
