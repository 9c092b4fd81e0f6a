"""What a person made of a turn: verdicts per hunk, the note the model gets next, the records
`spark-pair stats` reads. The end-to-end test runs a session against the simulator process."""

from __future__ import annotations

import asyncio

from spark_pair.edits.amend import amend_hunk
from spark_pair.edits.ops import Create, Delete, Hunk, Modify, Rename
from spark_pair.session.approval import Action, Decision
from spark_pair.session.events import TurnFinished
from spark_pair.session.review import note_for_model, verdicts_of
from spark_pair.session.runtime import open_runtime
from spark_pair.sim.process import SimProcess
from spark_pair.store import RequestStore
from spark_pair.store.verdicts import Fate, shares

H1 = Hunk(1, 2, 1, 2, [" a", "-b", "+B"])
H2 = Hunk(8, 2, 8, 2, [" h", "-i", "+I"])
H3 = Hunk(20, 1, 20, 1, ["-t", "+T"])
OPS = [Modify("m.py", [H1, H2, H3]), Create("n.py", "x = 1\n"), Delete("old.py"),
       Rename("r.py", "s.py")]


def test_each_hunk_and_each_hunkless_operation_gets_one_verdict():
    own = amend_hunk(H2, "h\nI by hand\n")
    decisions = [Decision(Action.ACCEPT, hunks=(0, 1), notes=((2, "keep t lower case"),),
                          amended=((1, own),)),
                 Decision(Action.ACCEPT, content="x = 2\n"),
                 Decision(Action.REJECT, "we still need it"),
                 Decision(Action.ACCEPT)]
    vs = verdicts_of(OPS, decisions)
    assert [(v.op_index, v.hunk, v.fate) for v in vs] == [
        (0, 0, Fate.KEPT), (0, 1, Fate.AMENDED), (0, 2, Fate.REJECTED),
        (1, None, Fate.AMENDED), (2, None, Fate.REJECTED), (3, None, Fate.KEPT)]
    assert vs[2].reason == "keep t lower case" and vs[4].reason == "we still need it"
    assert vs[1].text == "h\nI by hand\n" and vs[5].path == "r.py -> s.py"


def test_the_note_says_exactly_what_was_applied_amended_and_rejected_and_why():
    own = amend_hunk(H2, "h\nI by hand\n")
    note = note_for_model(verdicts_of(OPS[:3], [
        Decision(Action.ACCEPT, hunks=(0, 1), notes=((2, "keep  t\nlower case"),),
                 amended=((1, own),)),
        Decision(Action.ACCEPT),
        Decision(Action.REJECT)]))
    assert "applied as you proposed: m.py hunk 1; n.py (create)" in note
    assert ("applied as the user rewrote it: m.py hunk 2; it now reads:\n"
            "```\nh\nI by hand\n```") in note
    assert 'rejected, not applied: m.py hunk 3 (reason: "keep t lower case")' in note
    assert "rejected, not applied: old.py (delete) (no reason given)" in note


def test_nothing_to_tell_when_everything_was_kept_as_proposed():
    assert note_for_model(verdicts_of(OPS, [Decision(Action.ACCEPT)] * 4)) == ""


def test_the_store_keeps_verdicts_and_shares_are_per_model(tmp_path):
    store = RequestStore(tmp_path / "r.sqlite3")
    accept_two = Decision(Action.ACCEPT, hunks=(0, 1), amended=((1, amend_hunk(H2, "x\n")),))
    store.record_verdicts("t1", "fast", verdicts_of(OPS[:1], [accept_two]), ts=100.0)
    store.record_verdicts("t2", "fast", verdicts_of(OPS[1:2], [Decision(Action.ACCEPT)]),
                          ts=200.0)
    store.record_verdicts("t3", "strong", verdicts_of(OPS[:1], [Decision(Action.ACCEPT)]),
                          ts=300.0)
    store.close()
    with RequestStore(tmp_path / "r.sqlite3", must_exist=True) as again:
        fast, strong = shares(again.verdict_rows())
        assert (fast.model, fast.turns, fast.proposed, fast.kept, fast.amended,
                fast.rejected) == ("fast", 2, 4, 2, 1, 1)
        assert fast.share(Fate.KEPT) == 0.5 and strong.share(Fate.KEPT) == 1.0
        assert [s.model for s in shares(again.verdict_rows(since=150.0))] == ["fast", "strong"]
        assert shares(again.verdict_rows(since=250.0))[0].proposed == 3


SOURCE = "".join(f"line {i}\n" for i in range(1, 31))
REPLY = ("--- a/m.txt\n+++ b/m.txt\n@@ -2,3 +2,3 @@\n line 2\n-line 3\n+LINE 3\n line 4\n"
         "@@ -20,3 +20,3 @@\n line 20\n-line 21\n+LINE 21\n line 22\n")


class Person:
    """Accepts the first hunk, rejects the second with a reason, as a person at a screen."""

    async def decide(self, proposal):
        await asyncio.sleep(0)
        return Decision(Action.ACCEPT, hunks=(0,), notes=((1, "line 21 must stay lower case"),))


async def test_the_next_request_carries_the_reason_and_stats_the_verdicts(
        tmp_path, sim: SimProcess, monkeypatch):
    monkeypatch.setenv("SPARK_PAIR_HOME", str(tmp_path / "home"))
    root = tmp_path / "repo"
    root.mkdir()
    (root / "m.txt").write_text(SOURCE)
    sim.configure(replies=[{"match": "capitalise", "text": REPLY}], default="")
    store_path = tmp_path / "requests.sqlite3"
    overrides = {"model.base_url": sim.base_url, "model.name": "gpt-5.3-codex-spark",
                 "session.transport": "chat"}
    async with open_runtime(root, approver=Person(), overrides=overrides, watch=False,
                            env={"SPARK_PAIR_API_KEY": "k"},
                            store_path=store_path) as rt:
        finished = [e async for e in rt.session.turn("capitalise lines 3 and 21", ["m.txt"])
                    if isinstance(e, TurnFinished)]
        assert finished[0].result.status == "applied"
        assert (root / "m.txt").read_text() == SOURCE.replace("line 3\n", "LINE 3\n")
        sim.clear_requests()
        async for _ in rt.session.turn("try again", ["m.txt"]):
            pass
    sent = str(sim.requests()[-1])
    assert "m.txt hunk 2 (reason: \\\"line 21 must stay lower case\\\")" in sent \
        or 'm.txt hunk 2 (reason: "line 21 must stay lower case")' in sent
    assert "applied as you proposed: m.txt hunk 1" in sent
    with RequestStore(store_path, must_exist=True) as store:
        (only,) = shares(store.verdict_rows())
    assert (only.model, only.proposed, only.kept, only.rejected) == ("gpt-5.3-codex-spark", 2, 1, 1)
