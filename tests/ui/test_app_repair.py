"""The repair round in the app, with Textual's pilot against the simulator as a real process in
the demo's git repository: a hunk whose context is not in the file goes back to the model once;
the live diff and the meter say so, the review pane gets the corrected hunk, and accepting it
writes it."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.apps import make_app, notice, review, screen_text, turn_over, until

from spark_pair.session.repair import ASK_MARK
from spark_pair.sim.demo_project import FILES
from spark_pair.sim.process import SimProcess
from spark_pair.ui.review_state import Item
from spark_pair.ui.widgets.diff_view import DiffView
from spark_pair.ui.widgets.meter import Meter

PROMPT = "TOTAL: let total take a discount"
WRONG = """```diff
--- a/inventory.py
+++ b/inventory.py
@@ -24,5 +24,5 @@
 def total(items):
-    result = 0.0
+    result = 0
     for item in items:
         result = result + item.price * item.quantity
     return result
```
"""
RIGHT = """```diff
--- a/inventory.py
+++ b/inventory.py
@@ -24,5 +24,5 @@
-def total(items):
+def total(items, discount=0.0):
     result = 0
     for item in items:
         result = result + item.price * item.quantity
-    return result
+    return result * (1 - discount)
```
"""
STILL_WRONG = RIGHT.replace("     result = 0\n", "     result = 0.0\n")


def _rows(app) -> str:
    return "\n".join(row.text for row in app.main.query_one(DiffView).rows)


@pytest.mark.parametrize("size", [(80, 24), (200, 50)])
async def test_the_repair_round_is_shown_and_its_hunk_is_reviewed_and_written(
        repo: Path, sim: SimProcess, size: tuple[int, int]) -> None:
    sim.configure(replies=[{"match": ASK_MARK, "text": RIGHT}, {"match": "TOTAL", "text": WRONG}])
    app = make_app(repo, sim, prompt=PROMPT)
    async with app.run_test(size=size) as pilot:
        await until(pilot, lambda: "repaired" in app.main.query_one(Meter).repair,
                    "the repair's end")
        rows = _rows(app)
        assert "repair: inventory.py hunk 1 matches nowhere in the file" in rows
        assert "repair: inventory.py hunk 1: fixed" in rows
        assert "+def total(items, discount=0.0):" in rows
        assert app.main.query_one(Meter).repair == "repaired 1/1"
        pane = review(app)
        await until(pilot, lambda: any(e.op.hunks[0].lines[1].startswith("+def total(items, d")
                                       for e in pane.review.entries.values()),
                    "the corrected proposal")
        [entry] = pane.review.entries.values()
        assert entry.op.hunks[0].lines[1] == "+def total(items, discount=0.0):"
        await until(pilot, lambda: "repaired 1/1" in screen_text(app), "the meter's mark")
        assert "can't apply" not in pane.text_of(Item(entry.index, 0))
        assert "repair: fixed 1 hunk" in notice(app)
        await pilot.press("alt+shift+a")
        await until(pilot, lambda: turn_over(app), "the end of the turn")
    written = (repo / "inventory.py").read_text()
    assert "def total(items, discount=0.0):" in written
    assert "    return result * (1 - discount)\n" in written
    assert sum(ASK_MARK in str(r.get("body", "")) for r in sim.requests()) == 1


async def test_a_repair_that_still_does_not_fit_leaves_the_hunk_refused(
        repo: Path, sim: SimProcess) -> None:
    sim.configure(replies=[{"match": ASK_MARK, "text": STILL_WRONG},
                           {"match": "TOTAL", "text": WRONG}])
    app = make_app(repo, sim, prompt=PROMPT)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: "repaired" in app.main.query_one(Meter).repair,
                    "the repair's end")
        assert app.main.query_one(Meter).repair == "repaired 0/1"
        assert "still does not apply" in _rows(app)
        # the turn ends: nothing of it can be written, and the notice says so
        await until(pilot, lambda: turn_over(app), "the end of the turn")
        assert "nothing was written" in notice(app) and "inventory.py" in notice(app)
        pane = review(app)
        await until(pilot, lambda: any("can't apply" in pane.text_of(Item(e.index, 0))
                                       for e in pane.review.entries.values()),
                    "the hunk marked as not applying")
        [entry] = pane.review.entries.values()
        assert entry.op.hunks[0].lines[1] == "-    result = 0.0"  # the reply's own hunk stays
    assert (repo / "inventory.py").read_text() == FILES["inventory.py"]
    assert sum(ASK_MARK in str(r.get("body", "")) for r in sim.requests()) == 1


async def test_escape_stops_the_repair_round_while_it_runs(repo: Path, sim: SimProcess) -> None:
    sim.configure(replies=[{"match": ASK_MARK, "text": RIGHT}, {"match": "TOTAL", "text": WRONG}],
                  ttft_ms=2000)  # the repair request waits 2 s for its first token
    app = make_app(repo, sim, prompt=PROMPT)
    async with app.run_test(size=(80, 24)) as pilot:
        meter = app.main.query_one(Meter)
        await until(pilot, lambda: meter.repair == "repair 1 hunk…", "the repair round")
        await pilot.press("escape")
        await until(pilot, lambda: turn_over(app), "the end of the turn")
        assert meter.repair == "repair stopped"
        assert "repair: inventory.py hunk 1: fixed" not in _rows(app)
    assert (repo / "inventory.py").read_text() == FILES["inventory.py"]


async def test_a_hunk_left_out_while_streaming_says_the_repair_round_will_try(
        repo: Path, sim: SimProcess) -> None:
    tail = "That is the whole change; the rest of the file stays as it is. " * 12
    sim.configure(tps=400, replies=[{"match": ASK_MARK, "text": RIGHT},
                                    {"match": "TOTAL", "text": WRONG + tail}])
    app = make_app(repo, sim, prompt=PROMPT)
    async with app.run_test(size=(80, 24)) as pilot:
        said: list[str] = []
        say = app.main.say
        app.main.say = lambda text, *a, **k: (said.append(text), say(text, *a, **k))[1]
        await until(pilot, lambda: "repaired" in app.main.query_one(Meter).repair,
                    "the repair's end")
        before = said[:next(i for i, t in enumerate(said) if t.startswith("repair:"))]
        assert any("can't apply as written: inventory.py; once the reply ends a repair round "
                   "asks the model to mend it" in t for t in before), said
        assert not any("left out:" in t for t in before)  # not shown as final
