"""The undo journal: exact restores, refusals, recovery of interrupted turns."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from support.disk import snapshot

from spark_pair.base.errors import UndoError
from spark_pair.edits.apply import apply_turn
from spark_pair.edits.journal import FileChange, Journal
from spark_pair.edits.ops import Create, Delete, Hunk, Modify, Rename


def hunk(lines) -> Hunk:
    return Hunk(None, None, None, None, list(lines))


@pytest.fixture
def repo(tmp_path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "m.txt").write_text("one\ntwo\n")
    (root / "d.txt").write_bytes(b"delete me\r\n")
    (root / "r.sh").write_text("echo hi\n")
    os.chmod(root / "r.sh", 0o751)
    return root


@pytest.fixture
def journal(repo, tmp_path) -> Journal:
    return Journal(repo, tmp_path / "data")


def record(tdir: Path) -> tuple[dict, bytes]:
    """A turn's manifest and the before-images after it."""
    head, body = (tdir / "record").read_bytes().split(b"\n", 1)
    return json.loads(head), body


def before_image(tdir: Path, path: str) -> bytes:
    manifest, body = record(tdir)
    offset, size = next(f["at"] for f in manifest["files"] if f["path"] == path)
    return body[offset:offset + size]


OPS = lambda: [Modify("m.txt", [hunk([" one", "-two", "+TWO"])]), Create("new/dir/c.txt", "c\n"),  # noqa: E731
               Delete("d.txt", lines=["delete me"]), Rename("r.sh", "bin/r.sh")]


def test_undo_restores_the_last_turn_exactly(repo, journal):
    before = snapshot(repo)
    apply_turn(repo, OPS(), journal=journal)
    assert snapshot(repo) != before
    restored = journal.undo()
    assert sorted(restored) == sorted(["m.txt", "new/dir/c.txt", "bin/r.sh", "d.txt", "r.sh"])
    assert snapshot(repo) == before  # bytes, modes, and the created directories are gone


def test_undo_walks_back_turn_by_turn_and_never_twice(repo, journal):
    s0 = snapshot(repo)
    t1 = apply_turn(repo, [Modify("m.txt", [hunk(["-one", "+1"])])], journal=journal)
    s1 = snapshot(repo)
    t2 = apply_turn(repo, [Modify("m.txt", [hunk(["-two", "+2"])])], journal=journal)
    journal.undo()
    assert snapshot(repo) == s1
    journal.undo()
    assert snapshot(repo) == s0
    with pytest.raises(UndoError, match="nothing to undo"):
        journal.undo()
    with pytest.raises(UndoError, match="already undone"):
        journal.undo(t1.turn_id)
    turns = {t.turn_id: t for t in journal.list_turns()}
    assert turns[t1.turn_id].undone and turns[t2.turn_id].undone
    assert sum(t.kind == "undo" for t in turns.values()) == 2


def test_undo_refuses_when_a_file_changed_since_unless_forced(repo, journal):
    before = snapshot(repo)
    turn = apply_turn(repo, OPS(), journal=journal)
    (repo / "m.txt").write_text("my own later work\n")
    with pytest.raises(UndoError) as err:
        journal.undo()
    assert "m.txt" in err.value.message and "--force" in err.value.hint
    assert (repo / "m.txt").read_text() == "my own later work\n"
    journal.undo(turn.turn_id, force=True)
    assert snapshot(repo) == before


def test_undo_of_an_unknown_turn(journal):
    with pytest.raises(UndoError, match="no turn"):
        journal.undo("nope")


def test_recover_rolls_back_a_turn_without_the_committed_marker(repo, journal):
    before = snapshot(repo)
    m = repo / "m.txt"
    change = FileChange("m.txt", m.read_bytes(), 0o644 & os.stat(m).st_mode, b"half\n", 0o644)
    new = FileChange("n/x.txt", None, None, b"x\n", 0o644, ["n"])
    journal.begin("t1", [change, new])
    assert change.tmp and change.tmp.startswith(".m.txt.sp-tmp-")  # named in the manifest
    m.write_bytes(b"half\n")  # as if the process died after writing this file...
    (repo / "n").mkdir()
    (repo / "n/x.txt").write_bytes(b"x\n")
    (repo / change.tmp).write_bytes(b"partial")  # ...leaving its temp file behind
    (repo / ".m.txt.sp-tmp-mynotes").write_bytes(b"the user's")  # a look-alike user file
    (repo / ".m.txt.sp-tmp-deadbeef").write_bytes(b"mine")  # one with exactly the temp shape
    [rec] = journal.recover()
    assert sorted(rec.restored) == ["m.txt", "n/x.txt"] and not rec.kept
    assert not (repo / change.tmp).exists()
    assert (repo / ".m.txt.sp-tmp-mynotes").read_bytes() == b"the user's"
    assert (repo / ".m.txt.sp-tmp-deadbeef").read_bytes() == b"mine"
    (repo / ".m.txt.sp-tmp-mynotes").unlink()
    (repo / ".m.txt.sp-tmp-deadbeef").unlink()
    assert snapshot(repo) == before
    assert journal.list_turns() == [] and not any(journal.dir.glob("t1*"))


