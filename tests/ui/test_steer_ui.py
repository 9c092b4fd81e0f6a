"""Enter while a turn streams steers it, in the app under the pilot against the simulator
process: the server's own steering where it offers it (the reply starts again from the
correction), else a stop and an immediate resend carrying the correction; the live diff says
which way it went, and nothing is written by a steer."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.apps import QUICK_OP, make_app, review, turn_over, typed, until

from spark_pair.sim.demo_project import MATCH, reply_text
from spark_pair.sim.process import SimProcess
from spark_pair.ui.widgets.diff_view import DiffView, Kind
from spark_pair.ui.widgets.prompt import Prompt

STEERED = "--- /dev/null\n+++ b/STEERED.md\n@@ -0,0 +1 @@\n+steered\n"
# a short first operation, the demo's reply and a long tail of prose: at 60 tok/s it streams
# for a minute, so a busy machine's slow keys still come while it runs
LONG = QUICK_OP + reply_text() + "\nNotes:\n" + "more words to read here\n" * 500


def notes(app) -> str:
    rows = [r.text for r in app.main.query_one(DiffView).rows if r.kind is Kind.NOTE]
    return "\n".join(rows).replace("\n    ", " ")  # a wrapped note read whole


def creates(sim: SimProcess) -> list[dict]:
    return [e for e in sim.requests() if e["body"] and e["body"].get("type", "response.create")
            == "response.create" and e["body"].get("generate") is not False]


async def correct(pilot, app, text: str) -> None:
    # (after the first proposal, which takes the focus to the review pane: a person goes back
    # to the prompt to type)
    await until(pilot, lambda: app.main.streaming and review(app).review.entries,
                "the reply streaming, a first proposal in")
    prompt = app.main.query_one(Prompt)
    prompt.focus()
    await typed(pilot, text)
    await pilot.press("enter")


async def test_a_steer_the_server_accepts_changes_what_is_written(repo: Path,
                                                                  sim: SimProcess) -> None:
    sim.configure(tps=60, replies=[{"match": "STEERED", "text": STEERED},
                                   {"match": MATCH, "text": LONG}])
    app = make_app(repo, sim, transport="ws")
    async with app.run_test(size=(120, 40)) as pilot:
        await correct(pilot, app, "make it STEERED instead")
        await until(pilot, lambda: "steered on the server" in notes(app), "the steer's note")
        await until(pilot, lambda: [e.op.path for e in review(app).review.entries.values()]
                    == ["STEERED.md"], "the steered reply's proposal")
        assert not (repo / "STEERED.md").exists()  # a steer writes nothing
        steers = [e for e in sim.requests() if (e["body"] or {}).get("type") == "response.steer"]
        assert len(steers) == 1 and "STEERED" in str(steers[0]["body"]["input"])
        assert [e.get("steered") for e in creates(sim)][:1] == [True]  # the first was cut
        assert len([e for e in creates(sim) if e["transport"] == "ws"]) == 2  # no resend
        review(app).focus()
        await pilot.press("alt+a")
        await until(pilot, lambda: turn_over(app), "the end of the turn")
        assert (repo / "STEERED.md").read_text() == "steered\n"  # once accepted


@pytest.mark.parametrize("transport", ["ws", "responses"])
async def test_without_server_steering_the_turn_is_stopped_and_resent(
        repo: Path, sim: SimProcess, transport: str) -> None:
    sim.configure(tps=60, steer=False, replies=[{"match": "STEERED", "text": STEERED},
                                                {"match": MATCH, "text": LONG}])
    app = make_app(repo, sim, transport=transport)
    async with app.run_test(size=(120, 40)) as pilot:
        await correct(pilot, app, "make it STEERED instead")
        await until(pilot, lambda: "steered by stop + resend" in notes(app), "the resend's note")
        await until(pilot, lambda: [e.op.path for e in review(app).review.entries.values()]
                    == ["STEERED.md"], "the resent turn's proposal")
        assert not (repo / "STEERED.md").exists()
        sent = str(creates(sim)[-1]["body"])
        assert "Correction (it takes precedence): make it STEERED instead" in sent
        assert MATCH in sent and "Your reply so far" in sent  # the instruction, what arrived
        assert "characters that had arrived went as a new request" in notes(app)
        review(app).focus()
        await pilot.press("alt+shift+r")
        await until(pilot, lambda: turn_over(app), "the end of the turn")
    assert not (repo / "STEERED.md").exists()
