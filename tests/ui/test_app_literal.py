"""Paths with brackets are shown as they are (never read as markup): the status line, the header,
the files and review panes, the delete question (pilot against the simulator as a real
process, in a real git repository named with brackets)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from support.apps import screen_text, turn_over, type_line, until

from spark_pair.sim.process import SimProcess
from spark_pair.ui.app import SparkPairApp
from spark_pair.ui.dialogs.confirm import ConfirmScreen
from spark_pair.ui.screens.main import Launch
from spark_pair.ui.widgets.header import AppHeader
from spark_pair.ui.widgets.review import ReviewPane

PAGE = "src/[id]/page.tsx"
OLD = "src/[id]/[...slug].tsx"
REPLY = (f"--- a/{PAGE}\n+++ b/{PAGE}\n@@ -1,3 +1,3 @@\n export default function Page() {{\n"
         f"-  return null;\n+  return <div/>;\n }}\n"
         f"--- a/{OLD}\n+++ /dev/null\n@@ -1 +0,0 @@\n-old\n")


@pytest.fixture
def bracket_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SPARK_PAIR_HOME", str(tmp_path / "home"))
    root = tmp_path / "web[app]"
    (root / "src" / "[id]").mkdir(parents=True)
    (root / PAGE).write_text("export default function Page() {\n  return null;\n}\n")
    (root / OLD).write_text("old\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@localhost", "-c",
           "commit.gpgsign=false"]
    for args in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "start"]):
        subprocess.run(git + args, cwd=root, check=True, capture_output=True)
    return root


async def test_paths_with_brackets_are_shown_literally(bracket_repo: Path,
                                                       sim: SimProcess) -> None:
    sim.configure(replies=[{"match": "BRACKETS", "text": REPLY}])
    launch = Launch(root=bracket_repo, prompt="BRACKETS render the page", files=[PAGE],
                    overrides={"model.base_url": sim.base_url,
                               "model.name": "gpt-5.3-codex-spark", "session.transport": "ws"},
                    env={"SPARK_PAIR_API_KEY": "test-key"})
    app = SparkPairApp(launch)
    async with app.run_test(size=(140, 40)) as pilot:
        review = app.main.query_one(ReviewPane)
        await until(pilot, lambda: len(review.review.entries) == 2, "both proposals")
        await pilot.pause()
        assert "web[app]" in str(app.main.query_one(AppHeader).render())
        shown = screen_text(app)
        assert PAGE in shown and OLD in shown  # files, live diff and review panes
        await pilot.press("alt+a")  # the page's hunk; the cursor moves on to the delete
        await pilot.press("alt+d")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question")
        assert f"Delete {OLD}?" in screen_text(app)
        await pilot.press("alt+y")
        await until(pilot, lambda: turn_over(app), "the end of the turn")
        status = str(app.main.query_one("#notice").render())
        assert "applied: 2 file(s) changed" in status and PAGE in status and OLD in status
        for missing in ("src/[x]/nope.tsx", "src/[/b]/x.py"):  # a closing tag, too
            await type_line(pilot, app, f"/drop {missing}")
            assert f"{missing} is not in the context" in str(app.main.query_one("#notice")
                                                              .render())
        await pilot.press("ctrl+p")
        await pilot.press(*"drop")
        await until(pilot, lambda: f"Context: drop {PAGE}" in screen_text(app),
                    "the palette's context command, brackets kept")
        await pilot.press("escape")
        await pilot.press("f1")
        await until(pilot, lambda: "run [review] check" in screen_text(app), "the help")
    assert "<div/>" in (bracket_repo / PAGE).read_text()
    assert not (bracket_repo / OLD).exists()
