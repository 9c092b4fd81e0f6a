"""The review's flow to its end, with Textual's pilot against the simulator as a real process in
the demo's git repository: /quit, operations that can not apply, a file edited on disk during
the stream, a stopped turn. What a row says and what reaches the disk are checked together."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.cells import cell_len
from support.apps import (
    all_proposed,
    go_to,
    make_app,
    notice,
    review,
    screen_rows,
    turn_over,
    until,
)

from spark_pair.sim.demo_project import CONTEXT_FILES, FILES, MATCH, reply_text
from spark_pair.sim.process import SimProcess
from spark_pair.ui.dialogs.confirm import ConfirmScreen
from spark_pair.ui.review_state import Item, Mark
from spark_pair.ui.widgets.diff_view import DiffView
from spark_pair.ui.widgets.diff_view import Kind as DiffKind
from spark_pair.ui.widgets.footer import AppFooter

ACCEPTED = "✓ accepted"
SIZES = [(80, 24), (200, 50)]


def words(text: str) -> str:
    return " ".join(text.split())


def shown_in(app, widget) -> str:
    """What a pane shows, its rows read on one after the other (a wrapped row reads on)."""
    region = widget.scrollable_content_region
    return words(" ".join(row[region.x:region.right]
                          for row in screen_rows(app)[region.y:region.bottom]))


def rows(app) -> list[str]:
    """Every operation's row and its hunks' rows, as the pane writes them."""
    pane = review(app)
    return [pane.text_of(Item(e.index, h))
            for e in sorted(pane.review.entries.values(), key=lambda e: e.index)
            for h in (None, *range(len(e.hunks)))]


def toasts(app) -> str:
    return "\n".join(str(n.message) for n in app._notifications)


def by_path(app, path: str):
    return next((e for e in review(app).review.entries.values()
                 if path in (getattr(e.op, "path", None), getattr(e.op, "src", None))), None)


@pytest.mark.parametrize("size", SIZES)
async def test_quit_typed_in_the_prompt_closes_the_app(repo: Path, demo_sim: SimProcess,
                                                      size: tuple[int, int]) -> None:
    app = make_app(repo, demo_sim, prompt="")
    async with app.run_test(size=size) as pilot:
        await until(pilot, lambda: app.main.driver.session is not None, "the open repository")
        app.main.query_one("#prompt").focus()
        await pilot.press(*"/quit", "enter")
        await until(pilot, lambda: not app.is_running, "the exit")


async def test_quit_typed_during_review_asks_first(repo: Path, demo_sim: SimProcess) -> None:
    app = make_app(repo, demo_sim)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: all_proposed(app), "every proposal")
        app.main.query_one("#prompt").focus()
        await pilot.press(*"/quit", "enter")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question")
        await pilot.press("alt+y")
        await until(pilot, lambda: not app.is_running, "the exit")
    for rel, text in FILES.items():
        assert (repo / rel).read_text() == text


async def test_what_can_not_apply_is_left_out_at_once_and_the_rest_is_written(
        repo: Path, demo_sim: SimProcess) -> None:
    """A hunk whose lines are gone, a create of a file that exists and a rename of a missing
    file are marked in their rows as soon as they are proposed, can not be accepted, and do not
    keep the rest of the turn from being written."""
    mine = FILES["inventory.py"].replace("return Item(name.strip(), float(price), "
                                         "int(quantity))", "return Item(name, price, quantity)")
    (repo / "inventory.py").write_text(mine)
    (repo / "CHANGELOG.md").write_text("my own changelog\n")
    (repo / "stock.csv").unlink()
    app = make_app(repo, demo_sim)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: all_proposed(app), "every proposal")
        create, rename = by_path(app, "CHANGELOG.md"), by_path(app, "stock.csv")
        inventory = by_path(app, "inventory.py")
        pane = review(app)
        await until(pilot, lambda: all("can't apply" in pane.text_of(item) for item in (
            Item(create.index), Item(rename.index), Item(inventory.index, 0))),
            "the marks of what can not apply")
        assert "already exists" in create.problem and "does not exist" in rename.problem
        assert "can't apply" in pane.text_of(Item(create.index))
        assert "can't apply" in pane.text_of(Item(inventory.index, 0))
        assert "lines are not in the file" in pane.text_of(Item(inventory.index, 0))
        assert "can't apply" not in pane.text_of(Item(inventory.index, 1))
        assert "CHANGELOG.md" in notice(app) and "left out" in notice(app)
        # a on a hunk that can not apply: refused, with the reason
        pane.review.cursor = Item(inventory.index, 0)
        await pilot.press("alt+a")
        assert inventory.hunks[0] is Mark.REJECTED
        assert "lines are not in the file" in toasts(app)
        await pilot.press("alt+shift+a", "alt+shift+r")  # the modifies that fit; no delete
        await until(pilot, lambda: turn_over(app), "the end of the turn")
        assert "applied" in notice(app) and "left out" in notice(app), notice(app)
        assert not any(ACCEPTED in row and "can't apply" in row for row in rows(app))
    assert (repo / "CHANGELOG.md").read_text() == "my own changelog\n"
    written = (repo / "inventory.py").read_text()
    assert "return Item(name, price, quantity)" in written  # hunk 1 left out
    assert "def total(items, discount=0.0):" in written  # hunk 2 written
    assert (repo / "README.md").read_text() != FILES["README.md"]
    assert (repo / "TODO.txt").exists() and not (repo / "sample_stock.csv").exists()


async def test_a_file_edited_during_the_stream_stays_listed_as_stale(
        repo: Path, demo_sim: SimProcess) -> None:
    """README.md changes on disk before its operation arrives: the operation is listed, STALE,
    at once; the notice says the turn can not be written and which keys end or rerun it; after
    R nothing is written and no row says accepted."""
    # README.md's operation comes well after the change: prose before it (1.3 s at this pace)
    held = reply_text().replace("--- a/README.md", "```\n\n" + "A note on the tests.\n" * 40
                                + "\n```diff\n--- a/README.md", 1)
    demo_sim.configure(tps=160, replies=[{"match": MATCH, "text": held}])
    app = make_app(repo, demo_sim, files=CONTEXT_FILES)  # as the demo: the model saw README.md
    mine = FILES["README.md"].replace("to print the order total", "to print the total")
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: review(app).review.entries, "the first proposal")
        first = review(app).review.entries[0]
        assert first.op.path == "inventory.py" and by_path(app, "README.md") is None
        await pilot.press("alt+a", "alt+a")  # both hunks of inventory.py: sent to the session
        assert first.sent
        (repo / "README.md").write_text(mine)
        await until(pilot, lambda: (e := by_path(app, "README.md")) is not None and e.stale,
                    "README.md's row, stale")
        readme = by_path(app, "README.md")
        assert readme.blocked and "no longer apply" in readme.problem, readme.problem
        assert "STALE" in review(app).text_of(Item(readme.index))
        assert "refused" in review(app).text_of(Item(readme.index, 0))  # not "undecided"
        assert "can not be written" in notice(app) and "R " in notice(app), notice(app)
        await until(pilot, lambda: all_proposed(app), "every proposal")
        await pilot.press("alt+shift+a")  # accepting is pointless now: it says why
        assert "can not be written" in toasts(app)
        await pilot.press("alt+shift+r")
        await until(pilot, lambda: turn_over(app), "the end of the turn")
        assert "nothing was written" in notice(app), notice(app)
        assert not any(ACCEPTED in row for row in rows(app)), rows(app)
        assert "nothing written" in review(app).border_title
    assert (repo / "README.md").read_text() == mine
    for rel, text in FILES.items():
        if rel != "README.md":
            assert (repo / rel).read_text() == text


async def test_a_stopped_turn_can_not_be_accepted_and_says_so(repo: Path,
                                                              demo_sim: SimProcess) -> None:
    demo_sim.configure(tps=80)  # escape comes long before the reply's end, even on a busy machine
    app = make_app(repo, demo_sim)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: review(app).review.entries, "a proposal")
        await pilot.press("alt+a")  # one hunk accepted before the stop
        await pilot.press("escape")
        await until(pilot, lambda: turn_over(app), "the end of the turn")
        pane = review(app)
        pane.focus()
        assert not {"alt+a", "alt+A"} & {k.display for k in app.main.query_one(AppFooter).keys}
        await pilot.press("alt+a", "alt+shift+a", "alt+j", "alt+a")  # (not offered: inert)
        assert not any(ACCEPTED in row for row in rows(app)), rows(app)
        assert "not written" in rows(app)[1], rows(app)
        assert pane.review.undecided_count == 0 and "nothing written" in pane.border_title
        assert "nothing was written" in notice(app)
    for rel, text in FILES.items():
        assert (repo / rel).read_text() == text


@pytest.mark.parametrize("size", SIZES)
async def test_a_delete_of_part_of_a_file_reads_refused_with_its_reason_whole(
        repo: Path, demo_sim: SimProcess, size: tuple[int, int]) -> None:
    """TODO.txt has a line the reply's delete does not show: its row says refused (not "needs d
    then y") and why, every word on screen, in the review and in the live diff; the notice says
    the turn can not be written and which keys end or rerun it."""
    (repo / "TODO.txt").write_text(FILES["TODO.txt"] + "- mine, not committed\n")
    app = make_app(repo, demo_sim)
    async with app.run_test(size=size) as pilot:
        await until(pilot, lambda: all_proposed(app) and by_path(app, "TODO.txt").problem,
                    "every proposal, the delete refused")
        delete = by_path(app, "TODO.txt")
        await go_to(pilot, app, delete.index)
        await pilot.pause()
        pane = shown_in(app, review(app))
        assert "[D] DELETE TODO.txt ! refused" in pane, pane
        assert words(delete.problem) in pane and "not the whole file" in pane, pane
        said = words(notice(app))
        assert "can not be written" in said and "R rejects" in said and "ctrl+r" in said
        assert said in shown_in(app, app.main.query_one("#notice"))
        view = app.main.query_one(DiffView)
        notes = [row.text for row in view.rows if row.kind is DiffKind.NOTE]
        assert "line 3 is '- mine, not committed')" in words(" ".join(notes)), notes
        assert all(cell_len(note) <= view.scrollable_content_region.width for note in notes)
        await pilot.press("alt+shift+r")
        await until(pilot, lambda: turn_over(app), "the end of the turn")
        assert "nothing was written" in notice(app)
    assert (repo / "TODO.txt").read_text().endswith("- mine, not committed\n")


@pytest.mark.parametrize("size", SIZES)
async def test_files_edited_during_review_read_stale_or_asked_again_whole(
        repo: Path, demo_sim: SimProcess, size: tuple[int, int]) -> None:
    """Under review, README.md changes where its hunk goes (refused: stale), then inventory.py
    changes away from its hunks (asked again): each row says so in full words, and the notice
    still says the turn can not be written, with the keys."""
    app = make_app(repo, demo_sim, files=CONTEXT_FILES)
    mine = FILES["README.md"].replace("to print the order total", "to print the total")
    async with app.run_test(size=size) as pilot:
        await until(pilot, lambda: all_proposed(app) and not app.main.streaming,
                    "every proposal, under review")
        (repo / "README.md").write_text(mine)
        await until(pilot, lambda: by_path(app, "README.md").problem, "README.md refused")
        first = review(app).review.entries[0]
        (repo / "inventory.py").write_text("# a line of mine\n" + FILES["inventory.py"])
        await until(pilot, lambda: review(app).review.entries[0] is not first, "the new ask")
        asked = "inventory.py · 0/2 hunk(s) accepted changed on disk, asked again"
        await until(pilot, lambda: "can not be written" in words(notice(app))
                    and words(notice(app)) in shown_in(app, app.main.query_one("#notice"))
                    and asked in shown_in(app, review(app)), "the notice and the row, painted")
        said = words(notice(app))
        assert "can not be written" in said and "R rejects" in said, said
        readme = by_path(app, "README.md")
        await go_to(pilot, app, readme.index)
        stale = "README.md · 0/1 hunk(s) accepted STALE: changed on disk (blocked)"
        await until(pilot, lambda: stale in shown_in(app, review(app)), "the stale row, painted")
        pane = shown_in(app, review(app))
        assert words(readme.problem) in pane, pane
        await pilot.press("alt+shift+r")
        await until(pilot, lambda: turn_over(app), "the end of the turn")
        assert "nothing was written" in notice(app)
    assert (repo / "README.md").read_text() == mine