def test_recovery_keeps_a_file_the_user_changed_after_the_crash(repo, journal):
    m, d = repo / "m.txt", repo / "d.txt"
    old_m, old_d = m.read_bytes(), d.read_bytes()
    journal.begin("t2", [FileChange("m.txt", old_m, 0o644, b"turn\n", 0o644),
                         FileChange("d.txt", old_d, 0o644, b"turn d\n", 0o644)])
    m.write_bytes(b"turn\n")  # the turn wrote both files, then died before committing
    d.write_bytes(b"turn d\n")
    m.write_bytes(b"turn\nplus important user work\n")  # the user went on working
    [rec] = journal.recover()
    assert rec.restored == ["d.txt"] and d.read_bytes() == old_d
    assert m.read_bytes() == b"turn\nplus important user work\n"
    assert rec.kept and rec.kept[0].startswith("m.txt") and "m.txt" in rec.describe()
    assert before_image(rec.saved.parent, "m.txt") == old_m  # the before-image is not lost,
    assert (rec.saved / "m.txt").read_bytes() == old_m  # and it is there as a plain file
    assert str(rec.saved / "m.txt").startswith(str(journal.dir))  # never in the repository
    assert rec.saved.name == "before-images" and str(rec.saved) in rec.describe()
    assert not (rec.saved / "d.txt").exists()  # the restored file is back in the repository
    assert journal.recover() == [] and journal.list_turns() == []


def test_recovery_leaves_a_file_that_became_a_symlink_and_is_not_stuck(repo, journal, tmp_path):
    m = repo / "m.txt"
    journal.begin("t3", [FileChange("m.txt", m.read_bytes(), 0o644, b"turn\n", 0o644)])
    m.unlink()
    (tmp_path / "elsewhere.txt").write_text("outside\n")
    m.symlink_to(tmp_path / "elsewhere.txt")
    [rec] = journal.recover()
    assert rec.restored == [] and rec.kept and "symlink" in rec.kept[0]
    assert (tmp_path / "elsewhere.txt").read_text() == "outside\n" and m.is_symlink()
    m.unlink()
    m.write_text("fresh\n")
    turn = apply_turn(repo, [Modify("m.txt", [hunk(["-fresh", "+FRESH"])])], journal=journal)
    assert turn.changed == ["m.txt"] and m.read_text() == "FRESH\n"


def test_a_half_written_journal_entry_is_discarded(repo, journal):
    (journal.dir / "t0" / "before").mkdir(parents=True)  # died before the manifest was written
    before = snapshot(repo)
    assert journal.recover() == []
    assert snapshot(repo) == before and not (journal.dir / "t0").exists()


def test_manifest_records_before_images_and_after_hashes(repo, journal):
    turn = apply_turn(repo, OPS(), journal=journal, summary="rename and friends")
    manifest, _ = record(journal.dir / turn.turn_id)
    files = {f["path"]: f for f in manifest["files"]}
    assert manifest["summary"] == "rename and friends"
    assert files["new/dir/c.txt"]["existed"] is False and files["new/dir/c.txt"]["new_dirs"] == [
        "new",
        "new/dir",
    ]
    assert files["d.txt"]["after_sha256"] is None
    assert before_image(journal.dir / turn.turn_id, "d.txt") == b"delete me\r\n"
    assert files["r.sh"]["mode"] == 0o751


