"""The second look in the app: the model (the simulator, a real process) asks for a file before
its diff; the live diff says what it asked for and what went, and the files pane lists the file
with why it went. The repository is the demo's with one more module."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.apps import make_app, screen_text, until
from support.context import commit_all

from spark_pair.sim.process import SimProcess
from spark_pair.ui.widgets.files import FilesPane
from spark_pair.ui.widgets.prompt import Prompt

UTIL = "def slugify(text):\n    return text.lower().replace(' ', '-')\n"
DIFF = ("--- a/pkg/util.py\n+++ b/pkg/util.py\n@@ -1,2 +1,2 @@\n def slugify(text):\n"
        "-    return text.lower().replace(' ', '-')\n"
        "+    return text.strip().lower().replace(' ', '-')\n")


@pytest.mark.parametrize("size", [(200, 50), (80, 24)])
async def test_the_model_asks_for_a_file_and_the_app_says_why_it_went(
        repo: Path, sim: SimProcess, size: tuple[int, int]) -> None:
    (repo / "pkg").mkdir()
    (repo / "pkg" / "util.py").write_text(UTIL)
    commit_all(repo, "a module")
    sim.configure(replies=[{"match": "You asked for: ", "text": DIFF},
                           {"match": "zorblat", "text": "NEED: pkg/util.py\nNEED: nowhere\n"}])
    app = make_app(repo, sim, prompt="", files=())
    async with app.run_test(size=size) as pilot:
        await until(pilot, lambda: app.main.driver.session is not None, "the repository open")
        app.main.query_one(Prompt).focus()
        app.main.query_one(Prompt).value = "zorblat the quux"
        await pilot.press("enter")
        pane = app.main.query_one(FilesPane)
        await until(pilot, lambda: "pkg/util.py" in pane.cut, "the look")
        assert pane.cut["pkg/util.py"] == ("asked by the model", ((1, 2),))
        await until(pilot, lambda: "modify  pkg/util.py" in screen_text(app), "the diff")
        text = " ".join(screen_text(app).split())
        said = "the model asked for pkg/util.py, nowhere: sent pkg/util.py (whole"
        assert said in text and text.index(said) < text.index("modify pkg/util.py")
        assert "not sent: nowhere (not found" in text
        if size[0] >= 100:  # the pane lists the file with why it went
            assert "↑ pkg/util.py sent" in text and "(asked by the" in text
        asked = [r for r in sim.requests() if r["body"].get("generate") is not False]
        assert len(asked) == 2  # the turn's request and the look's (pre-warms aside)


async def test_the_look_note_stands_before_its_diff_when_one_frame_holds_both() -> None:
    """A busy loop batches: the look and the first lines of its diff in one frame still show
    the note first."""
    from support.uiapps import DiffApp
    from textual.app import ComposeResult

    from spark_pair.edits.ops import OpKind
    from spark_pair.edits.parse_events import FileStarted, LineAdded
    from spark_pair.session.events import Looked
    from spark_pair.ui import sent_spans
    from spark_pair.ui.widgets.diff_view import DiffView
    from spark_pair.workspace.look import Sent

    class Both(DiffApp):
        def compose(self) -> ComposeResult:
            yield FilesPane()
            yield DiffView()

    app = Both()
    async with app.run_test(size=(120, 30)) as pilot:
        view = app.query_one(DiffView)
        looked = Looked(("pkg/util.py",), (Sent("pkg/util.py", "asked by the model", 30,
                                                "whole", ((1, 2),)),), (), 30)
        frame = [looked, FileStarted(0, OpKind.MODIFY, "pkg/util.py"),
                 LineAdded(0, 0, "+x")]
        sent_spans.feed(app.query_one(FilesPane), view, frame, None)
        await pilot.pause()
        texts = [r.text for r in view.rows]
        said = next(i for i, t in enumerate(texts) if "the model asked for pkg/util.py" in t)
        header = next(i for i, t in enumerate(texts) if t.startswith("modify"))
        assert said < header, texts
