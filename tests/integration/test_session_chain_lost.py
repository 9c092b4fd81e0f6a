"""A server that no longer holds the previous response (previous_response_not_found): the
turn is sent again in full, carrying the conversation, and the turn says so (the simulator as a
real process, a real git repository)."""

from __future__ import annotations

from pathlib import Path

from spark_pair.protocol.events import Completed
from spark_pair.session.approval import PolicyApprover
from spark_pair.session.events import TurnFinished
from spark_pair.session.runtime import open_runtime
from spark_pair.sim.process import SimProcess


async def _turn(rt, prompt: str) -> tuple[Completed | None, TurnFinished | None]:
    done = finished = None
    async for event in rt.session.turn(prompt, ["inventory.py"]):
        if isinstance(event, Completed):
            done = event
        elif isinstance(event, TurnFinished):
            finished = event
    return done, finished


async def test_a_lost_chain_is_sent_again_whole_with_a_note(repo: Path, sim: SimProcess) -> None:
    overrides = {"model.base_url": sim.base_url, "model.name": "gpt-5.3-codex-spark",
                 "session.transport": "ws", "context.auto": "false"}
    async with open_runtime(repo, approver=PolicyApprover(), overrides=overrides,
                            env={"SPARK_PAIR_API_KEY": "k"}, watch=False) as rt:
        first, _ = await _turn(rt, "FIRST remember the word walrus")
        assert first is not None and first.notes == ()
        rt.client._ws.previous_id = "resp_the_server_forgot"  # as after the server's restart
        sim.clear_requests()
        second, finished = await _turn(rt, "SECOND and now?")
    assert finished is not None and second is not None
    assert any("previous_response_not_found" in n for n in second.notes)
    bodies = [r["body"] for r in sim.requests() if r["body"].get("generate") is not False]
    assert bodies[0]["previous_response_id"] == "resp_the_server_forgot"
    assert "previous_response_id" not in bodies[-1]
    assert "FIRST remember the word walrus" in str(bodies[-1]["input"])
