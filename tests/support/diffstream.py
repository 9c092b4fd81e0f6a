"""A model reply turned into the frames a front end gets: real parser events, in the order the
session yields them (each TextDelta, then what the parser made of it), cut into random batches."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from spark_pair.edits.ops import Create
from spark_pair.edits.parser import DiffParser
from spark_pair.protocol.events import TextDelta

CORPUS = Path(__file__).parents[1] / "corpus"


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


def tokens(ops: list) -> list[str]:
    """An operation list as a flat sequence: kind and paths, then each hunk's header and lines
    (a create: its content lines)."""
    out: list[str] = []
    for op in ops:
        out.append(f"{type(op).__name__} {op.path} {getattr(op, 'dst', '')}")
        if isinstance(op, Create):
            out += ["+" + ln for ln in op.content.split("\n")]
            continue
        for h in getattr(op, "hunks", ()):
            out.append(f"@@ {h.old_start} {h.old_len} {h.new_start} {h.new_len} {h.section}")
            out += h.lines
    return out


def newline_marks(ops: list) -> list[tuple[bool, bool]]:
    return [(h.no_newline_old, h.no_newline_new) for op in ops for h in getattr(op, "hunks", ())]


def holds_only_complete_text(cut: list, full: list) -> bool:
    """`cut` is the start of `full`: equal tokens, except that the last one may be the start
    of full's (a line cut short, or content the text had not reached)."""
    if not cut:
        return True
    if len(cut) > len(full) or cut[:-1] != full[:len(cut) - 1]:
        return False
    return full[len(cut) - 1].startswith(cut[-1])
