"""The index of unfinished turns: recovery's cost does not grow with the history, and no crash
leaves a turn it does not find (also when the lock says the index is complete), nor does a
journal an earlier version wrote."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.disk import DiskLog, tree
from support.journal_worker import ops, setup

from spark_pair.edits.apply import apply_turn
from spark_pair.edits.journal import FileChange, Journal
from spark_pair.edits.journal import lock as journal_lock
from spark_pair.edits.ops import Hunk, Modify

WORKER = str(Path(__file__).parents[1] / "support" / "journal_worker.py")


def edit(old: str, new: str) -> Modify:
    return Modify("a.txt", [Hunk(None, None, None, None, [f"-{old}", f"+{new}"])])


@pytest.fixture
def repo(tmp_path) -> Path:
    setup(tmp_path / "repo")
    return tmp_path / "repo"


@pytest.fixture
def journal(repo, tmp_path) -> Journal:
    return Journal(repo, tmp_path / "data")


def looks_at_every_turn(monkeypatch) -> list[int]:
    """Counts the recoveries that look at every turn folder (listing the turns for undo and
    redo is not counted)."""
    seen: list[int] = []
    inside: list[int] = []
    listing, recover = Journal._listing, Journal.recover

    def counted(self):
        if inside:
            seen.append(1)
        return listing(self)

    def recovering(self):
        inside.append(1)
        try:
            return recover(self)
        finally:
            inside.pop()

    monkeypatch.setattr(Journal, "_listing", counted)
    monkeypatch.setattr(Journal, "recover", recovering)
    return seen


def seal(journal: Journal) -> bool:
    """Make the lock say what a holder that let go cleanly says: the index is complete, as of
    the journal folder's mtime now (the worst case for a crash the index must still show).
    Without a lock nothing was journaled yet."""
    if not (journal.dir / "lock").exists():
        return False
    with open(journal.dir / "lock", "r+b") as f:
        journal_lock.seal(f.fileno(), journal.dir)
    return True


def recover_locked(journal: Journal) -> list:
    with journal.locked():
        return journal.recover()


def unfinished_by_an_earlier_version(journal: Journal, repo: Path) -> bytes:
    """A turn written as the version before the index writes it (the same record, no index
    entry), cut short after it wrote a.txt; returns a.txt's bytes before the turn."""
    a = repo / "a.txt"
    old = a.read_bytes()
    journal.begin("20200101-000000-cccccc", [FileChange("a.txt", old, 0o644, b"half\n", 0o644)])
    (journal.dir / "unfinished" / "20200101-000000-cccccc").unlink()
    a.write_bytes(b"half\n")
    return old


def test_recovery_under_the_lock_reads_only_the_index(repo, journal, monkeypatch):
    for i in range(5):
        apply_turn(repo, [edit(f"three{'x' * i}", f"three{'x' * (i + 1)}")], journal=journal)
    seen = looks_at_every_turn(monkeypatch)
    assert recover_locked(journal) == [] and seen == []
    apply_turn(repo, [edit("one", "ONE")], journal=journal)
    journal.undo()
    journal.redo()
    assert seen == [] and (repo / "a.txt").read_text().startswith("ONE\n")
    assert not list((journal.dir / "unfinished").iterdir())  # every entry went with its turn


def test_an_unfinished_turn_in_a_journal_of_the_earlier_layout_is_rolled_back(
        repo, journal, monkeypatch):
    """Journals written before the index have committed turns, a lock holding the last
    holder's process id and no unfinished/ folder: the first recovery looks at every turn
    (and rolls back the unfinished one); later ones read only the index."""
    for i in range(3):
        apply_turn(repo, [edit(f"three{'x' * i}", f"three{'x' * (i + 1)}")], journal=journal)
    old = unfinished_by_an_earlier_version(journal, repo)
    (journal.dir / "unfinished").rmdir()
    (journal.dir / "lock").write_text("4242\n")
    seen = looks_at_every_turn(monkeypatch)
    turn = apply_turn(repo, [Modify("b.sh", [Hunk(None, None, None, None,
                                                   ["-echo b", "+echo B"])])], journal=journal)
    assert seen == [1] and any("20200101-000000-cccccc" in n for n in turn.notes)
    assert (repo / "a.txt").read_bytes() == old and not (journal.dir / "20200101-000000-cccccc"
                                                          ).exists()
    assert len(journal.list_turns()) == 4
    recover_locked(journal)
    assert seen == [1]


@pytest.mark.parametrize("lost", [False, True])
def test_a_turn_an_earlier_version_left_unfinished_after_this_one_is_rolled_back(
        repo, journal, monkeypatch, lost):
    """Back to an earlier version and forth again: the earlier version wrote only its process
    id in the lock (`lost`: that write did not reach the disk before a power cut, but the new
    turn folder did, and with it the journal folder's new mtime)."""
    apply_turn(repo, [edit("one", "ONE")], journal=journal)
    sealed = (journal.dir / "lock").read_bytes()
    time.sleep(0.05)  # past the file system's timestamp granularity
    old = unfinished_by_an_earlier_version(journal, repo)
    (journal.dir / "lock").write_bytes(sealed if lost else b"4242\n")
    seen = looks_at_every_turn(monkeypatch)
    [rec] = recover_locked(journal)
    assert rec.restored == ["a.txt"] and (repo / "a.txt").read_bytes() == old and seen == [1]