def test_journals_are_kept_per_repository(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    assert Journal(a, tmp_path / "d").dir != Journal(b, tmp_path / "d").dir
    (tmp_path / "alias").symlink_to(a)
    assert Journal(tmp_path / "alias", tmp_path / "d").dir == Journal(a, tmp_path / "d").dir


def test_default_location_is_under_the_data_dir(tmp_path, monkeypatch, repo):
    monkeypatch.setenv("SPARK_PAIR_HOME", str(tmp_path / "home"))
    assert str(Journal(repo).dir).startswith(str(tmp_path / "home" / "data" / "journal"))


def test_a_journal_that_cannot_be_written_changes_nothing(repo, journal):
    from spark_pair.base.errors import ApplyError

    before = snapshot(repo)
    journal.dir.parent.mkdir(parents=True)
    journal.dir.write_text("in the way")  # the journal directory cannot be created
    with pytest.raises(ApplyError) as err:
        apply_turn(repo, OPS(), journal=journal)
    assert snapshot(repo) == before and "journal" in err.value.message


def test_a_reused_turn_id_is_refused(repo, journal):
    from spark_pair.base.errors import ApplyError

    apply_turn(repo, [Create("a.txt", "a\n")], journal=journal, turn_id="same")
    with pytest.raises(ApplyError, match="already in the journal"):
        apply_turn(repo, [Create("b.txt", "b\n")], journal=journal, turn_id="same")
    assert not (repo / "b.txt").exists()


def test_a_damaged_journal_is_a_clear_error_and_never_undoes_an_older_turn(repo, journal):
    first = apply_turn(repo, [Modify("m.txt", [hunk(["-one", "+ONE"])])], journal=journal)
    second = apply_turn(repo, [Modify("m.txt", [hunk(["-two", "+TWO"])])], journal=journal)
    rec = journal.dir / second.turn_id / "record"
    rec.write_bytes(rec.read_bytes()[:-1] + b"X")  # one byte of the before-image differs
    with pytest.raises(UndoError, match="damaged") as info:
        journal.undo(second.turn_id)
    assert info.value.hint and (repo / "m.txt").read_text() == "ONE\nTWO\n"
    rec.write_text("{not json")
    assert [t.turn_id for t in journal.list_turns()] == [first.turn_id]
    assert journal.damaged == [second.turn_id]
    with pytest.raises(UndoError, match="damaged"):
        journal.undo()  # the newest entry is unreadable: the older turn is not undone instead
    assert (repo / "m.txt").read_text() == "ONE\nTWO\n"


def test_redo_after_undo_reapplies_creates_deletes_renames_and_modes_exactly(repo, journal):
    before = snapshot(repo)
    apply_turn(repo, OPS(), journal=journal)
    after = snapshot(repo)
    journal.undo()
    assert snapshot(repo) == before
    written = journal.redo()
    assert sorted(written) == sorted(["m.txt", "new/dir/c.txt", "bin/r.sh", "d.txt", "r.sh"])
    assert snapshot(repo) == after  # bytes, modes, the created directories, the rename
    with pytest.raises(UndoError, match="nothing to redo"):
        journal.redo()
    journal.undo()  # the redone turn can be undone again, just as exactly
    assert snapshot(repo) == before
    journal.redo()
    assert snapshot(repo) == after


def test_redo_walks_forward_in_the_order_undo_walked_back(repo, journal):
    s0 = snapshot(repo)
    apply_turn(repo, [Modify("m.txt", [hunk(["-one", "+1"])])], journal=journal)
    s1 = snapshot(repo)
    apply_turn(repo, [Modify("m.txt", [hunk(["-two", "+2"])])], journal=journal)
    s2 = snapshot(repo)
    journal.undo()
    journal.undo()
    assert snapshot(repo) == s0
    journal.redo()
    assert snapshot(repo) == s1
    journal.redo()
    assert snapshot(repo) == s2
    with pytest.raises(UndoError, match="nothing to redo"):
        journal.redo()


def test_a_new_turn_after_undo_ends_the_redo_chain(repo, journal):
    apply_turn(repo, [Modify("m.txt", [hunk(["-one", "+1"])])], journal=journal)
    journal.undo()
    apply_turn(repo, [Create("other.txt", "x\n")], journal=journal)
    with pytest.raises(UndoError, match="nothing to redo"):
        journal.redo()
    assert (repo / "m.txt").read_text() == "one\ntwo\n"


def test_redo_refuses_when_a_file_changed_since_the_undo_unless_forced(repo, journal):
    apply_turn(repo, [Modify("m.txt", [hunk(["-one", "+1"])])], journal=journal)
    journal.undo()
    (repo / "m.txt").write_text("mine\n")
    with pytest.raises(UndoError) as err:
        journal.redo()
    assert "m.txt" in err.value.message and "--force" in err.value.hint
    assert (repo / "m.txt").read_text() == "mine\n"
    journal.redo(force=True)
    assert (repo / "m.txt").read_text() == "1\ntwo\n"


class _Died(BaseException):
    """The process dying at this point (nothing after it runs)."""


@pytest.mark.parametrize("step", ["undo", "redo"])
def test_a_crash_between_an_undo_or_redo_commit_and_its_markers_is_finished_by_recover(
        repo, journal, monkeypatch, step):
    turn = apply_turn(repo, [Modify("m.txt", [hunk(["-one", "+1"])])], journal=journal)
    if step == "redo":
        journal.undo()

    def die(self, tdir):
        raise _Died

    with monkeypatch.context() as patch:
        patch.setattr(Journal, "_finish", die)
        with pytest.raises(_Died):  # right after the turn committed
            journal.undo() if step == "undo" else journal.redo()
    undo_turn = next(t for t in journal.list_turns() if t.kind == "undo")
    unfinished = {t.turn_id: t.undone for t in journal.list_turns()}
    assert unfinished[turn.turn_id] == (step == "redo")  # the markers were not set
    journal.recover()
    turns = {t.turn_id: t for t in journal.list_turns()}
    assert turns[turn.turn_id].undone == (step == "undo")
    assert turns[undo_turn.turn_id].undone == (step == "redo")
    assert not list(journal.dir.glob("*/finishing"))
    if step == "redo":
        journal.undo()
        assert (repo / "m.txt").read_text() == "one\ntwo\n"
    else:
        journal.redo()
        assert (repo / "m.txt").read_text() == "1\ntwo\n"


def test_recovery_reads_no_committed_apply_turn(repo, journal, monkeypatch):
    """Every apply recovers first: its cost must not grow with the turns kept."""
    for i in range(5):
        apply_turn(repo, [Create(f"f{i}.txt", "x\n")], journal=journal)
    journal.undo()
    read = []
    real = Journal._manifest
    monkeypatch.setattr(Journal, "_manifest", staticmethod(lambda t: read.append(t) or real(t)))
    assert journal.recover() == []
    assert read == []


def test_a_record_cut_short_by_a_crash_is_discarded_and_touches_nothing(repo, journal):
    m = repo / "m.txt"
    tdir = journal.begin("t5", [FileChange("m.txt", m.read_bytes(), 0o644, b"new\n", 0o644)])
    data = (tdir / "record").read_bytes()
    (tdir / "record").write_bytes(data[:-3])  # the crash came before the record was synced
    before = snapshot(repo)
    assert journal.recover() == []
    assert snapshot(repo) == before and not any(journal.dir.glob("t5*"))


def test_undo_and_redo_work_where_the_file_system_has_no_hard_links(repo, journal, monkeypatch):
    import errno

    def no_link(*args, **kwargs):
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_link)  # FAT, exFAT, some network file systems
    before = snapshot(repo)
    apply_turn(repo, OPS(), journal=journal)
    after = snapshot(repo)
    journal.undo()
    assert snapshot(repo) == before
    journal.redo()
    assert snapshot(repo) == after
    journal.undo()
    assert snapshot(repo) == before
    assert not list(journal.dir.glob("*/finishing"))


