"""Pre-warm while typing (session.prewarm) against the simulator process: one generate:false
request for a still draft, chained on the conversation; enter continues it (a hit) or sends
the turn whole (a miss); nothing over HTTP."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest

from spark_pair.protocol.metrics import tokens_for_chars
from spark_pair.session.approval import PolicyApprover
from spark_pair.session.events import TurnFinished, TurnStatus
from spark_pair.session.runtime import open_runtime
from spark_pair.sim.process import SimProcess

pytestmark = pytest.mark.timeout(60)

DIFF = "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n"
ENV = {"SPARK_PAIR_API_KEY": "sk-test-prewarm-key"}


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SPARK_PAIR_HOME", str(tmp_path / "home"))
    root = tmp_path / "repo"
    root.mkdir()
    (root / "a.txt").write_text("one\ntwo\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def overrides(sim: SimProcess, transport: str = "ws") -> dict[str, str]:
    return {"model.base_url": sim.base_url, "model.name": "gpt-5.3-codex-spark",
            "session.transport": transport, "context.auto": "false",
            "review.repair": "false"}  # (a reply that no longer fits is not asked again)


async def files_for(text: str) -> list[str]:
    return ["a.txt"]


async def until(condition, timeout: float = 5.0) -> None:
    for _ in range(int(timeout / 0.02)):
        if condition():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("condition not met")


def user_text(body: dict) -> str:
    return "".join(str(i.get("content")) for i in body.get("input") or [])


async def turn(rt, prompt: str) -> TurnFinished:
    events = [e async for e in rt.session.turn(prompt, ["a.txt"])]
    assert isinstance(events[-1], TurnFinished)
    return events[-1]


async def warmed_once(rt):
    """The runtime's warmer, once it has pre-warmed the draft "EDIT the"."""
    await rt.warmed()
    warmer = rt.warm_drafts(10)
    warmer.draft_changed("EDIT the", files_for)
    await until(lambda: warmer.sent == 1)
    return warmer


async def test_a_still_draft_is_warmed_once_and_enter_continues_it(sim: SimProcess,
                                                                   repo: Path) -> None:
    sim.configure(replies=[{"match": "EDIT", "text": DIFF}])
    async with open_runtime(repo, approver=PolicyApprover(apply=True), overrides=overrides(sim),
                            env=ENV, prewarm=True) as rt:
        await rt.warmed()
        warmer = rt.warm_drafts(30)
        for typed in ("E", "ED", "EDI", "EDIT a"):  # typing: one pre-warm, for the last draft
            warmer.draft_changed(typed, files_for)
            await asyncio.sleep(0.005)
        await until(lambda: warmer.sent == 1)
        await rt.warmed()
        await asyncio.sleep(0.1)  # no second one for the same draft
        warms = [e for e in sim.requests() if (e["body"] or {}).get("generate") is False]
        assert len(warms) == 2  # the socket's start-up one, and the draft's
        draft = warms[-1]
        assert "EDIT a" in user_text(draft["body"]) and "one\ntwo" in user_text(draft["body"])
        finished = await turn(rt, "EDIT a")
        assert finished.result.status == TurnStatus.APPLIED
        real = sim.requests()[-1]
        assert real["body"]["previous_response_id"] == draft["response_id"]
        assert real["body"]["input"] == []
        assert real["connection_id"] == draft["connection_id"]
        assert rt.drafts is not None and rt.drafts.counts == (1, 0, 0)
        rt.store.flush()
        from spark_pair.store import RequestStore

        with RequestStore() as store:  # the request log says the turn met its pre-warm
            assert [r.extra.get("prewarm") for r in store.records()][-1:] == ["hit"]
            # and what the draft's pre-warm sent: its file and draft, counted in stats
            warm_tokens = store.records()[-1].extra.get("prewarm_tokens")
            assert warm_tokens == tokens_for_chars(len(user_text(draft["body"])))
            from spark_pair.store.stats import build_report

            assert build_report(store.records(), {}).turns.prewarm_tokens == warm_tokens

        # a follow-up: the warm chains on the conversation, the turn on the warm
        conversation = real["response_id"]
        warmer.draft_changed("again EDIT", files_for)
        await until(lambda: warmer.sent == 2)
        await rt.warmed()
        warm2 = sim.requests()[-1]
        assert warm2["body"]["generate"] is False
        assert warm2["body"]["previous_response_id"] == conversation
        # a different prompt at enter: sent whole on the conversation; only its last item
        # differs from the pre-warm's (a "prefix": the server read the rest with the pre-warm)
        await turn(rt, "something else EDIT")
        last = sim.requests()[-1]
        assert last["body"]["previous_response_id"] == conversation
        assert "something else" in user_text(last["body"])
        assert rt.drafts.counts == (1, 1, 0)


