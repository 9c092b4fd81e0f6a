"""Session turns with the real parser, apply, journal and workspace; the model client is a
scripted stand-in here (the end-to-end tests use the real client against the simulator)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from support.scripted import DIFF, A, B, RewindingClient, ScriptedClient, collect, make, make_files

from spark_pair.base.errors import Cancelled, PolicyRefused, ServerError, StaleError
from spark_pair.base.exitcodes import ExitCode, exit_code_for
from spark_pair.edits.journal import Journal
from spark_pair.edits.parse_events import FileStarted
from spark_pair.protocol import events as pe
from spark_pair.protocol.records import RequestRecord
from spark_pair.session.approval import Action, Decision, PolicyApprover
from spark_pair.session.events import (
    Applied,
    Decided,
    OperationProposed,
    Refused,
    Stale,
    TurnFinished,
    TurnStarted,
)
from spark_pair.workspace import Watcher


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_files(tmp_path)


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(root.iterdir()) if p.is_file()}


async def test_dry_run_parses_decides_and_writes_nothing(repo: Path, tmp_path: Path) -> None:
    before = snapshot(repo)
    client = ScriptedClient(DIFF)
    events = await collect(make(repo, client, PolicyApprover(), tmp_path))
    assert isinstance(events[0], TurnStarted) and events[0].files == ("a.txt", "b.txt")
    proposed = [e for e in events if isinstance(e, OperationProposed)]
    assert [type(e.op).__name__ for e in proposed] == ["Modify", "Create", "Delete"]
    assert all(e.decision.action == "skip" for e in events if isinstance(e, Decided))
    result = events[-1].result
    assert isinstance(events[-1], TurnFinished) and result.status == "dry_run" and result.ok
    assert result.text == DIFF and result.model == "m" and result.response_id == "resp_1"
    assert snapshot(repo) == before
    # the request showed the model both files and carried their base hashes
    assert "two" in client.requests[0].new_input[-1].content
    assert proposed[0].op.base_hash is not None


async def test_refused_delete_writes_nothing_at_all(repo: Path, tmp_path: Path) -> None:
    before = snapshot(repo)
    events = await collect(make(repo, ScriptedClient(DIFF), PolicyApprover(apply=True), tmp_path))
    refused = [e for e in events if isinstance(e, Refused)]
    assert [(e.op.path, e.kind) for e in refused] == [("b.txt", "policy")]
    result = events[-1].result
    assert result.status == "refused" and isinstance(result.error, PolicyRefused)
    assert exit_code_for(result.error) == ExitCode.POLICY
    assert result.outcomes == ["not_applied"] * 3
    assert snapshot(repo) == before


async def test_apply_all_journals_records_and_undoes(repo: Path, tmp_path: Path) -> None:
    before = snapshot(repo)
    stored: list[RequestRecord] = []

    class Store:
        def record(self, rec: RequestRecord) -> None:
            stored.append(rec)

    session = make(repo, ScriptedClient(DIFF), PolicyApprover(True, True, True), tmp_path,
                   store=Store())
    events = await collect(session)
    result = events[-1].result
    assert result.status == "applied", result.error
    applied = [e for e in events if isinstance(e, Applied)]
    assert len(applied) == 1 and set(applied[0].changed) == {"a.txt", "b.txt", "c.txt"}
    assert snapshot(repo) == {"a.txt": b"one\nTWO\nthree\nfour\n", "c.txt": b"new\n"}
    assert [r.turn_id for r in stored] == [result.turn_id]
    Journal(repo, data_dir=tmp_path / "data").undo(result.turn_id)
    assert snapshot(repo) == before


async def test_rejected_hunk_and_rejected_file_are_left_out(repo: Path, tmp_path: Path) -> None:
    class Picky:
        async def decide(self, proposal):
            await asyncio.sleep(0)  # a person takes a moment
            if proposal.op.path == "a.txt":
                return Decision(Action.ACCEPT)
            return Decision(Action.REJECT, "no thanks")

    events = await collect(make(repo, ScriptedClient(DIFF), Picky(), tmp_path))
    result = events[-1].result
    assert result.status == "applied"
    assert result.outcomes == ["applied", "not_applied", "not_applied"]
    assert (repo / "b.txt").read_text() == B and not (repo / "c.txt").exists()


async def test_cancel_mid_stream_keeps_text_and_writes_nothing(repo: Path, tmp_path: Path) -> None:
    before = snapshot(repo)
    client = ScriptedClient(DIFF, pause_after=3)
    session = make(repo, client, PolicyApprover(True, True, True), tmp_path)

    async def on(ev) -> None:
        if isinstance(ev, pe.TextDelta) and client.paused.is_set():
            session.cancel()

    events = await collect(session, on=on)
    result = events[-1].result
    assert result.status == "cancelled" and isinstance(result.error, Cancelled)
    assert exit_code_for(result.error) == ExitCode.INTERRUPTED
    assert result.text == DIFF[:28]  # four chunks of 7 arrived and are kept
    assert result.metrics.partial and result.metrics.output_tokens == 7  # measured so far
    assert result.metrics.ttft_s is not None
    assert client.closed
    assert snapshot(repo) == before


async def test_timeout_cancel_maps_to_the_timeout_exit_code(repo: Path, tmp_path: Path) -> None:
    client = ScriptedClient(DIFF, pause_after=0)
    session = make(repo, client, PolicyApprover(), tmp_path)

    async def on(ev) -> None:
        if isinstance(ev, pe.TextDelta):
            session.cancel(timeout=True)

    result = (await collect(session, on=on))[-1].result
    assert exit_code_for(result.error) == ExitCode.TIMEOUT and "--timeout" in result.error.message


async def test_failed_stream_reports_the_model_error(repo: Path, tmp_path: Path) -> None:
    client = ScriptedClient(DIFF, fail=ServerError("overloaded", status=503), model_changed=True)
    events = await collect(make(repo, client, PolicyApprover(True), tmp_path))
    assert any(isinstance(e, pe.ModelChanged) for e in events)
    result = events[-1].result
    assert result.status == "failed" and exit_code_for(result.error) == ExitCode.MODEL


async def test_edit_during_stream_is_stale_and_never_overwritten(repo: Path,
                                                                 tmp_path: Path) -> None:
    # pause once the next file's header has arrived, so a.txt's operation is complete
    client = ScriptedClient(DIFF, pause_after=DIFF.index("@@ -0,0") // 7 + 1)
    mine = "one\nmy own two\nthree\nfour\n"
    async with Watcher(repo, debounce_ms=20) as watcher:
        session = make(repo, client, PolicyApprover(True, True, True), tmp_path,
                       watch=watcher.watch)
        seen_stale = asyncio.Event()

        async def on(ev) -> None:
            if isinstance(ev, pe.TextDelta) and client.paused.is_set() and not seen_stale.is_set():
                if (repo / "a.txt").read_text() != mine:
                    (repo / "a.txt").write_text(mine)
                    # the stream stays paused until the watcher reports the change
                    asyncio.get_running_loop().call_later(10, client.resume.set)
            if isinstance(ev, Stale):
                seen_stale.set()
                client.resume.set()

        events = await collect(session, on=on)
    stale = [e for e in events if isinstance(e, Stale)]
    assert stale and stale[0].path == "a.txt" and stale[0].index == 0
    # reported while the turn was still streaming, before it completed
    assert events.index(stale[0]) < next(i for i, e in enumerate(events)
                                         if isinstance(e, pe.Completed))
    result = events[-1].result
    assert result.status == "conflict" and isinstance(result.error, StaleError)
    assert [e.kind for e in events if isinstance(e, Refused)] == ["stale"]
    assert (repo / "a.txt").read_text() == mine and (repo / "b.txt").read_text() == B


async def test_follow_up_turn_sends_only_changes(repo: Path, tmp_path: Path) -> None:
    client = ScriptedClient(DIFF)
    session = make(repo, client, PolicyApprover(True, True, True), tmp_path)
    await collect(session)
    (repo / "a.txt").write_text("one\nTWO\nthree\nfour\nfive\n")
    client.text = ""
    events = await collect(session, prompt="and now?", files=("a.txt",))
    assert isinstance(events[0], TurnStarted) and events[0].followup
    second = client.requests[1]
    assert "+five" in second.new_input[-1].content and "alpha" not in second.new_input[-1].content
    assert len(second.history) == 2 and second.history[1].content == DIFF
    result = events[-1].result  # a reply of nothing: not 'no change proposed', said so
    assert result.status == "failed" and "the reply is empty" in str(result.error)


async def test_a_session_that_remembers_nothing_keeps_no_history(repo: Path,
                                                                  tmp_path: Path) -> None:
    """`remember = False` (a one-shot run): the applied turn is reported as ever, and the next
    turn's request carries no history of it."""
    client = ScriptedClient(DIFF)
    session = make(repo, client, PolicyApprover(True, True, True), tmp_path)
    session.remember = False
    events = await collect(session)
    assert events[-1].result.status == "applied"
    assert session.workspace.history.messages() == []
    client.text = ""
    await collect(session, prompt="and now?", files=("a.txt",))
    assert client.requests[1].history == []


