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

from spark_pair.edits.journal import Journal
from spark_pair.errors import Cancelled
from spark_pair.exitcodes import ExitCode
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
from spark_pair.cli import main
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