async def test_nothing_is_warmed_over_http_or_with_prewarm_off(sim: SimProcess,
                                                               repo: Path) -> None:
    async with open_runtime(repo, approver=PolicyApprover(), overrides=overrides(
            sim, "responses"), env=ENV) as rt:
        warmer = rt.warm_drafts(20)
        warmer.draft_changed("EDIT it", files_for)
        await asyncio.sleep(0.3)
        assert warmer.sent == 0
    async with open_runtime(repo, approver=PolicyApprover(), overrides=overrides(sim),
                            env=ENV) as rt:
        warmer = rt.warm_drafts(0)
        warmer.draft_changed("EDIT it", files_for)
        await asyncio.sleep(0.2)
        assert warmer.sent == 0
    assert not [e for e in sim.requests() if (e["body"] or {}).get("generate") is False]


async def test_a_draft_left_alone_over_a_minute_is_not_warmed(sim: SimProcess,
                                                             repo: Path) -> None:
    now = [100.0]
    async with open_runtime(repo, approver=PolicyApprover(), overrides=overrides(sim),
                            env=ENV) as rt:
        from spark_pair.session.prewarm import IDLE_S, DraftWarmer

        warmer = rt.drafts = DraftWarmer(rt, 20, clock=lambda: now[0])
        warmer.draft_changed("EDIT it", files_for)
        now[0] += IDLE_S + 1  # the timer fires after the person has been away a minute
        await asyncio.sleep(0.3)
        assert warmer.sent == 0
        warmer.draft_changed("EDIT it again", files_for)  # typing again: it goes
        await until(lambda: warmer.sent == 1)


async def test_at_most_one_a_second(sim: SimProcess, repo: Path) -> None:
    (repo / "b.txt").write_text("bee\n")

    async def more_files(text: str) -> list[str]:
        return ["a.txt", "b.txt"]

    async with open_runtime(repo, approver=PolicyApprover(), overrides=overrides(sim),
                            env=ENV) as rt:
        warmer = rt.warm_drafts(10)
        warmer.draft_changed("EDIT one", files_for)
        await until(lambda: warmer.sent == 1)
        warmer.draft_changed("EDIT two", more_files)  # another file chosen: worth a pre-warm
        await asyncio.sleep(0.5)
        assert warmer.sent == 1  # the second waits for its second
        await until(lambda: warmer.sent == 2, timeout=3)


async def test_a_draft_that_changes_only_the_instruction_is_not_warmed_again(
        sim: SimProcess, repo: Path) -> None:
    """The server read all but the instruction with the last pre-warm: the next draft of the
    same files is not sent; the turn goes whole and its prompt cache covers all but the tail."""
    sim.configure(replies=[{"match": "EDIT", "text": DIFF}])
    async with open_runtime(repo, approver=PolicyApprover(apply=True), overrides=overrides(sim),
                            env=ENV, prewarm=True) as rt:
        warmer = await warmed_once(rt)
        await rt.warmed()
        tokens = warmer.tokens
        warmer.draft_changed("EDIT the second line to upper case", files_for)
        await until(lambda: warmer.skipped == 1)
        assert warmer.sent == 1 and warmer.tokens == tokens
        finished = await turn(rt, "EDIT the second line to upper case")
        assert finished.result.status == TurnStatus.APPLIED
        real = sim.requests()[-1]
        assert "second line" in user_text(real["body"])  # sent whole: not continued
        assert rt.drafts.counts == (0, 1, 0)
        # the server had read all of it but the instruction's new words
        assert 0 < real["unseen_tokens"] <= tokens_for_chars(len(" second line to upper case"))
        assert real["prompt_tokens"] > 10 * real["unseen_tokens"]
        rt.store.flush()
        from spark_pair.store import RequestStore

        with RequestStore() as store:
            assert store.records()[-1].extra.get("prewarm") == "prefix"


async def test_after_a_model_switch_the_next_draft_is_warmed_again(
        sim: SimProcess, repo: Path) -> None:
    """/model makes a new client on a new socket that never read the pre-warmed prefix: a
    draft differing only in its instruction is sent, not skipped."""
    sim.configure(replies=[{"match": "EDIT", "text": DIFF}])
    async with open_runtime(repo, approver=PolicyApprover(apply=True), overrides=overrides(sim),
                            env=ENV, prewarm=True) as rt:
        warmer = await warmed_once(rt)
        await rt.switch({"model.name": "gpt-5.3-codex"})
        await rt.warmed()
        assert rt.client.model == "gpt-5.3-codex"
        warmer.draft_changed("EDIT the second line to upper case", files_for)
        await until(lambda: warmer.sent == 2, timeout=4)
        assert warmer.skipped == 0
        assert sim.requests()[-1]["body"].get("model") == "gpt-5.3-codex"