async def test_conflicting_hunk_refuses_the_turn_and_names_the_file(repo: Path,
                                                                    tmp_path: Path) -> None:
    before = snapshot(repo)
    bad = ("--- /dev/null\n+++ b/c.txt\n@@ -0,0 +1,1 @@\n+new\n"
           "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-not in the file\n+x\n")
    events = await collect(make(repo, ScriptedClient(bad), PolicyApprover(True), tmp_path))
    refused = [e for e in events if isinstance(e, Refused)]
    assert [(e.index, e.op.path, e.kind) for e in refused] == [(1, "a.txt", "conflict")]
    result = events[-1].result
    assert result.status == "conflict" and exit_code_for(result.error) == ExitCode.CONFLICT
    assert snapshot(repo) == before


async def test_rewound_reply_is_reparsed_and_only_the_final_text_applies(repo: Path,
                                                                         tmp_path: Path) -> None:
    approver = PolicyApprover(apply=True, allow_delete=True)
    events = await collect(make(repo, RewindingClient(""), approver, tmp_path))
    result = events[-1].result
    assert result.status == "applied", result.error
    assert [type(op).__name__ for op in result.operations] == ["Modify"]
    assert (repo / "a.txt").read_text() == "one\n2\nthree\nfour\n"
    assert (repo / "b.txt").read_text() == B  # the delete lived only in the discarded text
    assert any(isinstance(e, pe.Rewound) for e in events)


