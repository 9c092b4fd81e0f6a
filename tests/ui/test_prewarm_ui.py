"""Pre-warm while typing, in the app under the pilot against the simulator process: a draft
left still sends one generate:false request holding it; enter continues that response."""

from __future__ import annotations

from pathlib import Path

from support.apps import make_app, review, turn_over, typed, until

from spark_pair.sim.demo_project import PROMPT
from spark_pair.sim.process import SimProcess


def warms(sim: SimProcess) -> list[dict]:
    return [e for e in sim.requests() if (e["body"] or {}).get("generate") is False]


def texts(body: dict) -> str:
    return "".join(str(i.get("content")) for i in body.get("input") or [])


async def test_a_still_draft_is_prewarmed_once_and_enter_chains_on_it(
        repo: Path, demo_sim: SimProcess) -> None:
    # (a second of stillness: a busy machine's pauses between keys warm nothing)
    app = make_app(repo, demo_sim, prompt="", transport="ws",
                   **{"session.prewarm_ms": "1000"})
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.main.driver.session is not None, "the open repository")
        await until(pilot, lambda: len(warms(demo_sim)) == 1, "the start-up pre-warm")
        await typed(pilot, PROMPT)

        def of_draft() -> list[dict]:
            return [w for w in warms(demo_sim) if PROMPT in texts(w["body"])]

        await until(pilot, lambda: of_draft(), "the draft's pre-warm")
        await pilot.pause(1.5)  # still: no second one for the same draft
        assert len(of_draft()) == 1
        draft = of_draft()[0]
        assert draft["seq"] == warms(demo_sim)[-1]["seq"]
        assert "inventory.py" in texts(draft["body"])
        await pilot.press("enter")
        await until(pilot, lambda: review(app).review.entries, "a proposal")
        turn = [e for e in demo_sim.requests() if e["seq"] > draft["seq"]][0]
        assert turn["body"]["previous_response_id"] == draft["response_id"]
        assert turn["body"]["input"] == []
        assert app.main.driver.runtime.drafts.counts == (1, 0, 0)
        await pilot.press("alt+shift+r")
        await until(pilot, lambda: turn_over(app), "the end of the turn")


async def test_prewarm_ms_0_sends_no_draft(repo: Path, demo_sim: SimProcess) -> None:
    app = make_app(repo, demo_sim, prompt="", transport="ws", **{"session.prewarm_ms": "0"})
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.main.driver.session is not None, "the open repository")
        await until(pilot, lambda: len(warms(demo_sim)) == 1, "the start-up pre-warm")
        await pilot.press(*"rename foo")
        await pilot.pause(0.6)
        assert len(warms(demo_sim)) == 1
