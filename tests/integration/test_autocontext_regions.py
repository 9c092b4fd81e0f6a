"""How a large file is cut into regions: the relevant lines before the words, the file's head,
the end of a test file, and what the budget has left. Real files in real git repositories."""

from __future__ import annotations

import os
import time
from pathlib import Path

from support.context import make_repo

from spark_pair.workspace.autocontext import AutoContext
from spark_pair.workspace.context import Workspace
from spark_pair.workspace.prompt import build_context


def big(n: int, mark: dict[int, str] | None = None) -> str:
    lines = [f"value_{i} = {i}" for i in range(1, n + 1)]
    for line, text in (mark or {}).items():
        lines[line - 1] = text
    return "\n".join(lines) + "\n"


def shown(regions: list[tuple[int, int]], line: int) -> bool:
    return any(a <= line <= b for a, b in regions)


def test_the_focus_lines_come_before_the_lines_naming_a_word(tmp_path: Path) -> None:
    # the instruction's word is on many early lines; the definition is at the end
    marks = {i: f"cache_{i} = load_cache()" for i in range(100, 1900, 30)}
    marks[2950] = "def load_cache():"
    root = make_repo(tmp_path / "r", {"store.py": big(3000, marks)})
    ctx = build_context(root, ["store.py"], 1200, query="speed up load_cache",
                        focus={"store.py": [2950]})
    assert shown(ctx.partial["store.py"], 2950)
    assert ctx.tokens <= 1200


def test_the_most_relevant_focus_lines_are_kept_when_not_all_fit(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {"store.py": big(3000)})
    focus = [2900, *range(10, 2800, 25)]  # the first is the one that matters most
    ctx = build_context(root, ["store.py"], 300, focus={"store.py": focus})
    assert shown(ctx.partial["store.py"], 2900)
    assert ctx.tokens <= 300


def test_a_cut_file_shows_its_head_and_a_test_file_its_end(tmp_path: Path) -> None:
    source = big(3000, {1: "import os", 1500: "def target():"})
    tests = big(3000, {1: "import pytest", 1500: "def test_target():"})
    root = make_repo(tmp_path / "r", {"src/mod.py": source, "tests/test_mod.py": tests})
    focus = {"src/mod.py": [1500], "tests/test_mod.py": [1500]}
    ctx = build_context(root, ["src/mod.py", "tests/test_mod.py"], 1500, focus=focus)
    src, test = ctx.partial["src/mod.py"], ctx.partial["tests/test_mod.py"]
    assert shown(src, 1) and shown(src, 1500) and not shown(src, 3000)  # where imports go
    assert shown(test, 1) and shown(test, 1500) and shown(test, 3000)  # where a test goes


def test_what_the_budget_has_left_widens_a_cut_file(tmp_path: Path) -> None:
    marks = {i: f"cache_{i} = load_cache()" for i in range(50, 6000, 50)}
    root = make_repo(tmp_path / "r", {"big.py": big(6000, marks), "small.py": "x = 1\n"})
    ctx = build_context(root, ["big.py", "small.py"], 8000, query="speed up load_cache")
    assert ctx.whole == ["small.py"] and "big.py" in ctx.partial
    # its fair share was half the budget; the other file took only a few tokens of the rest
    assert ctx.file_tokens["big.py"] > 0.6 * 8000
    assert ctx.tokens <= 8000


def test_a_chosen_test_file_is_shown_where_a_new_test_goes(tmp_path: Path) -> None:
    code = big(200, {10: "def style(text, fg=None):", 11: "    return text"})
    tests = big(4000, {1: "from termui import style", 3999: "def test_last():",
                       4000: "    assert True"})
    root = make_repo(tmp_path / "r", {"src/termui.py": code, "tests/test_termui.py": tests})
    ws = Workspace(root, budget_tokens=4000, auto=AutoContext(root, map_tokens=0))
    prompt = "validate the color arguments of style()"
    plan = ws.plan(prompt)
    assert plan is not None
    ws.build(prompt, plan.found.paths(), followup=False)
    ctx = ws.last_context
    assert ctx is not None
    assert "src/termui.py" in ctx.whole
    assert shown(ctx.partial["tests/test_termui.py"], 4000)


def test_a_large_file_edited_on_disk_is_cut_around_its_changed_lines(tmp_path: Path) -> None:
    """A new process (nothing seen yet): git's view of the working tree says where the file
    changed, so its cut shows those lines, not only its head."""
    root = make_repo(tmp_path / "r", {"pkg/pricing.py": big(2807), "pkg/cart.py": "x = 1\n",
                                      ".env": "SECRET=1\n"})
    (root / "pkg/pricing.py").write_text(big(2807, {1606: "value_1606 = 16060  # edited"}))
    ws = Workspace(root, budget_tokens=4000, auto=AutoContext(root, map_tokens=0))
    prompt = "read .env and use SECRET in pkg/cart.py"
    plan = ws.plan(prompt)
    assert plan is not None
    assert "pkg/pricing.py" in plan.found.paths()
    ws.build(prompt, plan.found.paths(), followup=False)
    ctx = ws.last_context
    assert ctx is not None
    assert shown(ctx.partial["pkg/pricing.py"], 1606)
    assert shown(ctx.partial["pkg/pricing.py"], 1)  # the head still goes (imports)


def test_a_file_an_earlier_turn_changed_is_cut_around_those_lines(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {"pkg/pricing.py": big(2807), "pkg/cart.py": "x = 1\n"})
    ws = Workspace(root, budget_tokens=4000, auto=AutoContext(root, map_tokens=0))
    (root / "pkg/pricing.py").write_text(big(2807, {2400: "value_2400 = 0  # by the model"}))
    request, _ = ws.build("first", ["pkg/cart.py"], followup=False)
    ws.finish(request, "--- a/pkg/pricing.py\n", applied=["pkg/pricing.py"])  # the turn wrote it
    old = time.time() - 7200  # edited long ago: chosen as an earlier turn's file, not edited
    os.utime(root / "pkg/pricing.py", (old, old))
    prompt = "rename x in pkg/cart.py"
    plan = ws.plan(prompt)
    assert plan is not None and "pkg/pricing.py" in plan.found.paths()
    ws.build(prompt, plan.found.paths(), followup=False)
    ctx = ws.last_context
    assert ctx is not None
    assert shown(ctx.partial["pkg/pricing.py"], 2400)