async def test_create_over_a_file_there_before_is_a_conflict_not_stale(repo: Path,
                                                                        tmp_path: Path) -> None:
    from spark_pair.base.errors import ConflictError

    (repo / "c.txt").write_text("mine\n")
    for approver in (PolicyApprover(True, True, True), PolicyApprover()):  # apply and dry run
        events = await collect(make(repo, ScriptedClient(DIFF), approver, tmp_path))
        assert not [e for e in events if isinstance(e, Stale)]
        assert [(e.op.path, e.kind) for e in events if isinstance(e, Refused)] == [
            ("c.txt", "conflict")]
        result = events[-1].result
        assert result.status == "conflict" and isinstance(result.error, ConflictError)
        assert result.error.message == "c.txt already exists; a create never overwrites"
    assert (repo / "c.txt").read_text() == "mine\n" and (repo / "a.txt").read_text() == A


async def test_create_target_that_appears_during_the_turn_is_stale(repo: Path,
                                                                   tmp_path: Path) -> None:
    client = ScriptedClient(DIFF)

    async def on(ev) -> None:
        if isinstance(ev, FileStarted) and ev.path == "c.txt":  # parsed, not yet applied
            (repo / "c.txt").write_text("made meanwhile\n")

    events = await collect(make(repo, client, PolicyApprover(True, True, True), tmp_path), on=on)
    assert [e.path for e in events if isinstance(e, Stale)] == ["c.txt"]
    assert [e.kind for e in events if isinstance(e, Refused)] == ["stale"]
    assert events[-1].result.status == "conflict"
    assert (repo / "c.txt").read_text() == "made meanwhile\n" and (repo / "a.txt").read_text() == A


async def test_a_screen_that_accepts_the_hunk_it_showed_gets_that_hunk(repo: Path,
                                                                       tmp_path: Path) -> None:
    """One index space: an empty @@ hunk and a prose-only section take no index, so the
    indices a screen saw in HunkStarted are the ones its Decision names."""
    from spark_pair.edits.parse_events import HunkStarted

    reply = ("Some prose.\ndiff --git a/b.txt b/b.txt\nNothing to change in b after all.\n\n"
             "--- a/a.txt\n+++ b/a.txt\n@@ -1,1 +1,1 @@\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n"
             "@@ -4 +4 @@\n-four\n+FOUR\n--- /dev/null\n+++ b/c.txt\n@@ -0,0 +1 @@\n+new\n")
    shown: dict[int, dict[int, int]] = {}  # op index -> hunk index -> old_start, as shown
    seen = asyncio.Event()

    async def screen(ev) -> None:
        if isinstance(ev, HunkStarted):
            shown.setdefault(ev.op_index, {})[ev.hunk_index] = ev.header.old_start
            seen.set()

    class Person:
        async def decide(self, proposal):
            await asyncio.wait_for(seen.wait(), 10)
            if proposal.op.path != "a.txt":
                return Decision(Action.REJECT, "not now")
            wanted = [h for h, start in shown[proposal.index].items() if start == 4]
            return Decision(Action.ACCEPT, hunks=tuple(wanted))

    events = await collect(make(repo, ScriptedClient(reply, chunk=5), Person(), tmp_path),
                           on=screen)
    result = events[-1].result
    assert result.status == "applied", result.error
    assert [e.index for e in events if isinstance(e, FileStarted)] == [0, 1]
    assert [e.proposal.index for e in events if isinstance(e, OperationProposed)] == [0, 1]
    assert [op.path for op in result.operations] == ["a.txt", "c.txt"]
    assert shown == {0: {0: 1, 1: 4}, 1: {0: 0}}
    assert (repo / "a.txt").read_text() == "one\ntwo\nthree\nFOUR\n"  # the hunk it showed
    assert not (repo / "c.txt").exists()
