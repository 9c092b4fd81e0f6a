"""The review pane on a turn too long for its height: the cursor stays in view, the mouse and
the page keys move it, and a decision repaints the rows it changed."""

from __future__ import annotations

from textual.app import App, ComposeResult

from spark_pair.edits.ops import Delete, Hunk, Modify
from spark_pair.ui import bindings
from spark_pair.ui.review_state import Item, Mark
from spark_pair.ui.themes import diff_variable_defaults
from spark_pair.ui.widgets.review import ReviewPane

FILES, HUNKS = 30, 3


class PaneApp(App[None]):
    BINDINGS = bindings.REVIEW  # the chords, as the main screen has them

    def action_review(self, name: str) -> None:
        getattr(self.query_one(ReviewPane), f"action_{name}")()

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return diff_variable_defaults(self.current_theme)

    def compose(self) -> ComposeResult:
        yield ReviewPane()


def proposed(pane: ReviewPane) -> None:
    for f in range(FILES):
        pane.propose(f, Modify(f"src/m{f}.py", [Hunk(1 + 10 * h, 1, 1 + 10 * h, 1,
                                                     [f"-old{h}", f"+new{h}"])
                                                for h in range(HUNKS)]))
    pane.propose(FILES, Delete("gone.py"))


def painted(pane: ReviewPane) -> list[str]:
    """The pane's painted rows, as text, the gutter (the cursor's column) first."""
    return [pane.render_line(y).text.rstrip() for y in range(pane.scrollable_content_region.height)]


def visible(pane: ReviewPane) -> list[str]:
    """The pane's painted rows after the gutter."""
    return [row[1:] for row in painted(pane)]


async def test_the_cursor_row_starts_with_a_glyph_focused_or_not() -> None:
    """The cursor reads without colour: its row starts with ▶ (the live diff's mark), every
    other row with a blank, whether the pane has the focus or the prompt has it (the review is
    decided with chords from there); the glyph follows the cursor. Before: only a background
    shade, grey on grey under NO_COLOR."""
    app = PaneApp()
    async with app.run_test(size=(80, 14)) as pilot:
        pane = app.query_one(ReviewPane)
        proposed(pane)
        app.set_focus(None)  # (as when the prompt has it)
        await pilot.pause()
        assert not pane.has_focus and pane.review.cursor == Item(0, 0)
        rows = painted(pane)
        marked = [row for row in rows if row.startswith("▶")]
        assert len(marked) == 1 and "@@ -1,1 +1,1 @@" in marked[0], rows
        assert all(not row or row[0] in "▶ " for row in rows), rows
        pane.focus()
        await pilot.press("home")
        rows = painted(pane)
        assert pane.review.cursor == Item(FILES)
        assert rows[0].startswith("▶[D] DELETE gone.py"), rows
        assert all(not row or row[0] == " " for row in rows[1:]), rows


async def test_the_cursor_stays_in_view_as_it_walks_a_long_turn() -> None:
    app = PaneApp()
    async with app.run_test(size=(70, 14)) as pilot:
        pane = app.query_one(ReviewPane)
        proposed(pane)
        pane.focus()
        await pilot.pause()
        assert pane.review.cursor == Item(0, 0)  # (it stays where it was)
        assert "DELETE gone.py" in visible(pane)[0]  # the delete is listed first
        await pilot.press(*["down"] * 40)
        assert pane.review.cursor == Item(13, 1)
        assert any("@@ -11,1 +11,1 @@" in row for row in visible(pane))  # hunk 2 of 14
        assert "src/m13.py" in "".join(visible(pane))
        await pilot.press("end")
        assert pane.review.cursor == Item(FILES - 1, HUNKS - 1)
        assert "@@ -21,1 +21,1 @@" in visible(pane)[-1]
        await pilot.press("home")
        assert pane.review.cursor == Item(FILES)
        assert "DELETE gone.py" in visible(pane)[0]