def test_an_undo_whose_markers_failed_is_finished_from_the_index(repo, journal, monkeypatch):
    """An undo that committed but could not set its markers (the process went on, the lock
    was let go cleanly) is found through the index alone."""
    turn = apply_turn(repo, [edit("one", "ONE")], journal=journal)
    real = Journal._finish

    def fails(self, tdir):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(Journal, "_finish", fails)
    with pytest.raises(OSError):
        journal.undo()
    monkeypatch.setattr(Journal, "_finish", real)
    seen = looks_at_every_turn(monkeypatch)
    recover_locked(journal)
    assert seen == [] and {t.turn_id: t.undone for t in journal.list_turns()}[turn.turn_id]


def test_the_index_entry_is_on_disk_before_any_file_is_touched_and_goes_after_the_commit(
        repo, journal, monkeypatch):
    """What a power cut keeps is what was synced: the entry is made before the turn's folder,
    its folder is synced before the first repository change, and it is removed only once the
    `committed` marker is synced."""
    apply_turn(repo, [edit("one", "ONE")], journal=journal)  # the folders exist already
    log = DiskLog(monkeypatch)
    turn = apply_turn(repo, ops()[1:], journal=journal)
    ev, repo_dir = log.events, str(repo.resolve()) + os.sep
    index = os.path.abspath(journal.dir / "unfinished")
    entry, tdir = os.path.join(index, turn.turn_id), os.path.abspath(journal.dir / turn.turn_id)
    first = min(i for i, e in enumerate(ev) if e[0] in ("replace", "unlink")
                and e[-1].startswith(repo_dir))
    made = log.last(lambda e: e == ("create", entry), first)
    assert 0 <= made < log.last(lambda e: e == ("mkdir", tdir), first)
    assert log.synced_between(index, made, first)
    gone = log.last(lambda e: e == ("unlink", entry), len(ev))
    marked = log.last(lambda e: e[-1] == os.path.join(tdir, "committed"), len(ev))
    assert 0 <= marked < gone and log.synced_between(tdir, marked, gone)


# ---- SIGKILL at every disk step, recovered from the index alone -------------------------------

@pytest.fixture(scope="module")
def killed(tmp_path_factory) -> tuple[Path, dict[str, int]]:
    out = tmp_path_factory.mktemp("killed")
    done = subprocess.run([sys.executable, WORKER, str(out)], capture_output=True, text=True,
                          timeout=240)
    assert done.returncode == 0, done.stderr
    return out, json.loads(done.stdout)


@pytest.fixture(scope="module")
def trees(tmp_path_factory) -> tuple[dict, dict]:
    """The tree before the turn and after it."""
    root = tmp_path_factory.mktemp("trees") / "repo"
    setup(root)
    old = tree(root)
    apply_turn(root, ops(), journal=Journal(root, root.parent / "data"))
    return old, tree(root)


def recovered_from_the_index(base: Path, monkeypatch) -> Journal:
    """Recover a killed journal as the next command does, with the lock saying the index is
    complete; it may not look at every turn. Nothing a full look would find may be left."""
    journal = Journal(base / "repo", base / "data")
    with monkeypatch.context() as patch:
        if seal(journal):
            patch.setattr(Journal, "_listing", lambda self: pytest.fail("looked at every turn"))
        else:  # killed before the lock was made: nothing is journaled
            assert not journal.dir.exists() or not any(journal.dir.glob("2*"))
        recover_locked(journal)
    assert not list((journal.dir / "unfinished").iterdir())
    for folder in journal.dir.iterdir():
        if folder.is_dir() and folder.name != "unfinished":
            assert (folder / "committed").exists() and not (folder / "finishing").exists(), folder
    return journal


@pytest.mark.parametrize("action", ["apply", "undo", "redo", "recover"])
def test_sigkill_at_every_disk_step_is_recovered_from_the_index_alone(
        killed, trees, monkeypatch, action):
    out, steps = killed
    old, new = trees
    assert steps[action] >= 25  # every step of the action was a kill point
    outcomes = set()
    for n in range(1, steps[action] + 2):
        base = out / f"{action}-{n}"
        root = base / "repo"
        now = tree(root, temps=False)
        for path in set(old) | set(new) | set(now):
            assert now.get(path) in (old.get(path), new.get(path)), (n, path)
        journal = recovered_from_the_index(base, monkeypatch)
        applied = [t for t in journal.list_turns() if t.kind == "apply"]
        if action == "recover" or not applied:  # the turn was rolled back
            assert action in ("apply", "recover") and tree(root) == old, n
            outcomes.add("old")
        elif applied[0].undone:  # the turn is undone: redo brings it back
            assert tree(root) == old, n
            journal.redo()
            assert tree(root) == new, n
            outcomes.add("undone")
        else:  # the turn is applied: undo takes it back
            assert tree(root) == new, n
            journal.undo()
            assert tree(root) == old, n
            outcomes.add("applied")
    assert len(outcomes) == (1 if action == "recover" else 2)
