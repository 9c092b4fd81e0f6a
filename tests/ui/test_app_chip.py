"""The prompt's chip (the files chosen for the draft, on its border at 80 columns) names a file's
real reason: a file the person edited on disk says so, though an earlier turn showed it too.
Pilot against the simulator as a real process, a real git repository and its watcher."""

from __future__ import annotations

from pathlib import Path

from support.apps import make_app, opened, turn_over, until

from spark_pair.sim.process import SimProcess
from spark_pair.ui.widgets.prompt import Prompt

TIDY = "--- /dev/null\n+++ b/TIDY.md\n@@ -0,0 +1 @@\n+tidy\n"


async def test_a_file_edited_on_disk_is_not_called_an_earlier_turns(
        repo: Path, demo_sim: SimProcess) -> None:
    demo_sim.configure(replies=[{"match": "tidy", "text": TIDY}])
    app = make_app(repo, demo_sim, prompt="", files=())
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: opened(app), "the open repository")
        prompt = app.main.query_one(Prompt)
        (repo / "setup.cfg").write_text("[tool:pytest]\naddopts = -q\n")
        await until(pilot, lambda: app.main.driver.runtime.workspace.watcher.recent(),
                    "the watcher's report")
        await pilot.press(*"tidy it up")
        await until(pilot, lambda: "setup.cfg" in app.main.chooser.kept(),
                    "the file chosen (edited on disk)")
        await pilot.press("enter")  # the turn shows it to the model
        await until(pilot, lambda: app.main.query_one("#review").has_undecided, "the reply")
        await pilot.press("alt+shift+r")
        await until(pilot, lambda: turn_over(app), "the end of the turn")
        for n in range(4):  # edited after it: four newer edits
            (repo / f"notes{n}.txt").write_text(f"note {n}\n")
        await until(pilot, lambda: len(app.main.driver.runtime.workspace.watcher.recent()) == 5,
                    "the watcher's report")
        await pilot.press(*"go on")
        await until(pilot, lambda: app.main.chooser.draft == "go on", "the draft's files")
        await pilot.pause()
        chip = str(prompt.border_subtitle)
        assert "setup.cfg (edited on disk)" in chip, chip
