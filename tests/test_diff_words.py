"""Word-level marks in the live diff: the changed words of a removed/added pair, on both
sides, underlined and bold (readable without colour), once the file is complete."""

from __future__ import annotations

import random

from diffstream import frames
from uiapps import DiffApp

from spark_pair.edits.parser import DiffParser
from spark_pair.protocol.events import TextDelta

REPLY = ("--- a/shop.py\n+++ b/shop.py\n@@ -1,3 +1,3 @@\n def total(items):\n"
         "-    return price * count\n+    return price * quantity\n \n"
         "--- a/other.py\n+++ b/other.py\n@@ -1,1 +1,1 @@\n-import os\n+class Widget(Base):\n")


def marked(strip) -> tuple[str, list[str]]:
    """A painted row's text and its word-marked pieces."""
    return strip.text.rstrip(), [seg.text for seg in strip
                                 if seg.style and seg.style.underline and seg.style.bold]


def row_strips(view) -> dict[str, object]:
    return {view.render_line(y).text.strip(): view.render_line(y)
            for y in range(view.size.height) if view.render_line(y).text.strip()}


async def test_the_changed_word_is_marked_on_the_removed_and_the_added_line() -> None:
    app = DiffApp()
    async with app.run_test(size=(80, 16)) as pilot:
        for events, partial in frames(REPLY, random.Random(7))[0]:
            app.view.feed(events, partial)
        await pilot.pause()
        strips = row_strips(app.view)
        assert marked(strips["-    return price * count"])[1] == ["count"]
        assert marked(strips["+    return price * quantity"])[1] == ["quantity"]
        # a pair with nothing in common is a whole-line change: no word marks
        assert marked(strips["-import os"])[1] == []
        assert marked(strips["+class Widget(Base):"])[1] == []
        assert marked(strips["def total(items):"])[1] == []


async def test_marks_wait_for_the_file_to_be_complete_then_appear() -> None:
    app = DiffApp()
    async with app.run_test(size=(80, 16)) as pilot:
        parser = DiffParser()
        head, tail = REPLY.split(" \n--- a/other.py", 1)
        app.view.feed([TextDelta(head), *parser.feed(head)], parser.partial_line)
        await pilot.pause()
        assert marked(row_strips(app.view)["+    return price * quantity"])[1] == []
        rest = " \n--- a/other.py" + tail
        app.view.feed([TextDelta(rest), *parser.feed(rest), *parser.close()], "")
        await pilot.pause()
        assert marked(row_strips(app.view)["+    return price * quantity"])[1] == ["quantity"]


async def test_word_marks_survive_no_color(monkeypatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    app = DiffApp()
    async with app.run_test(size=(80, 16)) as pilot:
        assert app.no_color
        for events, partial in frames(REPLY, random.Random(3))[0]:
            app.view.feed(events, partial)
        await pilot.pause()
        strips = row_strips(app.view)
        assert marked(strips["-    return price * count"])[1] == ["count"]
        assert marked(strips["+    return price * quantity"])[1] == ["quantity"]
