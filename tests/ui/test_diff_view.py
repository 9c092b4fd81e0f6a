"""The live diff pane fed with real parser events from corpus replies, in random frames."""

from __future__ import annotations

import gc
import random

from support.diffstream import CORPUS, frames, reply
from support.uiapps import DiffApp
from textual.widgets import Static  # noqa: F401  (keeps textual's import cost out of timings)

from spark_pair.edits.ops import Create, Delete, Modify, Rename
from spark_pair.edits.parse_events import FileStarted, LineAdded
from spark_pair.protocol.events import TextDelta
from spark_pair.ui.widgets.diff_view import DiffView, HunkMark, Kind

SIZE = (100, 20)
REPLIES = sorted(p.name for p in CORPUS.iterdir())


def header_of(op) -> str:
    match op:
        case Rename(src=path, dst=new):
            return f"rename  {path} → {new}"
        case Create(path=path):
            return f"create  {path}"
        case Delete(path=path):
            return f"DELETE  {path}"
        case Modify(path=path):
            return f"modify  {path}"
    raise AssertionError(op)


def body_of(op) -> list[tuple[Kind, str]]:
    """The rows under an op's header, from the parsed operation itself."""
    marker = {"+": Kind.ADDED, "-": Kind.REMOVED}
    match op:
        case Create(content=content):
            return [(Kind.ADDED, "+" + line.expandtabs(4)) for line in content.splitlines()]
        case Delete():
            return []  # checked apart: every row is a removed line
    rows: list[tuple[Kind, str]] = []
    for hunk in op.hunks:
        rows.append((Kind.HUNK, "@@"))
        rows.extend((marker.get(line[:1], Kind.CONTEXT), line.expandtabs(4))
                    for line in hunk.lines)
    return rows


def op_rows(view: DiffView, index: int) -> list[tuple[Kind, str]]:
    rows = [view.rows[i] for i in view.rows_of(index)]
    return [(r.kind, r.text[:2] if r.kind == Kind.HUNK else r.text) for r in rows]


def screen_lines(view: DiffView) -> list[str]:
    return [view.render_line(y).text.rstrip() for y in range(view.size.height)]


async def test_every_corpus_reply_in_random_frames_gives_the_diff_rows() -> None:
    app = DiffApp()
    async with app.run_test(size=SIZE) as pilot:
        view = app.view
        prose_by_name: dict[str, list[str]] = {}
        for seed, name in enumerate(REPLIES):
            view.reset()
            batches, parser = frames(reply(name), random.Random(seed))
            for events, partial in batches:
                view.feed(events, partial)
            ops = parser.operations()
            assert ops, name
            assert len(view.file_rows) == len(ops), name
            for i, op in enumerate(ops):
                rows = op_rows(view, i)
                assert rows[0][0] == Kind.FILE, name
                assert rows[0][1].split(" · ")[0] == header_of(op), name
                if isinstance(op, Delete):
                    assert all(k in (Kind.HUNK, Kind.REMOVED) for k, _ in rows[1:]), name
                elif isinstance(op, Create):
                    assert [r for r in rows[1:] if r[0] != Kind.HUNK] == body_of(op), name
                else:
                    assert rows[1:] == body_of(op), name
            assert view.virtual_size.height == len(view.rows)
            prose = [r.text for r in view.rows if r.kind == Kind.PROSE]
            assert not any(line.startswith(("```", "--- ", "+++ ", "@@")) for line in prose)
            prose_by_name[name] = prose
        # the prose does not depend on how the stream was cut
        for seed, name in enumerate(REPLIES):
            view.reset()
            for events, partial in frames(reply(name), random.Random(seed + 100), max_token=1,
                                          max_frame=3)[0]:
                view.feed(events, partial)
            assert [r.text for r in view.rows if r.kind == Kind.PROSE] == prose_by_name[name]
        await pilot.pause()


async def test_markers_are_kept_and_prose_is_shown_without_diff_syntax() -> None:
    app = DiffApp()
    async with app.run_test(size=SIZE) as pilot:
        view = app.view
        for events, partial in frames(reply("17-several-files"), random.Random(3))[0]:
            view.feed(events, partial)
        await pilot.pause()
        prose = [r.text for r in view.rows if r.kind == Kind.PROSE]
        assert prose == ["Three changes:"]
        shown = screen_lines(view)
        assert shown[:4] == ["Three changes:", "modify  a.txt · 1 hunk +1 -1", "@@ -1,3 +1,3 @@",
                             " a1"]
        assert "-a2" in shown and "+A2" in shown and "+b3" in shown
        assert not any(line.startswith(("```", "diff --git", "--- ", "+++ ")) for line in shown)


