"""Kill a process applying a 10-file turn with SIGKILL at many points; nothing may be lost.

After each kill every file must be wholly old or wholly new, and the journal's recovery (or,
when the turn committed, undo) must bring the tree back to exactly its pre-turn state.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import select
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from support.crash_worker import ops, setup
from support.disk import DiskLog, tree

from spark_pair.edits.apply import apply_turn
from spark_pair.edits.journal import Journal

WORKER = str(Path(__file__).parents[1] / "support" / "crash_worker.py")


def run(args: list[str], **kw) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, WORKER, *args], capture_output=True, text=True,
                          timeout=30, **kw)


@contextlib.contextmanager
def forks() -> Iterator[Callable[[str], str]]:
    """crash_worker.py serve: `ask(line)` writes a line to it and returns its answer."""
    with subprocess.Popen([sys.executable, WORKER, "serve"], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, text=True) as server:
        assert server.stdin is not None and server.stdout is not None
        stdin, stdout = server.stdin, server.stdout

        def ask(line: str) -> str:
            stdin.write(line + "\n")
            stdin.flush()
            ready, _, _ = select.select([stdout], [], [], 30)
            assert ready, f"no answer to {line!r}"
            return stdout.readline().strip()

        try:
            yield ask
        finally:
            stdin.close()
            server.wait(timeout=30)


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
    points = sorted(set(rng.sample(range(2, steps), min(38, steps - 2))) | {1, steps, steps + 1})
    outcomes = []
    with forks() as ask:
        for n, kill_at in enumerate(points):
            base = tmp_path / f"t{n}"
            setup(base / "repo")
            code = int(ask(f"{base / 'repo'}\t{base / 'data'}\tkill {kill_at}"))
            assert code == (0 if kill_at > steps else -signal.SIGKILL), kill_at
            outcomes.append(check_and_restore(base, old, new))
    assert "committed" in outcomes and "rolled back" in outcomes
    assert len(outcomes) >= 40


def test_sigkill_from_outside_at_random_moments(tmp_path, reference):
    old, new, _, seconds = reference
    rng = random.Random(7)
    with forks() as ask:
        for n in range(15):
            base = tmp_path / f"t{n}"
            setup(base / "repo")
            after = rng.uniform(0, seconds * 1.2)  # the kill point itself is what is random
            assert int(ask(f"{base / 'repo'}\t{base / 'data'}\tafter {after}")) in (
                0, -signal.SIGKILL)
            check_and_restore(base, old, new)


# ---- power loss: what is synced before what depends on it ---------------------------------


def test_each_step_of_a_turn_is_synced_before_the_next_depends_on_it(tmp_path, monkeypatch):
    """What a power cut may lose is what was not fsynced: a repository file is replaced or
    removed only once its before-image, the manifest naming it and their folders are synced;
    a file is replaced only by a synced temp file; the turn is marked committed only once
    every folder it changed is synced, and the marker itself is synced."""
    root, data = tmp_path / "repo", tmp_path / "data"
    setup(root)
    journal = Journal(root, data)
    log = DiskLog(monkeypatch)
    turn = apply_turn(root, ops(), journal=journal)
    ev, repo = log.events, str(root.resolve()) + os.sep
    tdir = os.path.abspath(journal.dir / turn.turn_id)
    rec = os.path.join(tdir, "record")
    touches = [i for i, e in enumerate(ev) if e[0] in ("replace", "unlink")
               and e[-1].startswith(repo)]
    assert touches
    first = min(touches)
    # the record (manifest and before-images): written and synced, with its folders, first
    created = log.last(lambda e: e == ("create", rec), first)
    wrote = log.last(lambda e: e == ("write", rec), first)
    assert 0 <= created < wrote and log.synced_between(rec, wrote, first)
    made = log.last(lambda e: e == ("mkdir", tdir), first)
    assert made >= 0 and log.synced_between(os.path.abspath(journal.dir), made, first)
    assert log.synced_between(tdir, created, first)
    manifest = json.loads((Path(tdir) / "record").read_bytes().split(b"\n", 1)[0])
    assert sum(1 for f in manifest["files"] if f["existed"]) == 8  # each file there before
    # each replacement: a synced temp file
    for i in touches:
        if ev[i][0] == "replace":
            wrote = log.last(lambda e, p=ev[i][1]: e[0] == "write" and e[1] == p, i)
            assert wrote >= 0 and log.synced_between(ev[i][1], wrote, i), ev[i]
    # the marker comes after every changed folder is synced; the marker is synced
    marked = log.last(lambda e: e[-1] == os.path.join(tdir, "committed"), len(ev))
    assert marked > max(touches)
    changed = [(i, os.path.dirname(e[-1])) for i, e in enumerate(ev)
               if e[0] in ("replace", "unlink", "mkdir") and e[-1].startswith(repo)]
    for i, folder in changed:
        assert log.synced_between(folder, i, marked), folder
    assert log.synced_between(tdir, marked, len(ev) + 1)
