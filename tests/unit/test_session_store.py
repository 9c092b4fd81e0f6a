"""The session store (a real SQLite file) and the history rule that decides what is resent."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from spark_pair.base.errors import UsageError
from spark_pair.session.history import STAND_IN, SessionHistory, outcome_note
from spark_pair.session.stored import Pick, StoredSession
from spark_pair.store.sessions import SCHEMA_VERSION, SessionStore, StoredTurn


def _turn(i: int, status: str = "applied", reply: str = "", **kw: object) -> StoredTurn:
    return StoredTurn(f"instruction {i}", reply or f"--- a/f{i}.py\n+++ b/f{i}.py\n" + "x" * 40,
                      "m", status, changed=[f"f{i}.py"] if status == "applied" else [],
                      **kw)  # type: ignore[arg-type]


def test_turns_model_context_kept_and_listed_newest_first(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    with SessionStore(path) as store:
        a = store.create("/r", model="m1")
        b = store.create("/r", model="m2", name="second")
        store.add_turn(a.id, _turn(1), model="m3", context=["a.py"])
        store.add_turn(b.id, _turn(2, decisions=[{"path": "b.py", "hunk": 0,
                                                  "fate": "rejected", "reason": "no"}]))
    with SessionStore(path) as store:  # reopened: all of it is there
        listed = store.listed("/r")
        assert [s.name for s in listed] == ["second", a.name]
        first = store.named("/r", a.name)
        assert first is not None and first.model == "m3" and first.context == ["a.py"]
        assert first.turns == 1 and first.last_instruction == "instruction 1"
        turns = store.turns(b.id)
        assert turns[0].decisions[0]["reason"] == "no" and turns[0].seq == 1
        assert store.listed("/other") == []


def test_a_name_used_twice_is_refused_with_a_hint(tmp_path: Path) -> None:
    with SessionStore(tmp_path / "s.sqlite3") as store:
        a = store.create("/r", name="work")
        b = store.create("/r")
        with pytest.raises(UsageError) as err:
            store.create("/r", name="work")
        assert err.value.hint
        with pytest.raises(UsageError):
            store.rename(b.id, "work")
        with pytest.raises(UsageError):
            store.rename(b.id, "two words")
        store.create("/elsewhere", name="work")  # another repository may use it
        assert {s.name for s in store.listed("/r")} == {"work", b.name}
        assert store.named("/r", "work").id == a.id  # type: ignore[union-attr]


def test_fork_copies_the_turns_and_leaves_the_original(tmp_path: Path) -> None:
    with SessionStore(tmp_path / "s.sqlite3") as store:
        a = store.create("/r")
        for i in range(3):
            store.add_turn(a.id, _turn(i))
        a = store.named("/r", a.name)  # type: ignore[assignment]
        fork = store.fork(a)
        store.add_turn(fork.id, _turn(9))
        assert [t.instruction for t in store.turns(a.id)] == [f"instruction {i}" for i in range(3)]
        assert len(store.turns(fork.id)) == 4 and fork.parent == a.name


def test_prune_removes_old_sessions_but_not_an_open_one(tmp_path: Path) -> None:
    with SessionStore(tmp_path / "s.sqlite3") as store:
        old = store.create("/r")
        busy = store.create("/r")
        fresh = store.create("/r")
        store._db.execute("UPDATE sessions SET updated = 0 WHERE id IN (?, ?)", (old.id, busy.id))
        assert store.claim(busy.id) == ""
        gone = store.prune(30)
        assert [s.name for s in gone] == [old.name]
        assert {s.name for s in store.listed("/r")} == {busy.name, fresh.name}


def test_a_session_open_in_a_live_process_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    with SessionStore(path) as store:
        info = store.create("/r", name="shared")
        store.add_turn(info.id, StoredTurn("a turn", status="applied"))  # (an empty one is
        # not kept once its owner is gone)
        other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        try:
            host = __import__("socket").gethostname()
            assert store.claim(info.id, f"{host}:{other.pid}") == ""
            with pytest.raises(UsageError) as err:
                StoredSession.open(Path("/r"), Pick(name="shared"), path=path)
            assert "open in another spark-pair" in err.value.message
        finally:
            other.kill()
            other.wait()
        stored = StoredSession.open(Path("/r"), Pick(name="shared"), path=path)  # its owner is gone
        stored.close()


@pytest.mark.parametrize("damage", ["garbage", "newer"])
def test_a_damaged_or_newer_store_is_moved_aside_never_deleted(tmp_path: Path,
                                                               damage: str) -> None:
    path = tmp_path / "s.sqlite3"
    if damage == "garbage":
        path.write_bytes(b"this is not a database" * 100)
    else:
        with SessionStore(path) as store:
            store.create("/r", name="kept")
        with sqlite3.connect(path) as db:
            db.execute("UPDATE meta SET value = ? WHERE key = 'version'",
                       (str(SCHEMA_VERSION + 1),))
    before = path.read_bytes()
    said: list[str] = []
    with SessionStore(path, warn=said.append) as store:
        assert store.moved is not None and store.moved.read_bytes() == before
        assert store.listed() == []
        store.create("/r", name="new")  # the new store works
    assert len(said) == 1 and str(store.moved) in said[0] and "nothing was deleted" in said[0]
    assert ("damaged" if damage == "garbage" else "newer") in said[0]
    assert os.path.exists(store.moved)


def test_history_rule_drops_failures_stands_in_for_rejections_keeps_reasons() -> None:
    turns = [_turn(1), _turn(2, "failed", reply="garbage that failed"),
             _turn(3, "rejected", decisions=[{"path": "f3.py", "hunk": 0, "fate": "rejected",
                                              "reason": "wrong   approach"}]),
             _turn(4)]
    history = SessionHistory(max_turns=10, budget_tokens=10_000)
    last = history.restore(turns)
    msgs = history.messages()
    text = "\n".join(m.content for m in msgs)
    assert "instruction 2" not in text and "garbage that failed" not in text
    assert STAND_IN in text and "x" * 40 in text
    assert 'reason: "wrong approach"' in text  # the reason leads the next user message
    assert [m.role for m in msgs] == ["user", "assistant"] * 3
    assert last.startswith("Outcome of your previous reply: applied to f4.py")

    every = SessionHistory(max_turns=10, budget_tokens=10_000, rule=False)
    every.restore(turns)
    assert "garbage that failed" in "\n".join(m.content for m in every.messages())


def test_history_budget_keeps_the_newest_turns_that_fit() -> None:
    turns = [_turn(i, reply="y" * 400) for i in range(10)]  # ~100 tokens each
    history = SessionHistory(max_turns=10, budget_tokens=400)  # 3 x ~117
    history.restore(turns)
    kept = [m.content for m in history.messages() if m.role == "user"]
    assert len(kept) == 3 and kept[-1].endswith("instruction 9")
    tiny = SessionHistory(max_turns=10, budget_tokens=10)
    tiny.restore([_turn(1, reply="z" * 5000)])
    (_, reply) = tiny.messages()
    assert len(reply.content) < 1000 and "left out" in reply.content  # the newest, cut to fit


def test_outcome_note_names_the_check() -> None:
    t = _turn(1, check={"command": "pytest -q", "ok": False, "tail": "1 failed"})
    assert "The check `pytest -q` failed:\n1 failed" in outcome_note(t)


def test_an_empty_session_whose_process_ended_is_not_kept(tmp_path: Path) -> None:
    host = __import__("socket").gethostname()
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    with SessionStore(tmp_path / "s.sqlite3") as store:
        left = store.create("/r", name="left")  # its terminal closed: no close, no turn
        store.claim(left.id, f"{host}:{ended.pid}")
        live = store.create("/r", name="live")  # open here now, no turn yet: listed
        store.claim(live.id)
        worked = store.create("/r", name="worked")  # a turn: kept whatever became of its owner
        store.add_turn(worked.id, _turn(1))
        store.claim(worked.id, f"{host}:{ended.pid}")
        assert {s.name for s in store.listed("/r")} == {"live", "worked"}
        assert store.named("/r", "left") is None
