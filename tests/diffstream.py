"""A model reply turned into the frames a front end gets: real parser events, in the order the
session yields them (each TextDelta, then what the parser made of it), cut into random batches."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from spark_pair.edits.parser import DiffParser
from spark_pair.protocol.events import TextDelta

CORPUS = Path(__file__).parent / "corpus"


def reply(name: str) -> str:
    return (CORPUS / name / "reply.txt").read_text(encoding="utf-8")


def frames(text: str, rng: random.Random, *, max_token: int = 6,
           max_frame: int = 40) -> tuple[list[tuple[list[Any], str]], DiffParser]:
    """[(events, partial_line)] per frame and the parser (for its operations)."""
    parser = DiffParser()
    out: list[tuple[list[Any], str]] = []
    batch: list[Any] = []
    frame_len = rng.randint(1, max_frame)
    i = 0
    while i < len(text):
        n = rng.randint(1, max_token)
        chunk = text[i:i + n]
        i += n
        batch.append(TextDelta(chunk))
        batch.extend(parser.feed(chunk))
        if len(batch) >= frame_len:
            out.append((batch, parser.partial_line))
            batch, frame_len = [], rng.randint(1, max_frame)
    batch.extend(parser.close())
    out.append((batch, ""))
    return out, parser