async def test_the_line_being_written_is_the_last_row() -> None:
    app = DiffApp()
    async with app.run_test(size=SIZE) as pilot:
        view = app.view
        text = reply("01-fenced-single-hunk")
        cut = text.index("\n+") + 4  # in the middle of the first added line
        batches, _ = frames(text[:cut], random.Random(1))
        for events, _partial in batches[:-1]:
            view.feed(events, _partial)
        view.feed(batches[-1][0], text[:cut].rsplit("\n", 1)[1])
        await pilot.pause()
        lines = [line for line in screen_lines(view) if line]
        assert lines[-1] == text[:cut].rsplit("\n", 1)[1]
        assert view.virtual_size.height == len(view.rows) + 1
        view.feed([], "")
        assert view.virtual_size.height == len(view.rows)


def long_diff(hunks: int = 40) -> str:
    parts = ["Here it is:\n", "```diff\n", "--- a/big.py\n", "+++ b/big.py\n"]
    for h in range(hunks):
        parts.append(f"@@ -{h * 10 + 1},3 +{h * 10 + 1},3 @@ def f{h}():\n")
        parts.append(f" keep {h}\n-old {h}\n+new {h}\n")
    parts.append("```\n")
    return "".join(parts)


async def test_follows_the_tail_and_a_user_scroll_up_stays_put() -> None:
    app = DiffApp()
    async with app.run_test(size=SIZE) as pilot:
        view = app.view
        batches, _ = frames(long_diff(), random.Random(7))
        half = len(batches) // 2
        for events, partial in batches[:half]:
            view.feed(events, partial)
            await pilot.pause()
        assert view.max_scroll_y > 0
        assert view.scroll_y == view.max_scroll_y  # the tail is in view
        view.focus()
        await pilot.press("up", "up", "up")
        await pilot.pause()
        held = view.scroll_y
        assert held == view.max_scroll_y - 3
        for events, partial in batches[half:]:
            view.feed(events, partial)
            await pilot.pause()
        assert view.scroll_y == held < view.max_scroll_y - 3  # new rows did not move it
        await pilot.press("end")
        await pilot.pause()
        view.feed([TextDelta("Done.\n")])
        await pilot.pause()
        assert view.scroll_y == view.max_scroll_y
        assert screen_lines(view)[-1] == "Done."


async def test_scroll_to_hunk_and_marks() -> None:
    app = DiffApp()
    async with app.run_test(size=SIZE) as pilot:
        view = app.view
        for events, partial in frames(long_diff(), random.Random(2))[0]:
            view.feed(events, partial)
        await pilot.pause()
        assert view.scroll_to_hunk(0, 5)
        await pilot.pause()
        shown = screen_lines(view)
        assert shown[1] == "▶ @@ -51,3 +51,3 @@ def f5():"
        assert shown[2:5] == [" keep 5", "-old 5", "+new 5"]
        assert list(view.rows_of(0, 5)) == [view.hunk_rows[(0, 5)] + i for i in range(4)]
        view.mark_hunk(0, 5, HunkMark.ACCEPTED)
        view.mark_hunk(0, 6, "rejected")
        await pilot.pause()
        shown = screen_lines(view)
        assert shown[1].endswith("def f5():  ✓ accepted")
        assert shown[5].endswith("def f6():  ✗ rejected")
        painted = len(view._cache)
        assert painted > 0
        view.mark_hunk(0, 5, "accepted")  # the same decision again: nothing is repainted
        view.scroll_to_hunk(0, 5)
        assert len(view._cache) == painted
        view.mark_hunk(0, 6, None)
        view.scroll_to_hunk(0, 6)
        await pilot.pause()
        assert "▶" not in screen_lines(view)[1]
        assert not view.scroll_to_hunk(3, 0)  # not arrived
        # followed no more: new rows do not pull the view to the tail
        top = view.scroll_y
        view.feed([TextDelta("more prose\n")])
        await pilot.pause()
        assert view.scroll_y == top


