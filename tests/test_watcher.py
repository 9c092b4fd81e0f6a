"""The watcher against real files in a temporary git repo (events awaited with a bound)."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest

from spark_pair.workspace.aicomments import find_ai_comments
from spark_pair.workspace.watcher import Watcher

pytestmark = pytest.mark.timeout(20)
WAIT = 5.0


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".gitignore").write_text("build/\n*.log\n")
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "build").mkdir()
    return tmp_path


async def next_batch(queue: asyncio.Queue) -> set[str]:
    return await asyncio.wait_for(queue.get(), WAIT)


async def test_changes_are_reported_and_ignored_paths_skipped(repo: Path) -> None:
    queue: asyncio.Queue = asyncio.Queue()
    async with Watcher(repo, debounce_ms=30) as w:
        w.subscribe(queue.put_nowait)
        (repo / "build" / "out.txt").write_text("ignored")
        (repo / "debug.log").write_text("ignored")
        (repo / ".venv").mkdir()
        (repo / ".venv" / "x.py").write_text("ignored")
        (repo / "a.py").write_text("x = 2\n")
        seen: set[str] = set()
        while "a.py" not in seen:
            seen |= await next_batch(queue)
        assert seen == {"a.py"}
        assert w.mark_turn() == {"a.py"}
        assert w.changed_since() == set()
        (repo / "new.py").write_text("y = 1\n")
        seen = set()
        while "new.py" not in seen:
            seen |= await next_batch(queue)
        assert w.changed_since() == {"new.py"}
        (repo / "new.py").unlink()
        while True:
            batch = await next_batch(queue)
            if "new.py" in batch:
                break
        assert w.mark_turn() == {"new.py"}


async def test_a_burst_of_writes_is_coalesced(repo: Path) -> None:
    queue: asyncio.Queue = asyncio.Queue()
    async with Watcher(repo, debounce_ms=200) as w:
        w.subscribe(queue.put_nowait)
        for i in range(20):
            (repo / "a.py").write_text(f"x = {i}\n")
        batch = await next_batch(queue)
        assert batch == {"a.py"}
    assert queue.qsize() <= 1  # 20 writes became one or two batches, not twenty


async def test_new_ai_comments_are_reported_once(repo: Path) -> None:
    found: asyncio.Queue = asyncio.Queue()
    (repo / "a.py").write_text("x = 1  # old request AI!\n")
    async with Watcher(repo, debounce_ms=30) as w:
        w.scan_ai_comments(["a.py"])
        w.subscribe_ai(found.put_nowait)
        (repo / "a.py").write_text("x = 1  # old request AI!\ny = 2  # make y a constant AI!\n")
        comments = await asyncio.wait_for(found.get(), WAIT)
        assert [(c.line, c.kind, c.text) for c in comments] == [(2, "do", "make y a constant")]


async def test_watch_context_subscribes_for_the_block(repo: Path) -> None:
    queue: asyncio.Queue = asyncio.Queue()
    w = Watcher(repo, debounce_ms=30)
    try:
        async with w.watch(queue.put_nowait):
            (repo / "a.py").write_text("x = 3\n")
            assert "a.py" in await next_batch(queue)
        assert w._subs == []
    finally:
        await w.stop()


def test_find_ai_comments_styles() -> None:
    text = ("x = 1  # make this faster AI!\n"
            "// AI? why is this here\n"
            "select 1; -- rename the column ai!\n"
            "; AI! sort the keys\n"
            'print("AI!")\n'
            "plain line\n")
    got = [(c.line, c.kind, c.text) for c in find_ai_comments("f", text)]
    assert got == [(1, "do", "make this faster"), (2, "ask", "why is this here"),
                   (3, "do", "rename the column"), (4, "do", "sort the keys")]


async def test_a_failing_callback_does_not_stop_the_watcher(repo: Path) -> None:
    queue: asyncio.Queue = asyncio.Queue()

    def broken(paths: set[str]) -> None:
        raise RuntimeError("boom")

    async def async_cb(paths: set[str]) -> None:
        await queue.put(paths)

    async with Watcher(repo, debounce_ms=30) as w:
        w.subscribe(broken)
        w.subscribe(async_cb)
        for text in ("x = 5\n", "x = 6\n"):
            (repo / "a.py").write_text(text)
            seen: set[str] = set()
            while "a.py" not in seen:
                seen |= await next_batch(queue)


async def test_ignored_dirs_get_no_watch_and_new_dirs_are_picked_up(repo: Path) -> None:
    (repo / "src").mkdir()
    (repo / "node_modules").mkdir()
    queue: asyncio.Queue = asyncio.Queue()
    async with Watcher(repo, debounce_ms=30) as w:
        assert w._dirs == ["src"]  # build/ is in .gitignore, node_modules/ always ignored
        w.subscribe(queue.put_nowait)
        (repo / "src" / "m.py").write_text("m = 1\n")
        seen: set[str] = set()
        while "src/m.py" not in seen:
            seen |= await next_batch(queue)
        (repo / "lib" / "deep").mkdir(parents=True)
        (repo / "lib" / "deep" / "n.py").write_text("n = 1\n")
        seen = set()
        while "lib/deep/n.py" not in seen:
            seen |= await next_batch(queue)
        assert "lib" in w._dirs
        assert "lib" not in seen and "lib/deep" not in seen  # directories are not "files"
        (repo / "lib" / "deep" / "n.py").write_text("n = 2\n")
        seen = set()
        while "lib/deep/n.py" not in seen:
            seen |= await next_batch(queue)
