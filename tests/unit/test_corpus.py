"""Real-world replies (tests/corpus/NN-name): parse whole and chunked, apply, compare byte for byte;
cut anywhere, a reply is refused or holds only what arrived."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest
from support.diffstream import CORPUS, holds_only_complete_text, newline_marks, tokens

from spark_pair.base.errors import IncompleteReply, ParseError
from spark_pair.edits.apply import apply_turn
from spark_pair.edits.journal import Journal
from spark_pair.edits.ops import Delete, content_hash
from spark_pair.edits.parser import DiffParser, parse_diff

CASES = sorted(p for p in CORPUS.iterdir() if p.is_dir())


def _files(root: Path) -> dict[str, bytes]:
    if not root.is_dir():
        return {}
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def _chunked(text: str, rng: random.Random) -> list:
    p = DiffParser()
    pos = 0
    for _ in range(len(text) + 1):  # bounded: each step takes at least one character
        if pos >= len(text):
            break
        step = rng.randint(1, 12)
        p.feed(text[pos:pos + step])
        pos += step
    p.close()
    return p.operations()


def test_corpus_is_big_enough() -> None:
    assert len(CASES) >= 24


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_corpus_case(case: Path, tmp_path: Path) -> None:
    reply = (case / "reply.txt").read_bytes().decode()
    ops = parse_diff(reply)
    assert ops, "the reply parsed to no operations"
    rng = random.Random(case.name)
    for _ in range(5):
        assert _chunked(reply, rng) == ops
    root = tmp_path / "repo"
    shutil.copytree(case / "before", root)
    for op in ops:  # a delete showing no lines goes only with the file the model was shown
        if isinstance(op, Delete) and op.lines is None:
            op.base_hash = content_hash((root / op.path).read_bytes())
    apply_turn(root, ops, journal=Journal(root, data_dir=tmp_path / "data"))
    assert _files(root) == _files(case / "after")


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_a_reply_cut_anywhere_is_refused_or_holds_only_what_arrived(case: Path) -> None:
    reply = (case / "reply.txt").read_bytes().decode()
    full_ops = parse_diff(reply)
    full, full_marks = tokens(full_ops), newline_marks(full_ops)
    refused = 0
    for end in range(len(reply)):  # every position: corpus replies are a few hundred chars
        try:
            ops = parse_diff(reply[:end])
        except (IncompleteReply, ParseError):
            refused += 1
            continue
        assert holds_only_complete_text(tokens(ops), full), (end, reply[:end])
        marks = newline_marks(ops)  # a 'No newline' mark only where the whole reply has it
        assert all(a <= b and c <= d for (a, c), (b, d) in zip(marks, full_marks, strict=False)), (
            end
        )
    assert refused > 0  # every corpus reply can be cut inside its diff