def _synced_dirs(monkeypatch) -> list[Path]:
    """The folders fsynced from now on (by the path of the synced descriptor)."""
    synced: list[Path] = []
    real = os.fsync

    def fsync(fd):
        path = Path(os.readlink(f"/proc/self/fd/{fd}"))
        if path.is_dir():
            synced.append(path)
        return real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    return synced


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")
def test_the_first_turn_makes_the_journal_folders_durable_and_later_turns_do_not_sync_them(
        repo, tmp_path, monkeypatch):
    data = tmp_path / "home" / "data"
    journal = Journal(repo, data)
    synced = _synced_dirs(monkeypatch)
    apply_turn(repo, [Create("a.txt", "a\n")], journal=journal)
    for made in (data, data / "journal", journal.dir):  # each new folder's name is synced
        assert made.parent.resolve() in synced
    synced.clear()
    apply_turn(repo, [Create("b.txt", "b\n")], journal=journal)
    assert not {p.resolve() for p in (tmp_path / "home", data, data / "journal")} & set(synced)


def test_a_rollback_that_hits_a_disk_fault_is_tried_again_once_the_fault_is_gone(
        repo, journal, monkeypatch):
    import errno

    from spark_pair.base.errors import ApplyError
    from spark_pair.edits.journal import recovery

    m = repo / "m.txt"
    old = m.read_bytes()
    journal.begin("t6", [FileChange("m.txt", old, 0o644, b"turn\n", 0o644)])
    m.write_bytes(b"turn\n")  # the turn wrote the file, then died

    def faulty(full):
        raise OSError(errno.EIO, "Input/output error")

    with monkeypatch.context() as patch:
        patch.setattr(recovery, "read_state", faulty)
        with pytest.raises(ApplyError, match="rolling it back failed") as err:
            journal.recover()
        assert "next spark-pair command" in err.value.hint
    assert m.read_bytes() == b"turn\n" and not any(journal.dir.glob("*.interrupted"))
    [rec] = journal.recover()  # the fault is gone: the turn is rolled back now
    assert rec.restored == ["m.txt"] and m.read_bytes() == old


