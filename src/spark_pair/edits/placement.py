"""How a hunk was placed in its file: exactly as written, or loosely (and how), so a person can
look at what was placed loosely. Plain data; edits.apply sets `Hunk.placement`."""

from __future__ import annotations

import re
from collections.abc import Sequence
from enum import StrEnum
from pathlib import PurePosixPath
from typing import NamedTuple


class Loose(StrEnum):
    """One way a hunk was placed other than exactly as written."""

    REBASED = "rebased"  # whitespace-normalised match; added lines re-indented by `shift`
    WHITESPACE = "whitespace"  # whitespace-normalised match; added lines kept as written
    RECOUNTED = "recounted"  # its @@ counts disagreed with its lines: its lines were counted
    EDGE = "edge_skipped"  # a first or last context line not in the file was left out
    REORDERED = "reordered"  # the reply gave its hunks out of file order: placed in file order
    REVISES = "revises"  # a later block for the file, placed on the original in place of another
    SUPERSEDED = "superseded"  # an earlier block's hunk that a later block revises: not written
    REPEATED = "repeated"  # the same hunk again in one block (same lines, same @@): not written


class Placement(NamedTuple):
    """Where a hunk went: `line` (1-based, where its old side starts; None when not written),
    `how` (empty: exactly as written), `shift` (columns added to each added line; negative:
    removed), `skipped` (edge context lines left out), `mixed` (its lines matched only with
    their indentation changed by different amounts, so the added lines were kept as written)."""

    line: int | None
    how: tuple[Loose, ...] = ()
    shift: int = 0
    skipped: int = 0
    mixed: bool = False

    @property
    def loose(self) -> bool:
        return bool(self.how)

    def describe(self) -> str:
        """E.g. 're-based by +4 columns, recounted' ('' when placed exactly)."""
        words = []
        for how in self.how:
            if how is Loose.REBASED:
                words.append(f"re-based by {self.shift:+d} columns")
            elif how is Loose.WHITESPACE:
                words.append("indentation differs, added lines kept as written" if self.mixed
                             else "matched ignoring spacing")
            elif how is Loose.EDGE:
                words.append(f"skipped {self.skipped} edge line(s) not in the file")
            elif how is Loose.REVISES:
                words.append("revises an earlier block")
            elif how is Loose.REORDERED:
                words.append("out of order, placed in order")
            elif how is Loose.SUPERSEDED:
                words.append("superseded by a later block, not written")
            elif how is Loose.REPEATED:
                words.append("repeats an earlier hunk of its block, not written")
            else:
                words.append("@@ counts recounted")
        return ", ".join(words)

    def with_parsed(self, parsed: Sequence[Loose]) -> Placement:
        """This placement with the parser's tolerances of the hunk in front."""
        extra = tuple(h for h in parsed if h not in self.how)
        return self if not extra else self._replace(how=extra + self.how)

    def as_json(self) -> dict[str, object]:
        return {"line": self.line, "how": [str(h) for h in self.how], "shift": self.shift,
                "note": self.describe()}


# files where a line's indentation is part of its meaning
_SIGNIFICANT_EXT = frozenset({
    ".py", ".pyi", ".pyw", ".pyx", ".pxd", ".yaml", ".yml", ".mk", ".coffee", ".litcoffee",
    ".hs", ".lhs", ".nim", ".nims", ".sass", ".styl", ".pug", ".jade", ".haml", ".slim",
    ".fs", ".fsx", ".fsi", ".elm", ".purs", ".idr", ".agda", ".gd", ".cabal", ".rst",
    ".star", ".bzl", ".smk",
})
_SIGNIFICANT_NAMES = frozenset({"makefile", "gnumakefile", "snakefile", "build", "workspace",
                                "sconstruct", "sconscript", "procfile"})


# a script's interpreter (its `#!` line) whose language is one of those above
_SIGNIFICANT_SHEBANG = re.compile(
    r"^#!\s*\S*?(?:/env(?:\s+-\S+)*\s+)?(?:\S*/)?"
    r"(python[\d.]*|pypy[\d.]*|make|gmake|snakemake|coffee|runghc|runhaskell|nim|elm|bazel)"
    r"(?:\s|$)")
_PYTHON_EXT = frozenset({".py", ".pyi", ".pyw"})


def interpreter(first_line: str) -> str | None:
    """The indentation-significant interpreter a `#!` line names ('python3'), else None."""
    m = _SIGNIFICANT_SHEBANG.match(first_line)
    return m.group(1) if m else None


def indent_significant(path: str, first_line: str = "") -> bool:
    """Whether indentation changes what the file means (Python, YAML, Makefile, ...), by the
    file's extension or name, or by the interpreter its first line (`#!`) names."""
    p = PurePosixPath(path.replace("\\", "/"))
    name = p.name.lower()
    return p.suffix.lower() in _SIGNIFICANT_EXT or name in _SIGNIFICANT_NAMES or (
        name.startswith("makefile")) or interpreter(first_line) is not None


def is_python(path: str, first_line: str = "") -> bool:
    """A Python file: .py/.pyi/.pyw, or a script whose `#!` line names python."""
    found = interpreter(first_line)
    return PurePosixPath(path).suffix.lower() in _PYTHON_EXT or bool(
        found and found.startswith(("python", "pypy")))
