"""`spark-pair stats` counts what the turns made of the drafts' pre-warms (hit, prefix, miss)
and says what they sent even when no turn was applied: pre-warms against the simulator process
in a real git repository, then the stats command on the request log they left."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_prewarm import DIFF, ENV, files_for, overrides, repo, turn, until

from spark_pair.cli.main import main
from spark_pair.session.approval import PolicyApprover
from spark_pair.session.runtime import open_runtime
from spark_pair.sim.process import SimProcess

pytestmark = pytest.mark.timeout(60)
__all__ = ["repo"]  # the fixture, shared with test_prewarm


async def test_stats_counts_pre_warm_hits_and_prefixes_without_an_applied_turn(
        sim: SimProcess, repo: Path) -> None:
    sim.configure(replies=[{"match": "EDIT", "text": DIFF}])
    async with open_runtime(repo, approver=PolicyApprover(apply=False),
                            overrides=overrides(sim), env=ENV, prewarm=True) as rt:
        await rt.warmed()
        warmer = rt.warm_drafts(30)
        warmer.draft_changed("EDIT a", files_for)
        await until(lambda: warmer.sent == 1)
        await rt.warmed()
        await turn(rt, "EDIT a")  # continues the pre-warm: a hit
        warmer.draft_changed("again EDIT", files_for)
        await until(lambda: warmer.sent == 2)
        await rt.warmed()
        await turn(rt, "something else EDIT")  # differs in its last item: a prefix
        assert rt.drafts is not None and rt.drafts.counts == (1, 1, 0)
        rt.store.flush()
        await asyncio.sleep(0)
    runner = CliRunner()
    report = json.loads(runner.invoke(main, ["stats", "--json", "--since", "all"]).output)
    turns = report["turns"]
    assert turns["prewarm"] == {"hit": 1, "prefix": 1, "miss": 0}
    assert turns["applied_turns"] == 0 and turns["prewarm_tokens"] > 0
    text = runner.invoke(main, ["stats", "--since", "all"]).output
    assert "Applied turns: none recorded yet" in text
    assert "Pre-warms: sent ~" in text and "1 hit, 1 prefix" in text and "0 miss" in text