def test_a_commit_that_fails_to_sync_is_rolled_back_now_or_by_the_next_command(
        repo, journal, monkeypatch):
    from spark_pair.base.errors import ApplyError
    from spark_pair.edits import fsio

    before = snapshot(repo)
    real = fsio.fsync_dir
    failing = []

    def fsync_dir(path):
        if failing or (path.parent == journal.dir and (path / "committed").exists()):
            failing.append(path)  # from the commit's sync on, every folder sync fails
            raise OSError(5, "Input/output error")
        return real(path)

    with monkeypatch.context() as patch:
        patch.setattr(fsio, "fsync_dir", fsync_dir)
        with pytest.raises(ApplyError) as err:
            apply_turn(repo, OPS(), journal=journal)
    assert "putting the files back failed too" in err.value.message
    assert "hold the turn's new content" in err.value.message  # what the tree holds now
    assert "spark-pair undo --list" in err.value.hint and "nothing was" not in err.value.hint
    assert journal.list_turns() == []  # not recorded as applied
    journal.recover()
    assert snapshot(repo) == before


KILL_IN_RESTORE = """
import os, signal, sys
from pathlib import Path
from spark_pair.edits.journal import Journal
real = os.replace
def replace(src, dst, *args, **kwargs):
    if ".sp-tmp-" in str(src):  # a restored file is written: die before it is moved in place
        os.kill(os.getpid(), signal.SIGKILL)
    return real(src, dst, *args, **kwargs)
os.replace = replace
Journal(Path(sys.argv[1]), Path(sys.argv[2])).recover()
"""


def test_a_crash_during_recovery_leaves_no_temp_file_for_good(repo, journal, tmp_path):
    import signal
    import subprocess
    import sys

    d = repo / "d.txt"
    old = d.read_bytes()
    journal.begin("t7", [FileChange("d.txt", old, os.stat(d).st_mode & 0o7777, None, None)])
    d.unlink()  # the turn deleted the file, then died
    proc = subprocess.run([sys.executable, "-c", KILL_IN_RESTORE, str(repo), str(journal.data_dir)],
                          timeout=60)
    assert proc.returncode == -signal.SIGKILL
    assert list(repo.glob(".d.txt.sp-tmp-*"))  # the recovery's temp file, left by its crash
    [rec] = journal.recover()
    assert rec.restored == ["d.txt"] and d.read_bytes() == old
    assert not list(repo.glob(".*.sp-tmp-*"))


def test_a_same_size_edit_and_its_undo_are_seen_by_pythons_bytecode_cache(tmp_path):
    """`a - b` -> `a * b` keeps the file's size; written in the second its bytecode was made,
    Python's cache (size + whole-second time) would run the old code. Each write moves the
    time on, so a check run right after the turn, and after its undo, runs what is on disk."""
    import subprocess
    import sys
    root = tmp_path / "repo"
    root.mkdir()
    (root / "calc.py").write_text("def f(a, b):\n    return a - b\n")
    journal = Journal(root, tmp_path / "data")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

    def run() -> str:
        return subprocess.run([sys.executable, "-c", "import calc; print(calc.f(6, 3))"],
                              cwd=root, env=env, capture_output=True, text=True,
                              timeout=30).stdout.strip()

    assert run() == "3" and any((root / "__pycache__").iterdir())
    apply_turn(root, [Modify("calc.py", [hunk([" def f(a, b):", "-    return a - b",
                                               "+    return a * b"])])], journal=journal)
    assert run() == "18"
    journal.undo()
    assert run() == "3"
