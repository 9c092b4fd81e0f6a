"""Switching model or transport mid-session keeps the conversation: the next request still
carries the earlier turns and the account of their review (pilot against the simulator as a
real process)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.apps import all_proposed, edit_bodies, make_app, notice, turn_over, type_line, until

from spark_pair.sim.process import SimProcess

REVIEW_NOTE = "Review of your previous reply"
FIRST_REPLY = "Validated the input lines, added an optional discount"  # the demo reply's prose


@pytest.mark.parametrize("switch", ["/model gpt-5.3-codex", "/transport chat", "ctrl+e"])
async def test_the_history_survives_a_switch(repo: Path, demo_sim: SimProcess,
                                             switch: str) -> None:
    # (no files chosen by themselves: a file naming the demo's word would get its reply again)
    app = make_app(repo, demo_sim, transport="ws", **{"model.stronger": "gpt-5.3-codex",
                                                      "context.auto": "false",
                                                      "review.repair": "false"})
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: all_proposed(app), "every proposal")
        await pilot.press("alt+a", "alt+shift+r")  # one hunk kept, the rest rejected
        await until(pilot, lambda: turn_over(app), "the end of the first turn")
        assert "applied" in notice(app)
        before = len(edit_bodies(demo_sim))
        if switch == "ctrl+e":
            await pilot.press("ctrl+e")  # the same prompt again, on the stronger model
            await until(pilot, lambda: all_proposed(app), "the escalated turn's proposals")
            await pilot.press("alt+shift+r")
        else:
            await type_line(pilot, app, switch)
            await until(pilot, lambda: "now using" in notice(app), "the switch")
            await type_line(pilot, app, "SECOND make the totals round half up")
        await until(pilot, lambda: len(edit_bodies(demo_sim)) > before, "the next request")
        await until(pilot, lambda: turn_over(app), "the end of the next turn")
    body = edit_bodies(demo_sim)[before]  # the next turn's request (a repair round may follow)
    expected = {"/model gpt-5.3-codex": "gpt-5.3-codex", "ctrl+e": "gpt-5.3-codex"}
    assert body["model"] == expected.get(switch, "gpt-5.3-codex-spark")
    sent = json.dumps(body)
    assert ("messages" in body) == (switch == "/transport chat")
    assert REVIEW_NOTE in sent and "rejected, not applied" in sent  # told what happened
    assert FIRST_REPLY in sent  # the earlier turn is in the conversation
    assert "previous_response_id" not in body  # a new connection: the history is sent whole
