"""Workspace.build/finish: full context, chained follow-ups with diffs, history, hashes."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest

from spark_pair.edits.ops import content_hash
from spark_pair.workspace import SYSTEM_PROMPT, Watcher, Workspace

pytestmark = pytest.mark.timeout(20)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "a.py").write_text("".join(f"a{i} = {i}\n" for i in range(60)))
    (tmp_path / "b.py").write_text("b = 1\n")
    return tmp_path


def test_unchained_turns_resend_context_and_trimmed_history(repo: Path) -> None:
    ws = Workspace(repo, history_turns=2)
    req, hashes = ws.build("rename a5", ["a.py"], followup=False)
    assert req.instructions == SYSTEM_PROMPT and req.history == []
    assert "a59 = 59" in req.new_input[0].content and "rename a5" in req.new_input[0].content
    assert hashes == {"a.py": content_hash((repo / "a.py").read_bytes())}
    ws.finish(req, "--- a/a.py\n+++ b/a.py\n", [])
    for i in range(3):
        req, _ = ws.build(f"ask {i}", ["a.py", "b.py"], followup=True)
        ws.finish(req, f"reply {i}", [])
    req, _ = ws.build("last", ["b.py"], followup=True)
    assert [m.content for m in req.history] == ["ask 1", "reply 1", "ask 2", "reply 2"]
    assert "b = 1" in req.new_input[0].content and "a59" not in req.new_input[0].content


async def test_chained_followup_sends_only_what_changed(repo: Path) -> None:
    queue: asyncio.Queue = asyncio.Queue()
    async with Watcher(repo, debounce_ms=30) as watcher:
        watcher.subscribe(queue.put_nowait)
        ws = Workspace(repo, watcher=watcher, chained=lambda: True)
        req1, _ = ws.build("change a3", ["a.py"], followup=False)
        first = req1.new_input[0].content
        assert "a59 = 59" in first
        # The turn writes a.py; that is the model's own change, not news for it.
        (repo / "a.py").write_text((repo / "a.py").read_text().replace("a3 = 3", "a3 = 33"))
        ws.finish(req1, "diff 1", ["a.py"])
        # The user edits a.py by hand and adds b.py to the next request.
        (repo / "a.py").write_text((repo / "a.py").read_text().replace("a40 = 40", "a40 = 4"))
        seen: set[str] = set()
        while True:
            seen |= await asyncio.wait_for(queue.get(), 5.0)
            if "a.py" in seen and "a40 = 4\n" in (repo / "a.py").read_text():
                break
        req2, hashes = ws.build("now b too", ["a.py", "b.py"], followup=True)
    text = req2.new_input[0].content
    assert "-a40 = 40\n+a40 = 4\n" in text
    assert "a3 = 3" not in text and "a3 = 33" not in text  # the turn's own write is not resent
    assert "a10 = 10" not in text  # no whole-file resend
    assert "b = 1" in text and "now b too" in text
    assert [m.content for m in req2.history] == [first, "diff 1"]
    assert hashes["a.py"] == content_hash((repo / "a.py").read_bytes())
    assert set(hashes) == {"a.py", "b.py"}


def test_chained_followup_puts_the_diffs_after_the_files(repo: Path) -> None:
    """The changes on disk vary from turn to turn: after the files (a new one here), before
    the instruction, so the files' blocks lead the message."""
    (repo / "c.py").write_text("c = 1\n")
    ws = Workspace(repo, chained=lambda: True)
    req, _ = ws.build("x", ["b.py"], followup=False)
    ws.finish(req, "r", [])
    (repo / "b.py").write_text("b = 2\n")
    text = ws.build("y", ["b.py", "c.py"], followup=True)[0].new_input[0].content
    assert text.startswith("Files:\n\n### c.py\n")
    assert text.index("### c.py") < text.index("Files changed on disk since your last reply")
    assert text.index("-b = 1\n+b = 2\n") < text.index("Instruction:\ny")


def test_chained_without_watcher_compares_every_seen_file(repo: Path) -> None:
    ws = Workspace(repo, chained=lambda: True)
    req, _ = ws.build("x", ["a.py", "b.py"], followup=False)
    ws.finish(req, "r", [])
    (repo / "b.py").write_text("b = 2\n")
    req, _ = ws.build("y", [], followup=True)
    text = req.new_input[0].content
    assert "-b = 1\n+b = 2\n" in text and "a.py" not in text


async def test_unchained_turn_focuses_large_files_on_lines_changed_on_disk(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    big = tmp_path / "big.py"
    big.write_text("".join(f"v{i} = {i}\n" for i in range(3000)))
    queue: asyncio.Queue = asyncio.Queue()
    async with Watcher(tmp_path, debounce_ms=30) as watcher:
        watcher.subscribe(queue.put_nowait)
        ws = Workspace(tmp_path, budget_tokens=600, watcher=watcher)
        req, _ = ws.build("tidy", ["big.py"], followup=False)
        ws.finish(req, "r", [])
        assert "edited_by_hand" not in req.new_input[0].content
        big.write_text(big.read_text().replace("v2100 = 2100\n", "v2100 = 'edited_by_hand'\n"))
        while "big.py" not in await asyncio.wait_for(queue.get(), 5.0):
            pass
        req, _ = ws.build("tidy again", ["big.py"], followup=True)
    assert "2101| v2100 = 'edited_by_hand'" in req.new_input[0].content
    assert ws.last_context is not None and ws.last_context.tokens <= 600


async def test_chained_followup_sees_an_edit_the_watcher_has_not_reported_yet(repo: Path) -> None:
    async with Watcher(repo, debounce_ms=1000) as watcher:
        ws = Workspace(repo, watcher=watcher, chained=lambda: True)
        req, _ = ws.build("x", ["b.py"], followup=False)
        ws.finish(req, "r", [])
        (repo / "b.py").write_text("b = 3\n")
        req, hashes = ws.build("y", ["b.py"], followup=True)
    assert "-b = 1\n+b = 3\n" in req.new_input[0].content
    assert hashes == {"b.py": content_hash(b"b = 3\n")}


def test_chained_followup_resends_regions_of_a_large_file_for_the_new_instruction(
        tmp_path: Path) -> None:
    (tmp_path / "big.py").write_text("".join(f"v{i} = {i}\n" for i in range(3000)))
    ws = Workspace(tmp_path, budget_tokens=600, chained=lambda: True)
    req, _ = ws.build("look at v10", ["big.py"], followup=False)
    ws.finish(req, "r", [])
    assert "v2500 = 2500" not in req.new_input[0].content
    req, _ = ws.build("now fix v2500", ["big.py"], followup=True)
    assert "2501| v2500 = 2500" in req.new_input[0].content
