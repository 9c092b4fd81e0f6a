"""The app driven with Textual's pilot: how the tests start it against the simulator, wait for
it and read its screen."""

from __future__ import annotations

import asyncio
import html
import io
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console

from spark_pair.edits.ops import OpKind
from spark_pair.sim.demo_project import PROMPT
from spark_pair.sim.process import SimProcess
from spark_pair.ui.app import SparkPairApp
from spark_pair.ui.screens.main import Launch
from spark_pair.ui.textual_private import ChordParser
from spark_pair.ui.widgets.prompt import Prompt
from spark_pair.ui.widgets.review import ReviewPane

WAIT_S = 20.0
# a short operation to open a paced reply with: its first proposal comes at once, not after the
# demo's first operation (about 350 tokens: 6 s at 60 tok/s)
QUICK_OP = "--- /dev/null\n+++ b/NOTES.md\n@@ -0,0 +1 @@\n+notes\n"


def make_app(root: Path, sim: SimProcess, *, prompt: str = PROMPT, transport: str = "auto",
             files: tuple[str, ...] = ("inventory.py", "test_inventory.py"),
             **overrides: str) -> SparkPairApp:
    launch = Launch(root=root, prompt=prompt, files=list(files),
                    overrides={"model.base_url": sim.base_url,
                               "model.name": "gpt-5.3-codex-spark",
                               "session.transport": transport, **overrides},
                    env={"SPARK_PAIR_API_KEY": "test-key"})
    return SparkPairApp(launch)


async def until(pilot: Any, condition: Callable[[], Any], what: str) -> None:
    """Let the app run until `condition()` holds (bounded). Looked at every 10 ms as the app
    runs; once it holds, the pilot waits for every widget to take its messages and paints the
    screen, and it is looked at again (the pilot's wait, a message to each widget, is CPU a
    poll need not spend each time)."""
    deadline = time.monotonic() + WAIT_S
    while True:
        if condition():
            await pilot.pause(0)
            if condition():
                return
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what} ({_state(pilot.app)})")
        await asyncio.sleep(0.01)


def review(app: SparkPairApp) -> ReviewPane:
    return app.main.query_one(ReviewPane)


async def go_to(pilot: Any, app: SparkPairApp, index: int) -> None:
    """Move the review cursor to an operation with n / p, as a person would."""
    for _ in range(20):
        cursor = review(app).review.cursor
        assert cursor is not None
        if cursor.op == index:
            return
        order = review(app).review.order()  # (deletes and renames come first)
        await pilot.press("alt+n" if order.index(cursor.op) < order.index(index) else "alt+p")
    raise AssertionError(f"could not reach operation {index}")


def entries_of(app: SparkPairApp, kind: OpKind) -> list[Any]:
    return [e for e in review(app).review.entries.values() if e.kind is kind]


def all_proposed(app: SparkPairApp) -> bool:
    return len(review(app).review.entries) == 6  # 3 modifies, a create, a delete, a rename


def _state(app: Any) -> str:
    """What the app showed when a wait ran out: its screen, notice and turn (to tell a slow
    machine from a stuck app)."""
    try:
        main = app.main
        return (f"screen {type(app.screen).__name__}, notice {notice(app)!r}, turn worker "
                f"{main.turn_worker is not None}, driver running {main.driver.running}")
    except Exception as exc:  # (an app not running, or not this app)
        return f"state unknown: {exc!r}"


def turn_over(app: SparkPairApp) -> bool:
    return app.main.turn_worker is None and not app.main.driver.running


def screen_text(app: SparkPairApp) -> str:
    """The screen as a person reads it: one line per row, from the rendered SVG."""
    rows: dict[float, list[tuple[float, str]]] = {}
    for m in re.finditer(r'<text class="[^"]*" x="([\d.]+)" y="([\d.]+)"[^>]*>(.*?)</text>',
                         app.export_screenshot(), re.S):
        rows.setdefault(float(m.group(2)), []).append((float(m.group(1)),
                                                       html.unescape(m.group(3))))
    return "\n".join("".join(t for _, t in sorted(r)).replace("\xa0", " ")
                     for _, r in sorted(rows.items()))


def notice(app: SparkPairApp) -> str:
    return str(app.main.query_one("#notice").render())


def opened(app: Any) -> bool:
    return app.main.driver.session is not None


def edit_bodies(sim: SimProcess) -> list[Any]:
    """The bodies of the requests that asked for a reply (not pre-warming)."""
    out = []
    for entry in sim.requests():
        body = entry.get("body") or {}
        if isinstance(body, dict) and body.get("generate") is not False and (
                body.get("input") or body.get("messages")):
            out.append(body)
    return out


async def typed(pilot: Any, text: str) -> None:
    """`text` as a fast typist's (or a terminal write's) keys: read by the app's own parser of
    a terminal's input (a key event a character, named as a person's key would be) and posted
    in order, each routed where the focus is when it comes (the pilot's press waits for an
    idle loop twice a key: 0.04-0.1 s each); back once the prompt shows them at its end."""
    app = pilot.app
    want = app.main.query_one(Prompt).text + text  # (typed at the prompt's end)
    parser = ChordParser()  # the app's own reader of a terminal's input
    for event in (*parser.feed(text), *parser.feed("")):
        app.post_message(event)
    await until(pilot, lambda: app.main.query_one(Prompt).text == want, f"{text!r} typed")


async def type_line(pilot: Any, app: Any, text: str) -> None:
    app.main.query_one(Prompt).focus()
    await typed(pilot, text)
    await pilot.press("enter")


def screen_rows(app: SparkPairApp) -> list[str]:
    """The screen's rows as the terminal shows them, spaces included."""
    width, height = app.size
    console = Console(width=width, height=height, file=io.StringIO(), force_terminal=True,
                      color_system="truecolor", record=True, legacy_windows=False,
                      safe_box=False)
    console.print(app.screen._compositor.render_update(
        full=True, screen_stack=app._background_screens))
    return console.export_text().splitlines()
