"""Real-world replies (tests/corpus/NN-name): parse whole and chunked, apply, compare byte for byte."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest

from spark_pair.edits.apply import apply_turn
from spark_pair.edits.journal import Journal
from spark_pair.edits.parser import DiffParser, parse_diff

CORPUS = Path(__file__).parent / "corpus"
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
    apply_turn(root, ops, journal=Journal(root, data_dir=tmp_path / "data"))
    assert _files(root) == _files(case / "after")
