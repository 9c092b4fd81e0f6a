"""The live diff at its edges: a row cut at the right edge says so, a `-`/`+` pair whose change
lies past the edge shows the change, prose wraps, and the view scrolls sideways."""

from __future__ import annotations

import random

from support.diffstream import frames
from support.uiapps import DiffApp, words_marked

from spark_pair.protocol.events import TextDelta
from spark_pair.ui.widgets.diff_view import LESS, MORE, Kind

PAD = "x" * 50
LONG = (f"--- a/s.py\n+++ b/s.py\n@@ -1,3 +1,3 @@\n def f():\n    # {PAD} {PAD}\n"
        f"-    items = sorted(things, key=lambda t: t.name, {PAD}reverse=False)\n"
        f"+    items = sorted(things, key=lambda t: t.name, {PAD}reverse=True)\n")


def painted(view) -> list[str]:
    return [view.render_line(y).text for y in range(view.size.height)]


async def fed(pilot, app, reply: str) -> None:
    for events, partial in frames(reply, random.Random(5))[0]:
        app.view.feed(events, partial)
    await words_marked(pilot, app.view)
    await pilot.pause()


async def test_a_row_cut_at_the_edge_is_marked_and_a_hidden_change_is_shown() -> None:
    app = DiffApp()
    async with app.run_test(size=(60, 12)) as pilot:
        await fed(pilot, app, LONG)
        rows = painted(app.view)
        removed = next(r for r in rows if r.startswith("-"))
        added = next(r for r in rows if r.startswith("+"))
        comment = next(r for r in rows if r.startswith("    #"))
        assert comment.endswith(MORE), comment  # it goes on past the edge: said in its last column
        for row in (removed, added):
            assert row.startswith(("-    ite…", "+    ite…")), row  # the unchanged middle is
        assert "reverse=False" in removed and "reverse=True" in added  # left out: the change shows
        assert "def f():" in "".join(rows) and MORE not in next(
            r for r in rows if "def f():" in r)  # a row that fits is as it was


async def test_the_view_scrolls_sideways_and_marks_what_is_left_of_it() -> None:
    app = DiffApp()
    async with app.run_test(size=(60, 12)) as pilot:
        await fed(pilot, app, LONG)
        app.view.focus()
        await pilot.press(*["right"] * 30)
        await pilot.pause()
        assert app.view.scroll_x > 0
        rows = painted(app.view)
        removed = next(r for r in rows if r.startswith(LESS) and "x" in r)
        assert "…" not in removed  # scrolled: the row as it is, from its scroll position


async def test_prose_wraps_at_the_views_width() -> None:
    app = DiffApp()
    async with app.run_test(size=(60, 12)) as pilot:
        words = " ".join(f"word{i}" for i in range(30))
        app.view.feed([TextDelta(f"{words}\n")])
        await pilot.pause()
        prose = [r.text for r in app.view.rows if r.kind == Kind.PROSE]
        assert len(prose) > 1 and " ".join(prose).split() == words.split()
        assert all(len(t) < app.view.size.width for t in prose)
        assert not any(MORE in line for line in painted(app.view))


async def test_prose_streamed_narrow_wraps_again_when_the_view_widens() -> None:
    """A reply of prose alone, streamed at 40 columns, then the terminal widened to 160: its
    lines are wrapped again at the new width, the line still being written too (before: they
    stayed cut at 40 columns)."""
    app = DiffApp()
    async with app.run_test(size=(40, 24)) as pilot:
        words = " ".join(f"word{i}" for i in range(40))
        app.view.feed([TextDelta(f"{words}\n\nsecond paragraph\nstill ")], "still ")
        await pilot.pause()
        narrow = [r.text for r in app.view.rows if r.kind == Kind.PROSE]
        assert len(narrow) > 8
        await pilot.resize_terminal(160, 24)
        await pilot.pause()
        wide = [r.text for r in app.view.rows]
        assert len(wide) == 4 and " ".join(wide[:2]).split() == words.split(), wide
        assert wide[2:] == ["", "second paragraph"] and app.view.partial == "still "
        assert all(len(t) < app.view.size.width for t in wide)
        app.view.feed([TextDelta("going\n")])  # the stream goes on as before
        await pilot.pause()
        assert [r.text for r in app.view.rows][-1] == "still going"
        await pilot.resize_terminal(60, 24)
        await pilot.pause()
        assert len(app.view.rows) > 6 and all(len(r.text) < 60 for r in app.view.rows)


STREAMED = (f"--- a/s.py\n+++ b/s.py\n@@ -1,2 +1,2 @@\n def f():\n"
            f"-    items = sorted(things, key=lambda t: t.name, {PAD}reverse=True)\n"
            f"+    items = sorted(things, key=lambda t: t.name, {PAD}reverse=False)\n"
            " # end\n")


async def test_a_pair_painted_while_its_hunk_streams_shows_its_change_once_complete() -> None:
    app = DiffApp()
    async with app.run_test(size=(80, 24)) as pilot:
        for events, partial in frames(STREAMED, random.Random(7), max_frame=8)[0]:
            app.view.feed(events, partial)
            painted(app.view)  # painted between chunks, as the app paints frames
            await pilot.pause()
        await words_marked(pilot, app.view)
        await pilot.pause()
        rows = painted(app.view)
        removed = next(r for r in rows if r.startswith("-"))
        added = next(r for r in rows if r.startswith("+"))
        assert "reverse=True" in removed and "reverse=False" in added, (removed, added)
        assert removed != added
