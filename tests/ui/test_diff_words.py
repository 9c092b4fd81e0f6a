"""Word-level marks in the live diff: the changed words of a removed/added pair, on both
sides, underlined and bold (readable without colour), once the file is complete."""

from __future__ import annotations

import random

from support.diffstream import frames
from support.uiapps import DiffApp, words_marked

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
        await words_marked(pilot, app.view)
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
        await words_marked(pilot, app.view)
        assert marked(row_strips(app.view)["+    return price * quantity"])[1] == ["quantity"]


async def test_word_marks_survive_no_color(monkeypatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    app = DiffApp()
    async with app.run_test(size=(80, 16)) as pilot:
        assert app.no_color
        for events, partial in frames(REPLY, random.Random(3))[0]:
            app.view.feed(events, partial)
        await words_marked(pilot, app.view)
        strips = row_strips(app.view)
        assert marked(strips["-    return price * count"])[1] == ["count"]
        assert marked(strips["+    return price * quantity"])[1] == ["quantity"]


async def test_marks_are_worked_out_off_the_loop_once_per_hunk(monkeypatch) -> None:
    import threading

    from spark_pair.ui import word_marks

    calls: list[tuple[str, list[str]]] = []

    def spy(lines):
        calls.append((threading.current_thread().name, list(lines)))
        return word_marks_real(lines)

    word_marks_real = word_marks.hunk_word_spans
    monkeypatch.setattr(word_marks, "hunk_word_spans", spy)
    app = DiffApp()
    async with app.run_test(size=(80, 16)) as pilot:
        for events, partial in frames(REPLY, random.Random(5))[0]:
            app.view.feed(events, partial)
        await pilot.pause()
        await words_marked(pilot, app.view)
        assert marked(row_strips(app.view)["+    return price * quantity"])[1] == ["quantity"]
        app.view.scroll_to(y=3, animate=False)
        await pilot.pause()
        app.view.scroll_to(y=0, animate=False)
        await words_marked(pilot, app.view)
    assert sorted(lines[1] for _, lines in calls) == ["+class Widget(Base):",
                                                      "-    return price * count"]
    assert all(name != threading.main_thread().name for name, _ in calls)


async def test_a_row_is_painted_plain_until_its_marks_arrive() -> None:
    app = DiffApp()
    async with app.run_test(size=(80, 16)) as pilot:
        parser = DiffParser()
        app.view.feed([TextDelta(REPLY), *parser.feed(REPLY), *parser.close()], "")
        y = next(y for y in range(16) if app.view.render_line(y).text.startswith("+    return"))
        first = app.view.render_line(y)
        assert first.text.startswith("+    return price * quantity")
        assert marked(first)[1] == []  # asked for, not there yet
        await words_marked(pilot, app.view)
        assert marked(app.view.render_line(y))[1] == ["quantity"]
