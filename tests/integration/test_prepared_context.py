"""The context read ahead: enter builds the request from the prepared files without reading,
and a file changed after it was prepared is never sent as it was (the simulator as a real
process reads the request)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from spark_pair.protocol.client import ClientOptions, ModelClient
from spark_pair.session.approval import PolicyApprover
from spark_pair.session.events import TurnFinished
from spark_pair.session.session import Session
from spark_pair.sim.process import SimProcess
from spark_pair.workspace import FileCache, Workspace
from spark_pair.workspace.filecache import RACY_NS

OLD = "VALUE = 'old'\n"
NEW = "VALUE = 'new'\n"  # the same size: only the bytes differ


def later() -> int:
    """A clock past the racy window: files made by the test count as settled."""
    return time.time_ns() + 2 * RACY_NS


def next_tick(path: Path) -> None:
    """Return once a write now gets a newer ctime than `path` has (a file-system clock tick;
    bounded)."""
    probe = path.with_name(".tick")
    before = path.stat().st_ctime_ns
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        probe.write_text("tick")
        if probe.stat().st_ctime_ns > before:
            probe.unlink()
            return
    raise AssertionError("the file-system clock did not move")


def rewrite_same_size(path: Path, text: str) -> None:
    """Change the bytes, keep size and mtime: only ctime (and the bytes) tell."""
    info = path.stat()
    path.write_text(text)
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))
    assert path.stat().st_size == info.st_size and path.stat().st_mtime_ns == info.st_mtime_ns


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "a.py").write_text(OLD)
    (root / "b.py").write_text("B = 1\n")
    return root


def test_prepared_files_build_without_reading_until_one_changes(tree: Path) -> None:
    ws = Workspace(tree, files=FileCache(tree, clock=later))
    prepared = ws.prepare(["a.py", "b.py"])
    assert prepared.tokens["a.py"] > 0 and prepared.again_in_s is None
    built = ws.build_now("go", ["a.py", "b.py"], followup=False)
    assert built is not None and OLD in built[0].new_input[-1].content
    next_tick(tree / "a.py")
    rewrite_same_size(tree / "a.py", NEW)
    assert ws.build_now("go", ["a.py", "b.py"], followup=False) is None  # stat told
    request, hashes = ws.build("go", ["a.py", "b.py"], followup=False)
    assert NEW in request.new_input[-1].content and OLD not in request.new_input[-1].content
    from spark_pair.edits.ops import content_hash

    assert hashes["a.py"] == content_hash(NEW.encode())


def test_a_file_read_within_the_racy_window_is_never_trusted(tree: Path) -> None:
    """Written and read within one clock tick, rewritten in the same tick: stat may not show it,
    so the prepared copy is not used and `prepare` says when to look again."""
    ws = Workspace(tree)  # the real clock: a.py was written just now
    prepared = ws.prepare(["a.py"])
    assert prepared.again_in_s is not None and 0 < prepared.again_in_s <= RACY_NS / 1e9
    assert ws.build_now("go", ["a.py"], followup=False) is None
    rewrite_same_size(tree / "a.py", NEW)
    request, _ = ws.build("go", ["a.py"], followup=False)
    assert NEW in request.new_input[-1].content


def test_a_created_deleted_or_retargeted_file_is_noticed(tree: Path) -> None:
    ws = Workspace(tree, files=FileCache(tree, clock=later))
    (tree / "target.py").write_text("T = 1\n")
    (tree / "link.py").symlink_to("b.py")
    ws.prepare(["new.py", "b.py", "link.py"])
    assert ws.build_now("go", ["new.py", "b.py", "link.py"], followup=False) is not None
    (tree / "new.py").write_text("N = 1\n")
    assert ws.build_now("go", ["new.py"], followup=False) is None
    ws.prepare(["new.py", "b.py", "link.py"])
    (tree / "b.py").unlink()
    assert ws.build_now("go", ["b.py"], followup=False) is None
    (tree / "link.py").unlink()
    (tree / "link.py").symlink_to("target.py")
    assert ws.build_now("go", ["link.py"], followup=False) is None
    request, _ = ws.build("go", ["new.py", "b.py", "link.py"], followup=False)
    text = request.new_input[-1].content
    assert "N = 1" in text and "T = 1" in text and "B = 1" not in text


def test_prepare_names_the_context_files_missing_on_disk(tree: Path) -> None:
    """A deleted context file is named missing (an unreadable one is not: it exists), and is
    no longer once it is back."""
    ws = Workspace(tree, files=FileCache(tree, clock=later))
    (tree / "blob.bin").write_bytes(b"\0binary")
    assert ws.prepare(["a.py", "b.py", "blob.bin"]).missing == frozenset()
    (tree / "b.py").unlink()
    prepared = ws.prepare(["a.py", "b.py", "blob.bin"])
    assert prepared.missing == {"b.py"} and prepared.tokens["a.py"] > 0
    (tree / "b.py").write_text("B = 2\n")
    assert ws.prepare(["a.py", "b.py"]).missing == frozenset()


async def test_the_request_at_the_server_holds_the_bytes_on_disk_at_enter(
        sim: SimProcess, tree: Path) -> None:
    """Prepared, then changed (same size, same mtime) right before the turn: the simulator
    receives the new bytes; with nothing changed the request is built on the loop."""
    sim.configure(default="")
    options = ClientOptions(base_url=sim.base_url, api_key="sk-test", model="gpt-5.3-codex-spark",
                            transport="ws")
    async with ModelClient(options) as client:
        ws = Workspace(tree, files=FileCache(tree, clock=later))
        session = Session(tree, client, PolicyApprover(), workspace=ws)
        built_now = []
        build_now = ws.build_now

        def spy(*args: object, **kwargs: object) -> object:
            out = build_now(*args, **kwargs)  # type: ignore[arg-type]
            built_now.append(out is not None)
            return out

        ws.build_now = spy  # type: ignore[method-assign]
        for marker, change in (("FIRST", False), ("SECOND", True)):
            ws.prepare(["a.py", "b.py"])
            if change:
                next_tick(tree / "a.py")
                rewrite_same_size(tree / "a.py", NEW)
            async for event in session.turn(f"{marker} look", ["a.py", "b.py"]):
                if isinstance(event, TurnFinished):
                    error = event.result.error  # (only the request matters here)
                    assert error is None or "reply is empty" in str(error), error
    assert built_now == [True, False]
    bodies = [json.dumps(r["body"]) for r in sim.requests()
              if r.get("body") and r["body"].get("generate", True) is not False]
    first = next(b for b in bodies if "FIRST" in b)
    second = next(b for b in bodies if "SECOND" in b)
    assert "VALUE = 'old'" in first
    assert "VALUE = 'new'" in second and "VALUE = 'old'" not in second