async def test_control_and_bidi_characters_are_escaped() -> None:
    app = DiffApp()
    async with app.run_test(size=SIZE) as pilot:
        view = app.view
        view.feed([TextDelta("note \u202eevil\n"),
                   FileStarted(0, "modify", "a\x1b]0;x\x07.py", None),
                   LineAdded(0, 0, "+x = '\x1b[2J'\tz")])
        await pilot.pause()
        text = "\n".join(screen_lines(view))
        assert "\x1b" not in text and "\u202e" not in text and "\x07" not in text
        assert "modify  a\\x1b]0;x\\x07.py" in text
        assert "note \\u202eevil" in text
        assert "+x = '\\x1b[2J'  z" in text


async def test_no_color_keeps_rows_apart_by_marker_and_text_style(monkeypatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    app = DiffApp()
    async with app.run_test(size=SIZE) as pilot:
        assert app.no_color
        view = app.view
        for events, partial in frames(reply("17-several-files"), random.Random(4))[0]:
            view.feed(events, partial)
        await pilot.pause()
        styles = {}
        for y in range(view.size.height):
            strip = view.render_line(y)
            text = strip.text
            styles[text.split()[0] if text.strip() else ""] = next(iter(strip)).style
        assert styles["modify"].reverse and styles["modify"].bold
        assert styles["@@"].underline
        assert styles["+A2"].bold and not styles["-a2"].bold
        # decision marks and the focus pass the monochrome filter too
        view.mark_hunk(0, 0, HunkMark.ACCEPTED)
        view.scroll_to_hunk(1, 0)
        await pilot.pause()
        svg = app.export_screenshot()
        assert "+A2" in svg and "-a2" in svg and "accepted" in svg and "▶" in svg


async def test_rows_are_painted_from_a_bounded_cache() -> None:
    app = DiffApp()
    async with app.run_test(size=SIZE) as pilot:
        view = app.view
        for n, (events, partial) in enumerate(frames(long_diff(400), random.Random(5),
                                                     max_frame=400)[0]):
            view.feed(events, partial)
            if n % 10 == 0:
                await pilot.pause()
        await pilot.pause()
        for top in range(0, int(view.max_scroll_y), 37):  # paint rows all over the diff
            view.scroll_to(y=top, animate=False)
            await pilot.pause()
        assert len(view.rows) > 1600
        assert len(view._cache) == view._cache.maxsize  # full, and no bigger


async def test_a_rewind_shows_the_diff_again_without_doubling_or_stray_prose() -> None:
    """A retry that answers differently: the session sends Rewound(keep) and the parse events of
    the kept text again, then the new text; the pane ends as if the new reply came clean."""
    from spark_pair.edits.parser import DiffParser
    from spark_pair.protocol.events import Rewound

    final = reply("17-several-files")
    keep = final.index("+b3")  # the retry differs from here
    first = final[:keep] + "+b3 but different\n more\n"
    app = DiffApp()
    async with app.run_test(size=SIZE) as pilot:
        view = app.view
        for events, partial in frames(first, random.Random(8))[0][:-1]:  # not closed
            view.feed(events, partial)
        parser = DiffParser()
        view.feed([Rewound(keep, "retried"), *parser.feed(final[:keep])], parser.partial_line)
        rng = random.Random(9)
        i = keep
        while i < len(final):
            n = rng.randint(1, 6)
            view.feed([TextDelta(final[i:i + n]), *parser.feed(final[i:i + n])],
                      parser.partial_line)
            i += n
        view.feed(parser.close(), "")
        await pilot.pause()
        clean = DiffApp()
        async with clean.run_test(size=SIZE):
            for events, partial in frames(final, random.Random(10))[0]:
                clean.view.feed(events, partial)
            assert view.rows == clean.view.rows
        assert "+b3 but different" not in [r.text for r in view.rows]


def test_file_headers_say_what_each_operation_holds() -> None:
    from spark_pair.edits.ops import Hunk
    from spark_pair.ui.widgets.diff_view import op_detail

    two = [Hunk(1, 2, 1, 2, [" a", "-b", "+c"]), Hunk(9, 1, 9, 2, [" x", "+y"])]
    assert op_detail(Modify("a.py", two)) == "2 hunks +2 -1"
    assert op_detail(Rename("a.py", "b.py", two[:1])) == "1 hunk +1 -1"
    assert op_detail(Rename("a.py", "b.py", [])) == ""
    assert op_detail(Create("n.py", "one\ntwo\n")) == "new file, 2 lines"
    assert op_detail(Create("n.py", "one")) == "new file, 1 line"
    assert op_detail(Delete("old.py", uncommitted=True)) == "has uncommitted changes!"
    assert op_detail(Delete("old.py")) == ""


async def test_headers_gain_the_operation_summary_when_it_is_complete() -> None:
    app = DiffApp()
    async with app.run_test(size=SIZE) as pilot:
        view = app.view
        for name, header in [("10-create-file", "create  src/util/strings.py · new file, 4 lines"),
                             ("11-delete-file", "DELETE  old.py"),
                             ("12-rename-with-edits", "rename  helpers.py → common.py · 1 hunk")]:
            view.reset()
            for events, partial in frames(reply(name), random.Random(1))[0]:
                view.feed(events, partial)
            await pilot.pause()
            assert view.rows[view.file_rows[0]].text.startswith(header), name


async def test_a_decision_or_a_focus_move_repaints_only_the_rows_it_changes() -> None:
    app = DiffApp()
    async with app.run_test(size=SIZE) as pilot:
        view = app.view
        for events, partial in frames(long_diff(40), random.Random(2))[0]:
            view.feed(events, partial)
        view.scroll_to(y=0, animate=False)
        await pilot.pause()
        for y in range(view.size.height):
            view.render_line(y)
        painted = set(view._cache.keys())
        assert len(painted) == view.size.height
        header = view.hunk_rows[(0, 0)]
        view.mark_hunk(0, 0, HunkMark.ACCEPTED)
        view.scroll_to_hunk(0, 1)  # the focus moves to the next hunk's header
        dropped = painted - set(view._cache.keys())
        assert {key[0] for key in dropped} == {header, view.hunk_rows[(0, 1)]}
        assert "accepted" in view.render_line(header).text


async def test_a_growing_diff_lays_out_nothing_and_its_scrollbar_catches_up() -> None:
    """Rows arrive frame by frame, past the view's height, and a new turn clears them: the
    screen is never laid out again (a layout repaints every pane), the tail is followed, and
    the scrollbar, told at most 4 times a second, ends up showing all the rows."""
    from textual import messages
    from textual.screen import Screen

    app = DiffApp()
    async with app.run_test(size=SIZE) as pilot:
        view = app.view
        await pilot.pause()
        layouts: list[object] = []
        screen_on_layout = Screen._on_layout

        async def on_layout(screen: Screen, message: messages.Layout) -> None:
            layouts.append(message.widget)
            await screen_on_layout(screen, message)

        Screen._on_layout = on_layout  # type: ignore[method-assign]
        try:
            for n, (events, partial) in enumerate(frames(long_diff(60), random.Random(3))[0]):
                view.feed(events, partial)
                if n % 3 == 0:
                    await pilot.pause()
            await pilot.pause(0.3)  # the scrollbar's catch-up
            assert len(view.rows) > 3 * SIZE[1]
            assert view.scroll_offset.y == view.max_scroll_y > 0  # the tail is followed
            assert view.vertical_scrollbar.window_virtual_size == view.virtual_size.height
            view.reset()
            await pilot.pause(0.3)
            assert view.virtual_size.height == 0 and view.scroll_offset.y == 0
            assert layouts == []
        finally:
            Screen._on_layout = screen_on_layout  # type: ignore[method-assign]


async def test_the_rows_of_a_huge_diff_add_nothing_for_the_collector_to_walk() -> None:
    """A full collection walks every tracked object: a row (str and int) must not be one."""
    def tracked_rows() -> int:
        gc.collect()  # (a tuple of atomic values stops being tracked here)
        # the type, not isinstance(): that asks a weak proxy among the objects for its
        # referent's class, and one whose referent is gone raises ReferenceError (a red run)
        return sum(1 for o in gc.get_objects() if issubclass(type(o), tuple) and len(o) == 4
                   and isinstance(o[0], int) and isinstance(o[1], str))

    app = DiffApp()
    async with app.run_test(size=SIZE) as pilot:
        view = app.view
        await pilot.pause()
        before = tracked_rows()
        for events, partial in frames(long_diff(400), random.Random(5), max_frame=400)[0]:
            view.feed(events, partial)
        await pilot.pause()
        grown = tracked_rows() - before
        assert len(view.rows) > 1600
        assert grown < len(view.rows) // 8, (grown, len(view.rows))


async def test_the_framed_rows_are_textuals_own_and_kept_while_the_tail_scrolls() -> None:
    """The view frames its rows itself (with the edges of a blank row Textual framed, and
    the app's filters) and keeps them: what it paints is exactly what Textual's own path
    paints, through growth, decisions, a focus move, a lower view and another border colour;
    a row shown before is not made again."""
    from textual.geometry import Region
    from textual.scroll_view import ScrollView

    def both(view: DiffView) -> tuple[list[list[object]], list[list[object]]]:
        crop = Region(0, 0, *view.region.size)
        view.refresh()  # Textual's path from scratch (its own cache of the rows cleared)
        ours = [list(strip) for strip in view.render_lines(crop)]
        return ours, [list(strip) for strip in ScrollView.render_lines(view, crop)]

    app = DiffApp()
    async with app.run_test(size=SIZE) as pilot:
        view = app.view
        view.styles.border = ("round", "green")
        view.border_title = "Live diff"
        await pilot.pause()
        seen: dict[int, object] = {}
        kept = again = 0
        for events, partial in frames(long_diff(30), random.Random(4), max_frame=12)[0]:
            view.feed(events, partial)
            await pilot.pause()
            ours, textuals = both(view)
            assert ours == textuals and view._sides is not None  # (framed by the view itself)
            top = view.scroll_offset.y
            crop = Region(0, 0, *view.region.size)
            for y, strip in enumerate(view.render_lines(crop)[1:-1]):
                if top + y < len(view.rows):
                    again += top + y in seen
                    kept += seen.get(top + y) is strip
                    seen[top + y] = strip
        assert view.scroll_offset.y > 0 and again > 100
        assert kept > 0.8 * again  # shown again: the same strip (headers gain their summary)
        view.mark_hunk(0, 1, HunkMark.ACCEPTED)
        view.scroll_to_hunk(0, 1)
        await pilot.pause()
        ours, textuals = both(view)
        assert ours == textuals
        assert any("accepted" in "".join(s.text for s in row) for row in ours)
        top = view.scroll_offset.y
        shown = {top + y: strip for y, strip in enumerate(
            view.render_lines(Region(0, 0, *view.region.size))[1:-1])}
        view.styles.height = SIZE[1] - 6  # a pane below takes some of the height
        await pilot.pause()
        ours, textuals = both(view)
        assert ours == textuals and len(ours) == SIZE[1] - 6
        top = view.scroll_offset.y
        lower = view.render_lines(Region(0, 0, *view.region.size))[1:-1]
        assert all(strip is shown[top + y] for y, strip in enumerate(lower))  # kept
        view.styles.border = ("round", "red")
        await pilot.pause()
        red, textuals = both(view)
        assert red == textuals and red[1] != ours[1]  # framed again in the new colour


async def test_a_pane_taking_rows_keeps_the_followed_tail_in_view_and_a_scrolled_view_put() -> None:
    """A pane below the diff appears and grows (the review pane does so as operations arrive):
    the frame that layout paints still shows the diff's last row (Textual's layout followed the
    tail with the height the view had before, so the last rows were painted out of view until
    a later layout). A view the person scrolled up keeps its rows."""
    app = DiffApp()
    async with app.run_test(size=SIZE) as pilot:
        view = app.view
        for events, partial in frames(long_diff(), random.Random(7))[0]:
            view.feed(events, partial)
        view.feed([TextDelta("Done.\n")])
        await pilot.pause()
        painted: list[list[str]] = []  # the rows in view when each layout is painted

        def laid_out(_: object) -> None:
            painted.append([view.render_line(y).text.rstrip()
                            for y in range(view.scrollable_content_region.height)])

        app.screen.screen_layout_refresh_signal.subscribe(view, laid_out, immediate=True)
        for height in (SIZE[1] - 4, SIZE[1] - 7, SIZE[1] - 9):  # the pane appears, then grows
            painted.clear()
            view.styles.height = height
            await pilot.pause()
            assert view.size.height == height and painted
            assert all(rows[-1] == "Done." for rows in painted), painted
        view.focus()
        await pilot.press("up", "up", "up")
        await pilot.pause()
        held, shown = view.scroll_y, screen_lines(view)[0]
        assert held == view.max_scroll_y - 3
        view.styles.height = SIZE[1] - 12
        await pilot.pause()
        assert view.scroll_y == held and screen_lines(view)[0] == shown  # left where it was
        assert not view.following
