"""The events the diff parser (edits.parser) yields as the reply's lines complete: small
enough to load with every front end, while the parser itself loads at the reply's first text.

Index space: `index` / `op_index` is the operation's index in `operations()`; `hunk_index` is
the hunk's index in that operation's `hunks`. A file is announced with its first diff line (or
when its operation is built), a hunk with its first line, so an empty `@@` hunk or a section
that yields no operation never takes an index. Events are immutable snapshots (NamedTuples,
cheap to define; those with an `index` field frozen dataclasses, as a tuple has index()).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from .ops import HunkHeader, Operation, OpKind


@dataclass(frozen=True, slots=True)
class FileStarted:
    index: int
    op_kind: OpKind
    path: str
    new_path: str | None = None


class HunkStarted(NamedTuple):
    op_index: int
    hunk_index: int
    header: HunkHeader


class LineAdded(NamedTuple):
    op_index: int
    hunk_index: int
    line: str


@dataclass(frozen=True, slots=True)
class FileFinished:
    index: int
    op: Operation


ParseEvent = FileStarted | HunkStarted | LineAdded | FileFinished
