"""System prompt, budgeted context, history and follow-up diffs."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spark_pair.workspace import (
    SYSTEM_PROMPT,
    ContextSnapshot,
    History,
    build_context,
    estimate_tokens,
    file_diff,
    followup_input,
)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "small.py").write_text("def add(a, b):\n    return a + b\n")
    big = [f"line_{i} = {i}" for i in range(1, 2001)]
    big[999] = "def parse_header(raw):  # the one we want"
    big[1499] = "x = 0  # make this configurable AI!"
    (tmp_path / "big.py").write_text("\n".join(big) + "\n")
    return tmp_path


def test_system_prompt_has_the_safety_rules() -> None:
    text = SYSTEM_PROMPT.lower()
    assert "only modify the files explicitly requested" in text
    assert "never delete or rename" in text
    assert "only a unified diff" in text
    assert "--- a/" in SYSTEM_PROMPT and "+++ b/" in SYSTEM_PROMPT and "@@" in SYSTEM_PROMPT
    assert "3 lines" in text


def test_small_files_go_in_whole(repo: Path) -> None:
    ctx = build_context(repo, ["small.py", "new.py"], 2000)
    assert ctx.whole == ["small.py"] and ctx.missing == ["new.py"] and not ctx.omitted
    assert "def add(a, b):\n    return a + b\n" in ctx.text
    assert "new.py (does not exist yet)" in ctx.text
    assert ctx.tokens == estimate_tokens(ctx.text) <= 2000
    assert ctx.texts == {"small.py": "def add(a, b):\n    return a + b\n", "new.py": None}


def test_large_files_send_relevant_regions_with_line_numbers(repo: Path) -> None:
    ctx = build_context(repo, ["small.py", "big.py"], 1000, query="fix parse_header please")
    assert ctx.whole == ["small.py"]
    regions = ctx.partial["big.py"]
    assert any(a <= 1000 <= b for a, b in regions)  # the instruction's word
    assert any(a <= 1500 <= b for a, b in regions)  # the AI! comment
    assert "1000| def parse_header(raw):" in ctx.text
    assert "line_300 = 300" not in ctx.text
    assert ctx.tokens <= 1000
    assert ctx.texts["big.py"] == (repo / "big.py").read_text()  # snapshot is the whole file


def test_focus_lines_are_included(repo: Path) -> None:
    ctx = build_context(repo, ["big.py"], 300, focus={"big.py": [42]})
    assert "  42| line_42 = 42" in ctx.text


def test_over_budget_files_are_omitted_and_reported(repo: Path) -> None:
    (repo / "blob.bin").write_bytes(b"\0\1\2")
    ctx = build_context(repo, ["big.py", "blob.bin"], 5)
    assert ctx.text == "" and ctx.tokens == 0
    assert ctx.omitted == {"big.py": "over the token budget", "blob.bin": "blob.bin looks binary"}


@settings(max_examples=30, deadline=None)
@given(budget=st.integers(min_value=0, max_value=3000),
       query=st.sampled_from(["", "parse_header", "line_7 line_1999", "nothing matches"]))
def test_never_over_budget(tmp_path_factory: pytest.TempPathFactory, budget: int,
                           query: str) -> None:
    root = tmp_path_factory.getbasetemp() / "budget"
    if not root.exists():
        root.mkdir()
        (root / "a.py").write_text("".join(f"line_{i} = {i}\n" for i in range(1, 2001)))
        (root / "b.py").write_text("tiny = 1\n")
        (root / "c.py").write_text("".join(f"c{i}\n" for i in range(300)))
    ctx = build_context(root, ["a.py", "b.py", "c.py", "d.py"], budget, query=query)
    assert ctx.tokens <= budget
    assert estimate_tokens(ctx.text) <= budget
    assert set(ctx.shown) | set(ctx.omitted) == {"a.py", "b.py", "c.py", "d.py"}


def test_history_keeps_the_last_turns() -> None:
    h = History(2)
    for i in range(4):
        h.add(f"ask {i}", f"reply {i}", sent=f"context + ask {i}")
    assert [(m.role, m.content) for m in h.messages()] == [
        ("user", "ask 2"), ("assistant", "reply 2"), ("user", "ask 3"), ("assistant", "reply 3")]
    assert h.messages(full=True)[0].content == "context + ask 2"


def test_file_diff_is_a_unified_diff() -> None:
    old = "".join(f"{i}\n" for i in range(10))
    new = old.replace("5\n", "five\n")
    diff = file_diff("x.py", old, new)
    assert diff.splitlines()[:3] == ["--- a/x.py", "+++ b/x.py", "@@ -3,7 +3,7 @@"]
    assert "-5" in diff and "+five" in diff
    assert file_diff("x.py", old, old) == ""
    assert file_diff("x.py", "a\n", None).splitlines()[:2] == ["--- a/x.py", "+++ /dev/null"]


def test_followup_sends_only_diffs_against_what_was_seen(repo: Path) -> None:
    snap = ContextSnapshot()
    snap.update(build_context(repo, ["small.py", "big.py"], 100_000).texts)
    (repo / "big.py").write_text((repo / "big.py").read_text().replace("line_7 = 7", "seven = 7"))
    (repo / "other.py").write_text("unseen = 1\n")
    text = followup_input(repo, {"big.py", "small.py", "other.py"}, snap)
    assert "--- a/big.py\n+++ b/big.py\n" in text
    assert "-line_7 = 7\n+seven = 7\n" in text
    assert "line_500" not in text  # not the whole file
    assert "small.py" not in text and "other.py" not in text
    assert snap.get("big.py") == (repo / "big.py").read_text()  # moved on
    assert followup_input(repo, {"big.py"}, snap) == ""
    (repo / "small.py").unlink()
    assert "+++ /dev/null" in followup_input(repo, {"small.py"}, snap)



def test_changed_lines_point_into_the_new_text() -> None:
    from spark_pair.workspace.prompt import changed_lines

    assert changed_lines("a\nb\nc\n", "a\nB\nc\n") == [2]
    assert changed_lines("a\nb\n", "a\nb\nx\ny\n") == [3, 4]
    assert changed_lines("a\nb\nc\n", "a\nc\n") == [2]
    assert changed_lines(None, "q\n") == [1]
    assert changed_lines("same\n", "same\n") == []


def test_query_words_keep_short_identifiers_and_drop_filler() -> None:
    from spark_pair.workspace.prompt import query_words

    assert query_words("Fix the bug in add_one and v10 now, use foo") == {
        "bug", "add_one", "v10", "foo"}


def test_files_are_fitted_in_the_order_given_so_the_first_goes_in_whole(tmp_path: Path) -> None:
    # the first file (the most relevant) is the largest: fitted smallest first it would be cut
    for name, n in (("first.py", 1000), ("second.py", 800), ("third.py", 800)):
        (tmp_path / name).write_text("".join(f"v_{i} = {i:03}\n" for i in range(n)))
    sizes = {n: estimate_tokens((tmp_path / n).read_text()) for n in ("first.py", "second.py")}
    budget = sizes["first.py"] + sizes["second.py"] + 1600
    ctx = build_context(tmp_path, ["first.py", "second.py", "third.py"], budget, query="v_5")
    assert ctx.whole == ["first.py", "second.py"]
    assert list(ctx.partial) == ["third.py"]
    assert ctx.tokens <= budget


def test_a_cut_file_shows_the_lines_naming_the_most_words_of_the_instruction(tmp_path: Path
                                                                             ) -> None:
    lines = [f"value_{i} = {i}" for i in range(1, 1201)]
    for n in range(100, 160, 6):
        lines[n] = f"pager_{n} = None  # the pager"  # one word of the instruction each
    lines[899] = "def close_pager(stdin):  # the pager closes stdin early"
    (tmp_path / "big.py").write_text("\n".join(lines) + "\n")
    ctx = build_context(tmp_path, ["big.py"], 300, query="pager closes stdin early")
    assert "big.py" in ctx.partial
    assert any(a <= 900 <= b for a, b in ctx.partial["big.py"])  # not only the first hits
