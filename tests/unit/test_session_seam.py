"""The session as a front end drives it: proposals decided per hunk and during the stream, stale
files at once, rewind and cancel telling proposals why they ended, one turn at a time, frames.
Real parser, apply, journal and watcher; the client is the scripted stand-in of test_session."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from support.scripted import DIFF, RewindingClient, ScriptedClient, collect, make, make_files

from spark_pair.base.errors import TurnInProgress
from spark_pair.edits.ops import Hunk
from spark_pair.protocol import events as pe
from spark_pair.session.approval import Action, Decision, Ended, PolicyApprover, Proposal
from spark_pair.session.events import (
    Decided,
    Frame,
    OperationProposed,
    RefusalKind,
    Refused,
    Stale,
    TurnFinished,
    TurnStarted,
    TurnStatus,
)
from spark_pair.session.inbox import GATHER_CHARS
from spark_pair.workspace import Watcher

pytestmark = pytest.mark.timeout(30)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_files(tmp_path)

LONG = "".join(f"line {i}\n" for i in range(1, 31))
TWO_HUNKS = ("--- a/long.txt\n+++ b/long.txt\n"
             "@@ -2,3 +2,3 @@\n line 2\n-line 3\n+LINE THREE\n line 4\n"
             "@@ -25,3 +25,3 @@\n line 25\n-line 26\n+LINE TWENTY-SIX\n line 27\n")


class Person:
    """An approver that waits for the test to decide, one pending future per index."""

    def __init__(self) -> None:
        self.asked: list[Proposal] = []
        self.pending: dict[int, asyncio.Future[Decision]] = {}
        self.new_question = asyncio.Event()

    async def decide(self, proposal: Proposal) -> Decision:
        future = asyncio.get_running_loop().create_future()
        self.asked.append(proposal)
        self.pending[proposal.index] = future
        self.new_question.set()
        return await future

    async def answer(self, index: int, decision: Decision) -> None:
        """Answer the open question for `index` (once the approver has been asked it)."""
        async with asyncio.timeout(5):
            while index not in self.pending or self.pending[index].done():  # ended: wait
                self.new_question.clear()
                await self.new_question.wait()
        self.pending.pop(index).set_result(decision)


@pytest.fixture
def long_repo(repo: Path) -> Path:
    (repo / "long.txt").write_text(LONG)
    return repo


async def test_the_approver_gets_a_proposal_and_may_accept_one_hunk(long_repo: Path,
                                                                    tmp_path: Path) -> None:
    person = Person()
    session = make(long_repo, ScriptedClient(TWO_HUNKS), person, tmp_path)

    async def on(ev) -> None:
        if isinstance(ev, OperationProposed):
            await person.answer(ev.index, Decision(Action.ACCEPT, hunks=(1,)))
            assert ev.proposal is person.asked[-1]

    events = await collect(session, files=("long.txt",), on=on)
    started = events[0]
    assert isinstance(started, TurnStarted)
    [proposal] = person.asked
    assert (proposal.turn_id, proposal.index, proposal.stale, proposal.ended) == (
        started.turn_id, 0, False, None)
    assert len(proposal.op.hunks) == 2
    result = events[-1].result
    assert result.status == TurnStatus.APPLIED, result.error
    text = (long_repo / "long.txt").read_text()
    assert "LINE TWENTY-SIX" in text and "LINE THREE" not in text and "line 3\n" in text


async def test_a_decision_may_arrive_while_the_stream_still_runs(repo: Path,
                                                                 tmp_path: Path) -> None:
    # the stream pauses after the second file's header: the first operation is complete
    client = ScriptedClient(DIFF, pause_after=DIFF.index("@@ -0,0") // 7 + 1)
    person = Person()
    session = make(repo, client, person, tmp_path)

    async def on(ev) -> None:
        if isinstance(ev, OperationProposed) and ev.index == 0:
            await person.answer(0, Decision(Action.ACCEPT))
        elif isinstance(ev, Decided) and ev.index == 0:
            assert not client.resume.is_set()  # the stream is still held
            client.resume.set()
        elif isinstance(ev, OperationProposed):
            await person.answer(ev.index, Decision(Action.REJECT, "not now"))

    events = await collect(session, on=on)
    kinds = [type(e) for e in events]
    assert kinds.index(Decided) < kinds.index(pe.Completed)
    assert events[-1].result.status == TurnStatus.APPLIED
    assert (repo / "a.txt").read_text() == "one\nTWO\nthree\nfour\n"


async def test_a_second_overlapping_turn_is_refused_with_a_hint(repo: Path,
                                                                 tmp_path: Path) -> None:
    client = ScriptedClient(DIFF, pause_after=1)
    session = make(repo, client, PolicyApprover(), tmp_path)
    first = session.turn("edit", ["a.txt"])
    await first.__anext__()  # TurnStarted: the turn is running
    assert session.running
    with pytest.raises(TurnInProgress) as info:
        session.turn("again")
    assert info.value.hint and "cancel" in info.value.hint
    with pytest.raises(TurnInProgress):
        session.frames("again")
    client.resume.set()
    rest = [ev async for ev in first]
    assert rest[-1].result.status == TurnStatus.DRY_RUN and not session.running
    # once it is over, the next turn runs
    client.text = ""  # (an empty reply: the turn runs, and fails saying so)
    result = (await collect(session))[-1].result
    assert result.status == TurnStatus.FAILED and "the reply is empty" in str(result.error)


async def test_cancel_with_no_turn_running_does_nothing(repo: Path, tmp_path: Path) -> None:
    session = make(repo, ScriptedClient(DIFF), PolicyApprover(), tmp_path)
    session.cancel()
    session.cancel(timeout=True)
    result = (await collect(session))[-1].result
    assert result.status == TurnStatus.DRY_RUN and result.error is None


async def test_cancel_tells_the_pending_proposals_why_they_ended(repo: Path,
                                                                 tmp_path: Path) -> None:
    person = Person()
    session = make(repo, ScriptedClient(DIFF), person, tmp_path)
    events = []
    async for ev in session.turn("edit", ["a.txt", "b.txt"]):
        events.append(ev)
        if isinstance(ev, pe.Completed):
            session.cancel()
    assert person.asked and all(p.ended == Ended.CANCELLED for p in person.asked)
    assert len(person.asked) < 3  # the operation parsed after the cancel is not put to anyone
    assert events[-1].result.status == TurnStatus.CANCELLED
    assert not any(isinstance(e, Decided) for e in events)
    assert (repo / "a.txt").read_text() == "one\ntwo\nthree\nfour\n"


async def test_a_rewind_ends_the_rewound_proposals(repo: Path, tmp_path: Path) -> None:
    person = Person()
    session = make(repo, RewindingClient(""), person, tmp_path)

    rewound = False

    async def on(ev) -> None:
        nonlocal rewound
        if isinstance(ev, pe.Rewound):
            rewound = True
        elif isinstance(ev, OperationProposed) and rewound:
            await person.answer(ev.index, Decision(Action.ACCEPT))

    events = await collect(session, on=on)
    kinds = [type(e) for e in events]
    proposals = [e.proposal for e in events if isinstance(e, OperationProposed)]
    before = kinds.index(pe.Rewound)
    rewound = [e.proposal for e in events[:before] if isinstance(e, OperationProposed)]
    assert rewound and all(p.ended == Ended.REWOUND for p in rewound)
    assert [(p.index, p.ended) for p in proposals if p not in rewound] == [(0, None)]
    assert events[-1].result.status == TurnStatus.APPLIED


async def watched(repo: Path, client: ScriptedClient, approver, tmp_path: Path, on):
    async with Watcher(repo, debounce_ms=20) as watcher:
        session = make(repo, client, approver, tmp_path, watch=watcher.watch)
        return await collect(session, on=on)


async def test_a_file_changed_while_its_decision_is_pending_is_asked_again(
        long_repo: Path, tmp_path: Path) -> None:
    person = Person()
    mine = LONG.replace("line 15\n", "line 15 (mine)\n")  # far from both hunks

    async def on(ev) -> None:
        if isinstance(ev, OperationProposed) and not ev.proposal.stale:
            (long_repo / "long.txt").write_text(mine)  # while the person looks at it
        elif isinstance(ev, OperationProposed):
            await person.answer(ev.index, Decision(Action.ACCEPT))

    events = await watched(long_repo, ScriptedClient(TWO_HUNKS), person, tmp_path, on)
    stale = [e for e in events if isinstance(e, Stale)]
    assert [(e.path, e.index) for e in stale] == [("long.txt", 0)]  # one event for one change
    first, again = person.asked
    assert (first.ended, first.stale) == (Ended.STALE, True)
    assert (again.index, again.stale, again.ended) == (0, True, None)
    # reported before any decision: the first proposal never got one
    kinds = [type(e) for e in events]
    assert kinds.index(Stale) < kinds.index(Decided)
    assert [e.index for e in events if isinstance(e, Decided)] == [0]
    result = events[-1].result
    assert result.status == TurnStatus.APPLIED, result.error
    text = (long_repo / "long.txt").read_text()
    assert "line 15 (mine)" in text and "LINE THREE" in text and "LINE TWENTY-SIX" in text


async def test_a_pending_file_changed_so_it_no_longer_fits_is_refused_at_once(
        long_repo: Path, tmp_path: Path) -> None:
    person = Person()
    mine = LONG.replace("line 3\n", "my line 3\n")  # the hunk's removed line is gone

    async def on(ev) -> None:
        if isinstance(ev, OperationProposed):
            (long_repo / "long.txt").write_text(mine)
        elif isinstance(ev, Refused):
            assert person.asked[0].ended == Ended.STALE  # no longer waiting for the person

    events = await watched(long_repo, ScriptedClient(TWO_HUNKS), person, tmp_path, on)
    refused = [e for e in events if isinstance(e, Refused)]
    assert [(e.index, e.kind) for e in refused] == [(0, RefusalKind.STALE)]
    assert len(person.asked) == 1 and not any(isinstance(e, Decided) for e in events)
    result = events[-1].result
    assert result.status == TurnStatus.CONFLICT
    assert (long_repo / "long.txt").read_text() == mine


async def test_an_accepted_file_that_changes_before_the_write_is_asked_again(
        long_repo: Path, tmp_path: Path) -> None:
    # decided during the stream, then the file changes while the stream is still running
    pause = (len(TWO_HUNKS) + DIFF.index("@@")) // 7 + 1
    client = ScriptedClient(TWO_HUNKS + DIFF, pause_after=pause)
    approver = PolicyApprover(apply=True, allow_delete=True)
    mine = LONG.replace("line 15\n", "line 15 (mine)\n")
    changed = False

    async def on(ev) -> None:
        nonlocal changed
        if isinstance(ev, Decided) and ev.index == 0 and not changed:
            changed = True
            (long_repo / "long.txt").write_text(mine)
        elif isinstance(ev, Stale):
            client.resume.set()

    events = await watched(long_repo, client, approver, tmp_path, on)
    assert [(e.path, e.index) for e in events if isinstance(e, Stale)] == [("long.txt", 0)]
    proposals = [e.proposal for e in events if isinstance(e, OperationProposed)
                 and e.index == 0]
    assert [(p.stale, p.ended) for p in proposals] == [(True, Ended.STALE), (True, None)]
    assert [e.index for e in events if isinstance(e, Decided)].count(0) == 2
    assert events[-1].result.status == TurnStatus.APPLIED
    assert "line 15 (mine)" in (long_repo / "long.txt").read_text()


async def test_frames_batch_the_events_and_send_decisions_at_once(repo: Path,
                                                                  tmp_path: Path) -> None:
    client = ScriptedClient(DIFF, chunk=1)  # one event per character
    session = make(repo, client, PolicyApprover(), tmp_path)
    plain = await collect(session)
    session = make(repo, ScriptedClient(DIFF, chunk=1), PolicyApprover(), tmp_path)
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    frames: list[Frame] = []
    async for frame in session.frames("edit", ["a.txt", "b.txt"], interval=10.0):
        frames.append(frame)
    # the first frame goes out at once; after it a 10 s clock never ran out: every later
    # frame went out for an event that must not wait
    assert loop.time() - t0 < 5
    assert isinstance(frames[0].events[0], TurnStarted)
    urgent = (OperationProposed, Stale, pe.Failed, TurnFinished)
    assert all(any(isinstance(e, urgent) for e in f.events) for f in frames[1:])
    assert len(frames) <= 5 < len(plain) // 10
    events = [e for f in frames for e in f.events]
    assert [type(e) for e in events] == [type(e) for e in plain]
    assert "".join(f.text for f in frames) == DIFF
    assert frames[-1].last and isinstance(events[-1], TurnFinished)


async def test_a_frame_names_the_unfinished_line(repo: Path, tmp_path: Path) -> None:
    client = ScriptedClient(DIFF, chunk=5, pause_after=6)  # 35 characters, mid-line
    session = make(repo, client, PolicyApprover(), tmp_path)
    text = ""
    async for frame in session.frames("edit", ["a.txt"], interval=0.01):
        text += frame.text
        if not frame.last:
            assert frame.partial_line == text.rsplit("\n", 1)[-1]
        if client.paused.is_set() and not client.resume.is_set():
            assert frame.partial_line == DIFF[:35].rsplit("\n", 1)[-1] != ""
            client.resume.set()
    assert text == DIFF


async def test_the_loop_runs_while_another_command_holds_the_journal_lock(
        repo: Path, tmp_path: Path) -> None:
    # the write waits for the lock in a worker thread: the loop keeps ticking (a screen stays
    # alive) and a cancel ends the wait; nothing is written
    from spark_pair.edits.journal import Journal

    session = make(repo, ScriptedClient(DIFF), PolicyApprover(True, True, True), tmp_path)
    ticks = 0
    waiting = asyncio.Event()

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.005)
            ticks += 1

    async def on(ev) -> None:
        nonlocal ticks
        if isinstance(ev, Decided) and ev.index == 2:  # the last decision: the write is next
            ticks = 0
            waiting.set()

    async def cancel_later() -> None:
        await waiting.wait()
        await asyncio.sleep(0.3)
        session.cancel()

    tick = asyncio.create_task(ticker())
    later = asyncio.create_task(cancel_later())
    with Journal(repo, data_dir=tmp_path / "data").locked():  # held by "another command"
        events = await collect(session, on=on)
    tick.cancel()
    later.cancel()
    assert ticks >= 20  # ~60 possible in 0.3 s; a blocked loop would tick 0 times
    result = events[-1].result
    assert result.status == TurnStatus.CANCELLED
    assert (repo / "a.txt").read_text() == "one\ntwo\nthree\nfour\n"
    assert not (repo / "c.txt").exists()


def test_the_session_docstring_names_every_event_a_turn_yields() -> None:
    import typing

    from spark_pair.session.events import SessionEvent
    from spark_pair.session.session import Session

    doc = Session.__doc__ or ""
    missing = [t.__name__ for t in typing.get_args(SessionEvent) if f"`{t.__name__}" not in doc]
    assert missing == []


async def test_a_burst_of_buffered_deltas_leaves_the_loop_turns(repo: Path, tmp_path: Path) -> None:
    # a socket read that brings thousands of messages at once: the session still gives other
    # tasks (a screen's timer) a turn every few milliseconds instead of one long freeze
    client = ScriptedClient("x" * 20_000, chunk=1)  # 20k deltas, no await between them
    session = make(repo, client, PolicyApprover(), tmp_path)
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0)
            ticks += 1

    marks: dict[str, int] = {}

    async def on(ev) -> None:
        if isinstance(ev, pe.TextDelta):
            marks.setdefault("first", ticks)
        elif isinstance(ev, pe.Completed):
            marks["done"] = ticks

    tick = asyncio.create_task(ticker())
    await collect(session, on=on, ask=True)  # a prose answer: no file work in between
    tick.cancel()
    assert marks["done"] - marks["first"] >= 5


def _not_text(events: list) -> tuple[list, list]:
    """A turn's events but its text, without what differs per run (the turn id; when a decision
    arrives): the events in order, and the decisions by index."""
    shown = [(e.index, e.op) if isinstance(e, OperationProposed) else e for e in events
             if not isinstance(e, pe.TextDelta | TurnStarted | TurnFinished | Decided)]
    return shown, sorted((e.index, e.decision) for e in events if isinstance(e, Decided))


async def test_with_latency_text_gathers_and_the_turn_is_the_same(tmp_path: Path) -> None:
    # text may wait: it comes as fewer, longer TextDeltas, while every other event, the parse
    # and the outcome are those of a turn that gets each message at once
    turns = {}
    for latency in (0.0, 30.0):
        (tmp_path / str(latency)).mkdir()
        repo = make_files(tmp_path / str(latency))
        client = ScriptedClient(DIFF, gap=0.001)
        session = make(repo, client, PolicyApprover(), tmp_path / str(latency))
        events = await asyncio.wait_for(collect(session, latency=latency), 10)
        turns[latency] = events
    pieces = len(range(0, len(DIFF), 7))
    for latency, events in turns.items():
        texts = [e.text for e in events if isinstance(e, pe.TextDelta)]
        assert "".join(texts) == DIFF
        # held back until the stream's end
        assert len(texts) == (pieces if latency == 0 else 1)
        assert events[-1].result.status == TurnStatus.DRY_RUN
    assert _not_text(turns[0.0]) == _not_text(turns[30.0])


async def test_latency_never_holds_back_a_cancel(repo: Path, tmp_path: Path) -> None:
    # the text waiting to be handed over is kept, and the stopped turn's TTFT is when the text
    # arrived, not when it was handled
    client = ScriptedClient(DIFF, pause_after=3, gap=0.01)
    session = make(repo, client, PolicyApprover(True), tmp_path)
    turn = asyncio.create_task(collect(session, latency=30.0))
    await asyncio.wait_for(client.paused.wait(), 10)
    await asyncio.sleep(0.5)
    session.cancel()
    events = await asyncio.wait_for(turn, 10)
    result = events[-1].result
    assert result.status == TurnStatus.CANCELLED and result.text == DIFF[:28]
    assert result.metrics.partial and result.metrics.ttft_s < 0.4
    assert client.closed


@pytest.mark.parametrize("decision", [
    Decision(Action.ACCEPT, hunks=(0, 2)),
    Decision(Action.ACCEPT, hunks=(-1,)),
    Decision(Action.ACCEPT, amended=((5, Hunk(None, None, None, None, ["-line 3", "+x"])),)),
    Decision(Action.REJECT, notes=((3, "why"),)),
])
async def test_a_decision_naming_a_hunk_the_operation_lacks_is_refused(
        long_repo: Path, tmp_path: Path, decision: Decision) -> None:
    """Hunk indices are never guessed at: a front end that names a hunk the operation does
    not have gets the turn refused (nothing written), with the index and the count."""
    person = Person()
    session = make(long_repo, ScriptedClient(TWO_HUNKS), person, tmp_path)

    async def on(ev) -> None:
        if isinstance(ev, OperationProposed):
            await person.answer(ev.index, decision)

    events = await collect(session, files=("long.txt",), on=on)
    [decided] = [ev for ev in events if isinstance(ev, Decided)]
    assert decided.decision.action == Action.REFUSE
    assert "long.txt has 2 hunks (0 and 1)" in decided.decision.reason
    result = events[-1].result
    assert result.status == TurnStatus.REFUSED and "nothing was written" in result.error.message
    assert (long_repo / "long.txt").read_text() == LONG


@pytest.mark.parametrize("second", [Action.ACCEPT, Action.REJECT])
async def test_a_change_only_the_last_check_sees_is_asked_again_before_any_write(
        long_repo: Path, tmp_path: Path, second: Action) -> None:
    """No watcher reported it: the file changed after the person accepted, just before the
    write. It is reported Stale and asked again; only the fresh decision writes."""
    person = Person()
    session = make(long_repo, ScriptedClient(TWO_HUNKS), person, tmp_path)  # no watcher
    mine = LONG.replace("line 15\n", "line 15 (mine)\n")

    async def on(ev) -> None:
        if isinstance(ev, OperationProposed) and not ev.proposal.stale:
            await person.answer(ev.index, Decision(Action.ACCEPT))
        elif isinstance(ev, Decided) and not person.asked[-1].stale:
            (long_repo / "long.txt").write_text(mine)  # after the decision, before the write
        elif isinstance(ev, OperationProposed):
            assert (long_repo / "long.txt").read_text() == mine  # nothing written meanwhile
            await person.answer(ev.index, Decision(second))

    events = await collect(session, files=("long.txt",), on=on)
    assert [(e.path, e.index) for e in events if isinstance(e, Stale)] == [("long.txt", 0)]
    assert [(p.stale, p.ended) for p in person.asked] == [(True, Ended.STALE), (True, None)]
    result = events[-1].result
    text = (long_repo / "long.txt").read_text()
    if second == Action.ACCEPT:
        assert result.status == TurnStatus.APPLIED and "LINE THREE" in text
        assert "line 15 (mine)" in text
    else:
        assert result.status == TurnStatus.REJECTED and text == mine


async def test_a_change_at_the_last_check_that_no_longer_fits_is_refused(
        long_repo: Path, tmp_path: Path) -> None:
    person = Person()
    session = make(long_repo, ScriptedClient(TWO_HUNKS), person, tmp_path)
    theirs = LONG.replace("line 3\n", "line 3 (theirs)\n")  # under the first hunk

    async def on(ev) -> None:
        if isinstance(ev, OperationProposed):
            await person.answer(ev.index, Decision(Action.ACCEPT))
        elif isinstance(ev, Decided):
            (long_repo / "long.txt").write_text(theirs)

    events = await collect(session, files=("long.txt",), on=on)
    assert [type(e).__name__ for e in events if isinstance(e, Stale | Refused)] == [
        "Stale", "Refused"]
    assert len(person.asked) == 1 and events[-1].result.status == TurnStatus.CONFLICT
    assert (long_repo / "long.txt").read_text() == theirs


async def test_a_file_that_keeps_changing_at_the_last_check_is_refused_not_asked_forever(
        long_repo: Path, tmp_path: Path) -> None:
    person = Person()
    session = make(long_repo, ScriptedClient(TWO_HUNKS), person, tmp_path)
    writes = 0

    async def on(ev) -> None:
        nonlocal writes
        if isinstance(ev, OperationProposed):
            await person.answer(ev.index, Decision(Action.ACCEPT))
        elif isinstance(ev, Decided):
            writes += 1
            (long_repo / "long.txt").write_text(LONG + f"tail {writes}\n")

    events = await collect(session, files=("long.txt",), on=on)
    refused = [e for e in events if isinstance(e, Refused)]
    assert len(person.asked) == 4 and len(refused) == 1
    assert "keeps changing" in refused[0].reason
    assert events[-1].result.status == TurnStatus.CONFLICT
    assert (long_repo / "long.txt").read_text() == LONG + "tail 4\n"


async def test_a_gathered_burst_is_handed_over_in_slices(repo: Path, tmp_path: Path) -> None:
    # text that waited is parsed in bounded pieces (each leaves the loop a turn), not as one
    # long stretch however much gathered
    text = "word\n" * 5_000
    client = ScriptedClient(text, chunk=1)  # 25k deltas queued at once
    session = make(repo, client, PolicyApprover(), tmp_path)
    events = await asyncio.wait_for(collect(session, ask=True, latency=30.0), 20)
    texts = [e.text for e in events if isinstance(e, pe.TextDelta)]
    assert "".join(texts) == text
    assert len(texts) >= 3 and max(map(len, texts)) <= GATHER_CHARS
