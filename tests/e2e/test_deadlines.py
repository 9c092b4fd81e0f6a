"""--timeout bounds everything a run does: the journal lock wait and CPU-bound hunk location
and rendering (they run off the event loop and give way to the deadline)."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from support.runs import A_NEW, A_PY, check_schema, env_for, lines_of, make_repo, run, tree

from spark_pair.base.errors import Cancelled
from spark_pair.base.exitcodes import ExitCode
from spark_pair.edits.journal import Journal
from spark_pair.sim.process import SimProcess

HOLDER = """
import sys, time
from pathlib import Path
from spark_pair.edits.journal import Journal
with Journal(Path(sys.argv[1]), Path(sys.argv[2])).locked():
    print("held", flush=True)
    time.sleep(60)
"""

pytestmark = pytest.mark.xdist_group("timing")  # times paces: the timing tests run one at a time


@pytest.mark.parametrize("left", ["", "98765432109876543210\n"])
def test_a_lock_wait_gives_up_when_stop_says_so_and_names_the_holder(tmp_path: Path,
                                                                     left: str) -> None:
    """`left`: what an earlier holder left in the lock file (a longer number is not cut off
    when the next one takes the lock; only the first word is read)."""
    root = tmp_path / "repo"
    root.mkdir()
    if left:
        folder = Journal(root, tmp_path / "data").dir
        folder.mkdir(parents=True)
        (folder / "lock").write_text(left)
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(root), str(tmp_path / "data")],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        journal = Journal(root, tmp_path / "data")
        stop = threading.Event()
        threading.Timer(0.3, stop.set).start()
        with pytest.raises(Cancelled) as info:
            with journal.locked(stop.is_set):
                pass
        assert f"process {holder.pid}" in info.value.message
        assert "nothing was written" in info.value.hint
    finally:
        holder.kill()
        holder.wait(timeout=10)
        holder.stdout.close()
    with journal.locked(lambda: False):  # free again once the holder is gone
        pass


def test_undo_can_give_up_on_a_held_lock(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(root), str(tmp_path / "data")],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(Cancelled, match="undo journal lock"):
            Journal(root, tmp_path / "data").undo(stop=lambda: True)
    finally:
        holder.kill()
        holder.wait(timeout=10)
        holder.stdout.close()


def test_run_apply_gives_up_on_a_held_lock_within_the_timeout(sim: SimProcess, tmp_path: Path
                                                              ) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": A_PY})
    home = tmp_path / "home"
    sim.configure(default="```diff\n--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n def greet(name):\n"
                          "-    return 'hello ' + name\n+    return f'hello {name}'\n```\n")
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(repo), str(home / "data")],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        before = tree(repo)
        t0 = time.monotonic()
        res = run(repo, home, sim, "use an f-string", "--apply", "--json", "--timeout", "3",
                  timeout=30)
        took = time.monotonic() - t0
    finally:
        holder.kill()
        holder.wait(timeout=10)
        holder.stdout.close()
    assert res.returncode == ExitCode.TIMEOUT, res.stderr
    lines = lines_of(res.stdout)
    check_schema(lines)
    assert lines[-1]["status"] == "cancelled"
    assert "undo journal lock" in res.stderr and f"process {holder.pid}" in res.stderr
    assert "Traceback" not in res.stderr
    assert tree(repo) == before  # nothing written, though the holder let go long after
    assert took < 3 + 10  # the deadline, not the holder's 60 s (generous for a loaded machine)
    again = run(repo, home, sim, "use an f-string", "--apply", timeout=60)
    assert again.returncode == 0 and (repo / "a.py").read_text() == A_NEW


def test_a_crafted_reply_on_many_identical_lines_ends_within_the_timeout(
        sim: SimProcess, tmp_path: Path) -> None:
    """A 100,000-line file of one repeated line and a 2,000-line hunk matching nowhere: the
    check and the dry-run diff used to take minutes on the event loop, past any --timeout."""
    repo = make_repo(tmp_path / "repo", {"big.txt": "x\n" * 100_000})
    home = tmp_path / "home"
    body = " x\n" * 2000 + "-y\n+z\n"
    sim.configure(default=f"--- a/big.txt\n+++ b/big.txt\n@@ -10,2001 +10,2001 @@\n{body}")
    res = run(repo, home, sim, "edit", "--timeout", "5", timeout=40)
    assert res.returncode in (ExitCode.CONFLICT, ExitCode.TIMEOUT), res.stderr
    assert "Traceback" not in res.stderr and tree(repo)["big.txt"] == b"x\n" * 100_000


SLOW_WRITE = """
import os, stat, time
import spark_pair.headless.runner as runner
runner.CLOSE_GRACE_S = 0.2  # the backstop comes soon after the deadline
until = time.time() + float(os.environ.pop("SLOW_WRITE_S"))
real = os.fsync
def fsync(fd):  # the turn's first file sync (its journal record) lasts past the backstop
    if stat.S_ISREG(os.fstat(fd).st_mode):
        time.sleep(max(0.0, until - time.time()))
    return real(fd)
