"""The check runner: real shell commands, output as it comes, timeouts and cancels stop the
whole process group."""

from __future__ import annotations

import asyncio
import time

import pytest

from spark_pair.workspace.checkrun import run_check


def alive(pid: int) -> bool:
    """Running (a zombie waiting for a busy init to reap it is not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


async def wait_for_file(path, limit_s: float = 10.0) -> str:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return path.read_text().strip()
        await asyncio.sleep(0.02)
    raise AssertionError(f"{path} never appeared")


async def test_a_passing_and_a_failing_check(tmp_path):
    ok = await run_check("echo all good; exit 0", tmp_path, timeout_s=10)
    assert ok.passed and ok.exit_code == 0 and "all good" in ok.output
    assert "passed" in ok.describe()
    bad = await run_check("echo boom >&2; exit 3", tmp_path, timeout_s=10)
    assert not bad.passed and bad.exit_code == 3 and "boom" in bad.output
    assert "exit 3" in bad.describe()


async def test_it_runs_in_the_given_directory(tmp_path):
    (tmp_path / "marker.txt").write_text("here")
    res = await run_check("cat marker.txt", tmp_path, timeout_s=10)
    assert res.output == "here"


async def test_output_arrives_while_the_check_still_runs(tmp_path):
    seen: list[str] = []
    go = tmp_path / "go"
    cmd = f"echo first; while [ ! -e {go} ]; do sleep 0.05; done; echo second"
    task = asyncio.create_task(run_check(cmd, tmp_path, timeout_s=20, on_output=seen.append))
    deadline = time.monotonic() + 10
    while "first" not in "".join(seen):
        assert time.monotonic() < deadline and not task.done()
        await asyncio.sleep(0.02)
    assert "second" not in "".join(seen)
    go.touch()
    res = await task
    assert res.passed and res.output == "first\nsecond\n"


async def test_a_hanging_check_is_stopped_with_its_children(tmp_path):
    pidfile = tmp_path / "child.pid"
    cmd = f"sleep 60 & echo $! > {pidfile}; wait"
    res = await run_check(cmd, tmp_path, timeout_s=1.5)
    assert res.timed_out and not res.passed and res.exit_code is None
    assert "timed out" in res.describe()
    child = int(pidfile.read_text())
    deadline = time.monotonic() + 15
    while alive(child) and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    assert not alive(child)


async def test_a_check_ignoring_sigterm_is_killed(tmp_path):
    ready = tmp_path / "ready"
    cmd = f"trap '' TERM; echo x > {ready}; while true; do sleep 0.05; done"
    start = time.monotonic()
    res = await run_check(cmd, tmp_path, timeout_s=0.5)
    assert res.timed_out and time.monotonic() - start < 10


async def stopped(pid: int, limit_s: float = 15.0) -> bool:
    """Whether the process is gone within `limit_s` (checked every 20 ms)."""
    deadline = time.monotonic() + limit_s
    while alive(pid) and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    return not alive(pid)


async def test_cancelling_the_caller_stops_the_process_group(tmp_path):
    pidfile = tmp_path / "child.pid"
    task = asyncio.create_task(run_check(f"sleep 60 & echo $! > {pidfile}; wait", tmp_path,
                                         timeout_s=60))
    child = int(await wait_for_file(pidfile))
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await stopped(child)


async def test_a_cancel_while_the_shell_starts_still_stops_what_it_started(tmp_path,
                                                                           monkeypatch):
    """On a busy machine the shell may run its commands before the process is handed back:
    a cancel then must still stop the process group (here the hand-back is held until the
    command has started its child, and the cancel comes in between)."""
    pidfile = tmp_path / "child.pid"
    real = asyncio.create_subprocess_shell
    handed_back = asyncio.Event()

    async def slow_start(*args, **kwargs):
        proc = await real(*args, **kwargs)
        await wait_for_file(pidfile)
        await asyncio.sleep(0.2)  # the hand-back is slow; the cancel arrives meanwhile
        handed_back.set()
        return proc

    monkeypatch.setattr(asyncio, "create_subprocess_shell", slow_start)
    task = asyncio.create_task(run_check(f"sleep 60 & echo $! > {pidfile}; wait", tmp_path,
                                         timeout_s=60))
    child = int(await wait_for_file(pidfile))
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert handed_back.is_set() and await stopped(child)


async def test_only_the_tail_of_a_flood_is_kept(tmp_path):
    res = await run_check("head -c 300000 /dev/zero | tr '\\0' a; echo END", tmp_path,
                          timeout_s=20, max_output=1000)
    assert res.passed and len(res.output) <= 1000 and res.output.endswith("aEND\n")


async def test_a_missing_directory_is_reported_not_raised(tmp_path):
    res = await run_check("true", tmp_path / "nope", timeout_s=5)
    assert not res.passed and res.error and "could not start" in res.describe()