async def test_a_decision_repaints_its_rows_and_the_title() -> None:
    app = PaneApp()
    async with app.run_test(size=(70, 14)) as pilot:
        pane = app.query_one(ReviewPane)
        proposed(pane)
        pane.focus()
        await pilot.pause()
        await pilot.press("alt+a", "alt+r")
        await pilot.pause()
        rows = visible(pane)
        assert "1/3 hunk(s) accepted" in rows[1]
        assert rows[2].lstrip().startswith("✓ accepted")
        assert rows[3].lstrip().startswith("✗ rejected")
        assert pane.border_title == f"Review · {FILES + 1} undecided"
        await pilot.press("alt+shift+a")
        await pilot.pause()
        assert pane.border_title == "Review · 1 undecided"  # the delete waits for alt+d
        assert pane.review.entries[FILES - 1].hunks == [Mark.ACCEPTED] * HUNKS
        assert pane.review.cursor == Item(FILES)


async def test_a_click_on_a_hunk_moves_the_cursor_there() -> None:
    app = PaneApp()
    async with app.run_test(size=(70, 14)) as pilot:
        pane = app.query_one(ReviewPane)
        proposed(pane)
        pane.focus()
        await pilot.pause()
        await pilot.click(ReviewPane, offset=(6, 1 + 7))  # the border, the delete, then
        assert pane.review.cursor == Item(1, 1)  # row 7: file 1's hunk 1
        await pilot.click(ReviewPane, offset=(6, 1 + 5))  # file 1's own line: not an item
        assert pane.review.cursor == Item(1, 1)


async def test_a_decision_far_down_repaints_the_rows_in_view() -> None:
    app = PaneApp()
    async with app.run_test(size=(70, 14)) as pilot:
        pane = app.query_one(ReviewPane)
        proposed(pane)
        pane.focus()
        await pilot.pause()
        await pilot.press(*["down"] * 40)
        assert pane.scroll_y > 20
        regions = []
        refresh = pane.refresh

        def spy(*regions_, **kwargs):
            regions.extend(regions_)
            return refresh(*regions_, **kwargs)

        pane.refresh = spy
        shown_at = 40 + 14 - round(pane.scroll_y)  # the cursor's row (after 14 file lines)
        assert 0 <= shown_at < pane.scrollable_content_region.height
        await pilot.press("alt+a")
        assert shown_at in [r.y for r in regions]  # repainted where it is shown
        assert all(r.y >= 0 for r in regions)


async def test_a_refusal_wraps_at_the_pane_width_and_rejoins_when_it_widens() -> None:
    """Its words are never cut: the reason takes more rows at 44 columns, one at 140; the rows
    after it move down and back."""
    reason = ("refused (conflict): cannot delete gone.py: the lines the reply removes are not "
              "the whole file (the file has 3 lines)")
    app = PaneApp()
    async with app.run_test(size=(44, 14)) as pilot:
        pane = app.query_one(ReviewPane)
        pane.propose(0, Delete("some/folder/gone.py"))
        pane.refuse(0, reason)
        pane.propose(1, Delete("other.py"))
        pane.focus()
        await pilot.pause()
        rows = visible(pane)
        assert rows[0] == "[D] DELETE some/folder/gone.py"  # its state goes whole to the next
        assert rows[1] == "    ! refused", rows
        assert " ".join(" ".join(rows).split()).count(reason) == 1, rows
        assert not any("…" in row for row in rows)
        assert "other.py" in rows[6], rows  # after the four rows of the reason
        await pilot.resize_terminal(140, 14)
        await pilot.pause()
        rows = visible(pane)
        assert rows[0] == "[D] DELETE some/folder/gone.py  ! refused"
        assert rows[1].strip() == f"! {reason}" and "other.py" in rows[2], rows


async def test_a_refusal_for_a_file_changed_on_disk_is_the_row_after_a_fit_check() -> None:
    """The fit check read the file as it changed (it judged the hunk unfit), then the session
    refused the operation as stale: the row says stale, as when the two come the other way."""
    app = PaneApp()
    async with app.run_test(size=(100, 14)) as pilot:
        pane = app.query_one(ReviewPane)
        op = Modify("README.md", [Hunk(1, 1, 1, 1, ["-a", "+b"])])
        pane.propose(0, op)
        pane.mark_unfit(0, op, {None: "its lines are not in the file"})
        pane.refuse(0, "refused (stale): README.md changed on disk", op, stale=True)
        await pilot.pause()
        row = next(r for r in visible(pane) if "README.md" in r)
        assert "can't apply" not in row and "STALE" in row, row
