"""The watcher against real files in a temporary git repo (events awaited with a bound)."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest

from spark_pair.edits.fsio import atomic_write, tmp_name
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


async def test_spark_pairs_own_temp_files_are_not_changes(repo: Path) -> None:
    """An atomic write's temp file (and one a crash left) is never reported: only the file."""
    queue: asyncio.Queue = asyncio.Queue()
    async with Watcher(repo, debounce_ms=30) as w:
        w.subscribe(queue.put_nowait)
        tmp_name(repo / "a.py").write_text("left by a crash\n")
        for i in range(3):
            atomic_write(repo / "a.py", f"x = {i + 2}\n".encode())
        (repo / "b.py").write_text("y = 1\n")  # the last write: its batch ends the wait
        seen: set[str] = set()
        while "b.py" not in seen:
            seen |= await next_batch(queue)
        assert seen == {"a.py", "b.py"}
        assert w.mark_turn() == {"a.py", "b.py"}


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


# ---- a directory the user cannot read ---------------------------------------------------------
# Tests run as root, for whom permissions deny nothing; the first test raises the error the
# OS watch gives for such a directory at the boundary (watchfiles.awatch, with the exact
# message it uses), the second runs the watcher for real as an unprivileged user when it can.

def _unreadable_awatch(real, blocked: Path):
    """awatch as it behaves when `blocked` cannot be read: a recursive watch that would cover
    it, or a watch of it, fails at once with watchfiles' PermissionError."""
    def fake(*paths, recursive=True, **kw):
        covers = any(blocked == Path(p) or (recursive and Path(p) in blocked.parents)
                     for p in paths)
        if covers:
            raise PermissionError(f'Permission denied (os error 13) about ["{blocked}"]')
        return real(*paths, recursive=recursive, **kw)
    return fake


async def test_an_unreadable_directory_is_noted_once_and_the_rest_is_watched(
        repo: Path, monkeypatch, caplog) -> None:
    import watchfiles

    secret = repo / "src" / "private" / "secret"
    secret.mkdir(parents=True)
    (repo / "src" / "ok").mkdir()
    monkeypatch.setattr(watchfiles, "awatch", _unreadable_awatch(watchfiles.awatch, secret))
    queue: asyncio.Queue = asyncio.Queue()
    with caplog.at_level("WARNING"):
        async with Watcher(repo, debounce_ms=30) as w:
            w.subscribe(queue.put_nowait)
            await asyncio.sleep(0.3)  # the failed watch is replaced by narrower ones
            for rel in ("a.py", "src/ok/b.py", "src/private/c.py", "src/d.py"):
                (repo / rel).write_text("x = 3\n")
            seen: set[str] = set()
            while not {"a.py", "src/ok/b.py", "src/private/c.py", "src/d.py"} <= seen:
                seen |= await next_batch(queue)
    assert w.notes == ["cannot read src/private/secret/ (permission denied): changes inside it "
                       "are not watched"]
    warnings = [r for r in caplog.records if r.name.startswith("spark_pair")]
    assert [r.getMessage() for r in warnings] == w.notes
    assert not any(r.exc_info for r in caplog.records)  # a note, never a traceback


def _nobody_can_run() -> tuple[int, int] | None:
    """(uid, gid) of an unprivileged user that can import spark_pair with the system python."""
    import os
    import pwd
    import sys

    if os.geteuid() != 0 or sys.version_info[:2] != (3, 11):
        return None
    try:
        user = pwd.getpwnam("nobody")
    except KeyError:
        return None
    probe = subprocess.run(["/usr/bin/python3", "-c", "import spark_pair.workspace.watcher"],
                           user=user.pw_uid, group=user.pw_gid, capture_output=True,
                           env=_nobody_env(), check=False) if Path("/usr/bin/python3").exists() \
        else None
    return (user.pw_uid, user.pw_gid) if probe is not None and probe.returncode == 0 else None


def _nobody_env() -> dict[str, str]:
    import site

    import spark_pair

    src = str(Path(spark_pair.__file__).parent.parent)
    return {"PYTHONPATH": ":".join([src, *site.getsitepackages()]), "PATH": "/usr/bin:/bin",
            "HOME": "/tmp"}


NOBODY_SCRIPT = """
import asyncio, sys
from pathlib import Path
from spark_pair.workspace.watcher import Watcher

async def main(root):
    queue = asyncio.Queue()
    async with Watcher(root, debounce_ms=30) as w:
        w.subscribe(queue.put_nowait)
        await asyncio.sleep(0.5)
        (root / "top" / "ok" / "b.py").write_text("x = 2\\n")
        seen = set()
        while "top/ok/b.py" not in seen:
            seen |= await asyncio.wait_for(queue.get(), 5)
    print("\\n".join(w.notes))

asyncio.run(main(Path(sys.argv[1])))
"""


def test_an_unreadable_directory_for_real_as_an_unprivileged_user(tmp_path: Path) -> None:
    import os
    import shutil
    import tempfile

    ids = _nobody_can_run()
    if ids is None:
        pytest.skip("needs root, a 'nobody' user and a system python 3.11 that can import "
                    "spark_pair")
    root = Path(tempfile.mkdtemp(prefix="sp-unreadable-"))
    try:
        (root / "top" / "secret").mkdir(parents=True)
        (root / "top" / "ok").mkdir()
        for d, _, _files in os.walk(root):
            os.chown(d, *ids)
        os.chmod(root, 0o755)
        os.chmod(root / "top" / "secret", 0o000)
        done = subprocess.run(["/usr/bin/python3", "-c", NOBODY_SCRIPT, str(root)],
                              user=ids[0], group=ids[1], env=_nobody_env(), capture_output=True,
                              text=True, timeout=15, check=False)
    finally:
        os.chmod(root / "top" / "secret", 0o755)
        shutil.rmtree(root, ignore_errors=True)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout.strip() == ("cannot read top/secret/ (permission denied): changes "
                                   "inside it are not watched")
