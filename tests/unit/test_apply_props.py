"""Property tests: hostile paths never reach the disk; garbage raises only spark-pair errors."""

from __future__ import annotations

import difflib
import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spark_pair.base.errors import SparkPairError
from spark_pair.edits.apply import apply_hunks, apply_turn
from spark_pair.edits.journal import Journal
from spark_pair.edits.ops import Create, Delete, Hunk, Modify, Rename

SEGMENTS = st.sampled_from(["..", ".", "", ".git", ".GIT", "/", "a", "b", "link", "out", "CON",
                            "nul.txt", "x\x00y", "x ", "~", "C:", "\\..", "f.txt", "..."])
HOSTILE = st.lists(SEGMENTS, min_size=1, max_size=5).map("/".join) | st.text(max_size=30)


def tree(root: Path) -> dict[str, bytes]:
    out = {}
    for dirpath, dirnames, files in os.walk(root):
        for name in dirnames + files:
            p = Path(dirpath) / name
            out[str(p.relative_to(root))] = b"<dir>" if p.is_dir() and not p.is_symlink() else (
                b"<link>" if p.is_symlink() else p.read_bytes())
    return out


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(paths=st.lists(HOSTILE, min_size=1, max_size=3), kind=st.sampled_from("cmdr"))
def test_hostile_paths_never_write_outside_the_root(paths, kind):
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        outside, root = base / "out", base / "work" / "repo"
        outside.mkdir()
        (outside / "f.txt").write_text("outside\n")
        root.mkdir(parents=True)
        (root / ".git").mkdir()
        (root / ".git" / "config").write_text("git\n")
        (root / "link").symlink_to(outside)
        (root / "f.txt").write_text("inside\n")
        watched = {
            "out": tree(outside),
            "git": tree(root / ".git"),
            "work": sorted(os.listdir(base / "work")),
        }
        hunks = [Hunk(None, None, None, None, ["-outside", "+pwned"])]
        ops = {"c": lambda p: Create(p, "pwned\n"), "m": lambda p: Modify(p, hunks),
               "d": lambda p: Delete(p), "r": lambda p: Rename("f.txt", p)}
        for path in paths:
            try:
                apply_turn(root, [ops[kind](path)], journal=Journal(root, base / "data"))
            except SparkPairError:
                pass
        assert {"out": tree(outside), "git": tree(root / ".git"),
                "work": sorted(os.listdir(base / "work"))} == watched


LINE = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\r"),
               max_size=12)


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=200), hunks=st.lists(st.builds(
    Hunk, st.none() | st.integers(-3, 40), st.none() | st.integers(0, 9),
    st.none() | st.integers(-3, 40), st.none() | st.integers(0, 9),
    st.lists(st.text(max_size=10), max_size=6), st.text(max_size=5), st.booleans(), st.booleans()),
    max_size=4))
def test_garbage_hunks_raise_only_spark_pair_errors(text, hunks):
    try:
        out = apply_hunks(text, hunks, "g.txt")
    except SparkPairError:
        return
    assert isinstance(out, str)


def unified_hunks(a: list[str], b: list[str]) -> list[Hunk]:
    hunks = []
    for group in difflib.SequenceMatcher(None, a, b, autojunk=False).get_grouped_opcodes(2):
        i1, j1 = group[0][1], group[0][3]
        lines = []
        for tag, a1, a2, b1, b2 in group:
            if tag == "equal":
                lines += [" " + x for x in a[a1:a2]]
                continue
            lines += ["-" + x for x in a[a1:a2]] + ["+" + x for x in b[b1:b2]]
        hunks.append(Hunk(i1 + 1, None, j1 + 1, None, lines))
    return hunks


@settings(max_examples=200, deadline=None)
@given(a=st.lists(LINE, max_size=25), b=st.lists(LINE, max_size=25), crlf=st.booleans())
def test_diff_then_apply_round_trips(a, b, crlf):
    nl = "\r\n" if crlf and a else "\n"  # an empty file has no style: new lines get LF
    before, after = "".join(x + nl for x in a), "".join(x + nl for x in b)
    try:
        assert apply_hunks(before, unified_hunks(a, b)) == after
    except (
        SparkPairError
    ) as exc:  # repeated lines may make a hunk ambiguous: refused, never a guess
        assert "equally" in exc.message or "places" in exc.message or "position" in exc.message