os.fsync = fsync
from spark_pair.cli.main import main
main()
"""


def test_a_deadline_during_the_write_reports_the_turn_applied(sim: SimProcess, tmp_path: Path
                                                              ) -> None:
    """Once the write has begun it runs to its end; the run says so truthfully (exit 0, the
    turn id, a note), never "cancelled, nothing written" while the files changed."""
    repo = make_repo(tmp_path / "repo", {"a.py": A_PY})
    home = tmp_path / "home"
    sim.configure(default="```diff\n--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n def greet(name):\n"
                          "-    return 'hello ' + name\n+    return f'hello {name}'\n```\n")
    env = env_for(home, sim) | {"SLOW_WRITE_S": "5.5"}  # the deadline is 3 s, the backstop 3.2
    res = subprocess.run([sys.executable, "-c", SLOW_WRITE, "run", "use an f-string", "--apply",
                          "--json", "--timeout", "3"], cwd=repo, env=env, capture_output=True,
                         text=True, timeout=60)
    assert (repo / "a.py").read_text() == A_NEW, res.stdout + res.stderr  # written
    assert res.returncode == 0, res.stderr
    lines = lines_of(res.stdout)
    check_schema(lines)
    end = lines[-1]
    assert end["status"] == "applied" and end["turn_id"]
    [applied] = [line for line in lines if line["type"] == "applied"]
    assert any("--timeout" in note and "applied whole" in note for note in applied["notes"])
    assert [t.turn_id for t in Journal(repo, home / "data").list_turns()] == [end["turn_id"]]
    assert "Traceback" not in res.stderr


def _shape(kind: str) -> tuple[dict[str, str], str]:
    """(files, reply) of a reply that takes a run far past a 2 s --timeout."""
    if kind == "sections":  # one file, a section (its own ---/+++ header) per changed line
        lines = [f"line {i}\n" for i in range(100_000)]
        return {"big.txt": "".join(lines)}, "".join(
            f"--- a/big.txt\n+++ b/big.txt\n@@ -{i + 1},1 +{i + 1},1 @@\n-line {i}\n+LINE {i}\n"
            for i in range(0, 100_000, 4))
    if kind == "files":  # very many new files
        return {"a.txt": "a\n"}, "".join(
            f"--- /dev/null\n+++ b/new/f{i}.txt\n@@ -0,0 +1,1 @@\n+x {i}\n" for i in range(20_000))
    lines = [f"line {i}\n" for i in range(400_000)]  # very many hunks for one file
    return {"big.txt": "".join(lines)}, "--- a/big.txt\n+++ b/big.txt\n" + "".join(
        f"@@ -{i + 1},1 +{i + 1},1 @@\n-line {i}\n+LINE {i}\n" for i in range(0, 400_000, 4))


@pytest.mark.parametrize("mode", ["--json", "--no-meter"])
@pytest.mark.parametrize("kind", ["sections", "files", "hunks"])
def test_a_huge_reply_ends_within_a_second_of_the_timeout(sim: SimProcess, tmp_path: Path,
                                                          kind: str, mode: str) -> None:
    """Every long step gives way to the deadline: the parse of a backlog, the check of very
    many operations, the printed diff. (A cancel used to wait until every queued piece of the
    reply was parsed, and the loop's share of a pump whose every step took a while was never
    given: one run took minutes, another ended by the 3 s backstop.)"""
    files, reply = _shape(kind)
    files[".spark-pair.toml"] = "[request]\nmax_tokens = 100000000\n"
    repo = make_repo(tmp_path / "repo", files)
    before = tree(repo)
    sim.configure(default=reply)
    t0 = time.monotonic()
    res = run(repo, tmp_path / "home", sim, "edit", "--apply", "--timeout", "2", mode,
              timeout=60)
    took = time.monotonic() - t0
    assert res.returncode == ExitCode.TIMEOUT, res.stderr[-2000:]
    assert took < 2 + 1.0, took
    assert "within --timeout 2 s" in res.stderr and "Traceback" not in res.stderr
    assert tree(repo) == before
    if mode == "--json":
        lines = lines_of(res.stdout)
        check_schema(lines)
        assert lines[-1]["status"] == "cancelled"


async def test_the_loop_gets_its_turn_from_a_pump_whose_steps_all_take_a_while() -> None:
    """A step slower than a quarter slice was taken for a wait, so a pump of such steps (a
    socket with a backlog) never gave the loop a turn: timers, the deadline's among them,
    waited for the whole backlog."""
    import asyncio

    from spark_pair.session.inbox import SLICE_S, LoopShare

    loop = asyncio.get_running_loop()
    done = 0
    seen_at: list[int] = []
    loop.call_soon(lambda: seen_at.append(done))
    share = LoopShare()
    for _ in range(200):
        until = time.perf_counter() + SLICE_S / 2  # work, never a pause
        while time.perf_counter() < until:
            pass
        done += 1
        await share.take()
    assert seen_at and seen_at[0] < 20, seen_at


def _many(n: int) -> list:
    from spark_pair.edits.ops import Hunk, Modify

    return [Modify(f"f{i}.txt", [Hunk(1, 1, 1, 1, ["-a", "+b"])]) for i in range(n)]


@pytest.mark.parametrize("changed", [False, True])
async def test_a_deadline_while_the_diff_is_rendered(tmp_path: Path, changed: bool) -> None:
    """A dry run's diff is its result: when the deadline stops its rendering, the run did not
    finish (exit 7, nothing printed). A written turn stays written (exit 0), its diff unshown."""
    import io

    from spark_pair.headless.options import RunOptions
    from spark_pair.headless.runner import Diagnostics, _Reporter
    from spark_pair.session.events import TurnResult, TurnStatus

    out, err = io.StringIO(), io.StringIO()
    opts = RunOptions("edit", timeout=1.0)
    report = _Reporter(opts, out, None, Diagnostics(err), tmp_path, None,
                       time.monotonic() - 5)  # the deadline has passed
    status = TurnStatus.APPLIED if changed else TurnStatus.DRY_RUN
    result = TurnResult("t1", status, operations=_many(500),
                        changed=[f"f{i}.txt" for i in range(500)] if changed else [])
    await report(result)
    assert out.getvalue() == ""
    if changed:
        assert report.code == 0 and "the diff is not shown" in err.getvalue()
    else:
        assert report.code == ExitCode.TIMEOUT
        assert "within --timeout 1 s" in err.getvalue()
