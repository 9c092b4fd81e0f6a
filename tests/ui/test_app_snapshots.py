"""SVG snapshots of the app against the simulator: the stream stalls at a fixed token (a
simulator fault), the meter's clock and TTFT are frozen and the cursor does not blink, so every
run draws the same screen."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from support.apps import until
from support.uiapps import words_marked

from spark_pair.protocol.events import FirstToken
from spark_pair.sim.demo_project import FILES, MATCH, PROMPT, reply_text
from spark_pair.sim.process import SimProcess
from spark_pair.sim.replies import tokenize
from spark_pair.ui.app import SparkPairApp
from spark_pair.ui.screens.main import Launch
from spark_pair.ui.widgets.diff_view import DiffView
from spark_pair.ui.widgets.meter import Meter
from spark_pair.ui.widgets.prompt import Prompt
from spark_pair.ui.widgets.review import ReviewPane

TOKENS = len(tokenize(reply_text()))


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The demo project in a folder with a fixed name (the header shows it)."""
    monkeypatch.setenv("SPARK_PAIR_HOME", str(tmp_path / "home"))
    for var in ("SPARK_PAIR_BASE_URL", "SPARK_PAIR_MODEL", "SPARK_PAIR_TRANSPORT"):
        monkeypatch.delenv(var, raising=False)
    root = tmp_path / "inventory"
    root.mkdir()
    for rel, text in FILES.items():
        (root / rel).write_text(text)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@localhost",
           "-c", "commit.gpgsign=false"]
    for args in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "start"]):
        subprocess.run(git + args, cwd=root, check=True, capture_output=True)
    return root


def stalled_app(root: Path, sim: SimProcess, after_tokens: int) -> SparkPairApp:
    sim.configure(replies=[{"match": MATCH, "text": reply_text()}])
    sim.set_faults([{"kind": "stall", "after_tokens": after_tokens, "seconds": 600}])
    launch = Launch(root=root, prompt=PROMPT,
                    files=["inventory.py", "test_inventory.py", "README.md", "TODO.txt"],
                    overrides={"model.base_url": sim.base_url,
                               "model.name": "gpt-5.3-codex-spark",
                               "session.transport": "chat",
                               # the files chosen by themselves wait for nothing (an index
                               # still building sends none): off, so every run is the same
                               "context.auto": "false"},
                    env={"SPARK_PAIR_API_KEY": "test-key"}, clock=lambda: 100.0)
    return SparkPairApp(launch)


def streamed(app: SparkPairApp, tokens: int) -> Any:
    async def before(pilot: Any) -> None:
        app.main.query_one(Prompt).cursor_blink = False
        meter = app.main.query_one(Meter)
        await until(pilot, lambda: meter.tokens >= tokens, f"{tokens} tokens")
        meter.feed([FirstToken(0.0)])  # the client's TTFT (real time): pinned, as the clock is
        await until(pilot, lambda: not meter.pending, "the meter's repaint (4 a second)")
        await until(pilot, lambda: all(v is not None for v in app.main.context.values()),
                    "the token estimates")
        await words_marked(pilot, app.main.query_one(DiffView))
    return before


def test_main_screen_mid_stream(snap_compare: Any, project: Path, sim: SimProcess) -> None:
    tokens = TOKENS // 2
    app = stalled_app(project, sim, tokens)
    assert snap_compare(app, terminal_size=(120, 36), run_before=streamed(app, tokens))


def test_review_pane_with_every_kind_of_operation(snap_compare: Any, project: Path,
                                                  sim: SimProcess) -> None:
    app = stalled_app(project, sim, TOKENS)
    wait = streamed(app, TOKENS)

    async def before(pilot: Any) -> None:
        await wait(pilot)
        pane = app.main.query_one(ReviewPane)
        await until(pilot, lambda: len(pane.review.entries) == 6, "every operation")
        await pilot.press("alt+a", "alt+r", "alt+n", "alt+shift+a")  # decided, then the rest
        await words_marked(pilot, app.main.query_one(DiffView))

    assert snap_compare(app, terminal_size=(120, 40), run_before=before)


def test_80x24_mid_stream(snap_compare: Any, project: Path, sim: SimProcess) -> None:
    tokens = TOKENS * 2 // 3
    app = stalled_app(project, sim, tokens)
    assert snap_compare(app, terminal_size=(80, 24), run_before=streamed(app, tokens))
