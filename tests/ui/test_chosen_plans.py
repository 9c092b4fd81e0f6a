"""The files pane's plan for a draft, when the pre-warm plans the same draft meanwhile."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

from spark_pair.ui.chosen import ChosenFiles

TEXT = "rename helper_1500 in helpers.py"


class Driver:
    """Plans at once for the settled draft (wait=True); the pre-warm's look (wait=False) and
    the draft's context wait for the test to let them go."""

    def __init__(self) -> None:
        self.warm_gate, self.context_gate = asyncio.Event(), asyncio.Event()

    @staticmethod
    def _plan(label: str) -> Any:
        files = [SimpleNamespace(path="helpers.py", label=label, tokens=15000)]
        return SimpleNamespace(found=SimpleNamespace(files=files, withheld=[],
                                                     paths=lambda: ["helpers.py"]))

    async def plan(self, text: str, pinned: list[str], dropped: Any, *,
                   wait: bool = True) -> Any:
        if not wait:
            await self.warm_gate.wait()
        return self._plan("settled" if wait else "pre-warm")

    async def draft_context(self, text: str, files: list[str]) -> Any:
        await self.context_gate.wait()
        return SimpleNamespace(partial={"helpers.py": [(1, 41), (4461, 4543)]},
                               file_tokens={"helpers.py": 697},
                               texts={"helpers.py": "x = 1\n" * 10000})


async def test_a_pre_warm_planning_the_same_draft_meanwhile_leaves_its_spans_shown() -> None:
    """The pre-warm asked for the draft's files before the settled plan came and got its
    answer while the draft's context was being built: the pane still shows what goes of the
    large file (it kept the settled plan; it once took the pre-warm's and dropped the spans)."""
    driver = Driver()
    chooser = ChosenFiles(SimpleNamespace(driver=driver, sent_context=lambda: []),
                          on_change=lambda: None)
    warm = asyncio.ensure_future(chooser.files_for(TEXT, []))
    await asyncio.sleep(0)  # the pre-warm waits for its plan
    settled = asyncio.ensure_future(chooser._plan(TEXT))
    for _ in range(10):
        await asyncio.sleep(0)
    assert chooser.plan is not None and chooser.draft == TEXT  # the settled plan, in hand
    driver.warm_gate.set()
    assert await asyncio.wait_for(warm, 5) == ["helpers.py"]
    driver.context_gate.set()
    await asyncio.wait_for(settled, 5)
    [chosen] = chooser.chosen
    assert (chosen.path, chosen.sends, chosen.regions) == ("helpers.py", 697,
                                                           ((1, 41), (4461, 4543)))


async def test_a_plan_for_another_draft_does_not_carry_the_last_draft_s_sizes() -> None:
    """The pre-warm (or enter) plans a draft the pane has no plan for yet: the files it chose
    show no figures of the draft before (they once kept its tokens and spans)."""
    driver = Driver()
    driver.context_gate.set()
    driver.warm_gate.set()
    chooser = ChosenFiles(SimpleNamespace(driver=driver, sent_context=lambda: []),
                          on_change=lambda: None)
    await asyncio.wait_for(chooser._plan(TEXT), 5)
    assert chooser.chosen[0].sends == 697
    assert await asyncio.wait_for(chooser.files_for("rename helper_9 in helpers.py", []),
                                  5) == ["helpers.py"]
    [chosen] = chooser.chosen
    assert chosen.reason == "pre-warm"
    assert (chosen.sends, chosen.regions) == (None, ())
