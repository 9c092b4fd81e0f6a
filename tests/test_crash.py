"""Kill a process applying a 10-file turn with SIGKILL at many points; nothing may be lost.

After each kill every file must be wholly old or wholly new, and the journal's recovery (or,
when the turn committed, undo) must bring the tree back to exactly its pre-turn state.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from crash_worker import setup

from spark_pair.edits.journal import Journal

WORKER = str(Path(__file__).with_name("crash_worker.py"))


def tree(root: Path, temps: bool = True) -> dict[str, tuple[bytes, int] | str]:
    out: dict[str, tuple[bytes, int] | str] = {}
    for dirpath, dirnames, files in os.walk(root):
        for d in dirnames:
            out[os.path.relpath(os.path.join(dirpath, d), root)] = "dir"
        for f in files:
            if not temps and ".sp-tmp-" in f:
                continue
            p = os.path.join(dirpath, f)
            out[os.path.relpath(p, root)] = (Path(p).read_bytes(), os.stat(p).st_mode & 0o7777)
    return out


def run(args: list[str], **kw) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, WORKER, *args], capture_output=True, text=True,
                          timeout=30, **kw)


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> tuple[dict, dict, int, float]:
    """Old and new trees of an uninterrupted run, its number of disk steps and its duration."""
    base = tmp_path_factory.mktemp("ref")
    setup(base / "repo")
    old = tree(base / "repo")
    done = run([str(base / "repo"), str(base / "data"), "count"])
    assert done.returncode == 0, done.stderr
    steps, seconds = done.stdout.split()
    return old, tree(base / "repo"), int(steps), float(seconds)


def check_and_restore(base: Path, old: dict, new: dict) -> str:
    root, data = base / "repo", base / "data"
    now = tree(root, temps=False)
    for path in set(old) | set(new) | set(now):
        assert now.get(path) in (old.get(path), new.get(path)), f"{path} is neither old nor new"
    journal = Journal(root, data)
    journal.recover()
    if journal.list_turns():
        assert tree(root) == new
        journal.undo()
        outcome = "committed"
    else:
        outcome = "rolled back"
    assert tree(root) == old, f"tree not restored after a {outcome} turn"
    return outcome


def test_sigkill_at_every_kind_of_step_leaves_old_or_new_and_recovers(tmp_path, reference):
    old, new, steps, _ = reference
    rng = random.Random(3)
    points = sorted(set(rng.sample(range(1, steps + 1), min(38, steps))) | {1, steps, steps + 1})
    outcomes = []
    for n, kill_at in enumerate(points):
        base = tmp_path / f"t{n}"
        setup(base / "repo")
        done = run([str(base / "repo"), str(base / "data"), "kill", str(kill_at)])
        assert done.returncode == (0 if kill_at > steps else -signal.SIGKILL), done.stderr
        outcomes.append(check_and_restore(base, old, new))
    assert "committed" in outcomes and "rolled back" in outcomes
    assert len(outcomes) >= 40


def test_sigkill_from_outside_at_random_moments(tmp_path, reference):
    old, new, _, seconds = reference
    rng = random.Random(7)
    for n in range(15):
        base = tmp_path / f"t{n}"
        setup(base / "repo")
        proc = subprocess.Popen(
            [sys.executable, WORKER, str(base / "repo"), str(base / "data"), "wait"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert proc.stdout.readline().strip() == "ready"
            proc.stdin.write("go\n")
            proc.stdin.flush()
            time.sleep(rng.uniform(0, seconds * 1.2))  # the kill point itself is what is random
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
        finally:
            proc.kill()
            proc.wait(timeout=30)
            proc.stdin.close()
            proc.stdout.close()
        check_and_restore(base, old, new)
