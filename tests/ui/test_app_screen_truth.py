"""The screen matches the state: notices follow the review, the review lists deletes and
renames first, the footer keeps the review's keys at 80x24 (pilot against the simulator as a
real process, in the demo's real git repository)."""

from __future__ import annotations

from pathlib import Path

from support.apps import (
    all_proposed,
    make_app,
    notice,
    opened,
    review,
    screen_rows,
    turn_over,
    type_line,
    typed,
    until,
)

from spark_pair.sim.demo_project import PROMPT
from spark_pair.sim.process import SimProcess
from spark_pair.ui.widgets.files import FilesPane
from spark_pair.ui.widgets.prompt import Prompt


async def test_a_proposal_after_A_mid_stream_says_it_waits(repo: Path,
                                                          demo_sim: SimProcess) -> None:
    demo_sim.configure(tps=80)  # the later operations arrive well after the first
    app = make_app(repo, demo_sim)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: review(app).review.entries, "the first proposal")
        await pilot.press("alt+shift+a")
        await until(pilot, lambda: "all decided" in notice(app), "the notice")
        await until(pilot, lambda: review(app).has_undecided, "a later proposal")
        await pilot.pause()
        assert "all decided" not in notice(app)
        assert "arrived after alt+A: it waits for your decision" in notice(app)
        assert app.main.streaming or review(app).has_undecided


async def test_deletes_and_renames_are_listed_first_and_in_view_at_80x24(
        repo: Path, demo_sim: SimProcess) -> None:
    app = make_app(repo, demo_sim)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: opened(app) and all_proposed(app), "every proposal")
        await pilot.pause()
        shown = "\n".join(screen_rows(app))
        assert "DELETE TODO.txt" in shown and "stock.csv → sample_stock.csv" in shown, shown
        kinds = [review(app).review.entries[i].kind for i in review(app).review.order()]
        assert [str(k) for k in kinds[:2]] == ["delete", "rename"]
        footer = screen_rows(app)[-1].replace(" ", "")
        # the deciding chords, their alt+ said once at 80 columns, then enter's label (it goes
        # among the last: the review's c, e, t give way to it; f1 lists them)
        assert in_order(footer, ["alt+ayes", "rno", "Aall", "Rrest", "ddel/ren",
                                 "⏎decidefirst", "f1keys"]), footer



def in_order(line: str, keys: list[str]) -> bool:
    at = [line.find(k) for k in keys]
    return -1 not in at and at == sorted(at)


def pane_rows(app) -> dict[str, str]:
    """The files pane's rows by path: their text."""
    pane = app.main.query_one(FilesPane)
    return {pane.get_option_at_index(i).id: str(pane.get_option_at_index(i).prompt)
            for i in range(pane.option_count) if pane.get_option_at_index(i).id}


async def test_the_files_pane_keeps_what_was_sent_and_its_marks_follow_the_disk(
        repo: Path, demo_sim: SimProcess) -> None:
    app = make_app(repo, demo_sim, prompt="", files=())  # the automatic context chooses
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: opened(app), "the open repository")
        prompt = app.main.query_one(Prompt)
        prompt.focus()
        await typed(pilot, PROMPT)
        # (the choice is planned once typing stops; on a busy machine the index comes first)
        await until(pilot, lambda: app.main.chooser.chosen, "the files chosen for the prompt")
        await pilot.press("enter")
        await until(pilot, lambda: all_proposed(app), "every proposal")
        sent = app.main.query_one(FilesPane).sent
        assert sent and not app.main.context  # chosen for the prompt, none added by hand
        rows = pane_rows(app)
        for path in sent:  # what the model saw, listed through the review
            assert rows[path].startswith(f"  ↑ {path}") and rows[path].endswith("sent")
        # the modifies and the create; the delete and rename not
        await pilot.press("alt+shift+a", "alt+shift+r")
        await until(pilot, lambda: turn_over(app), "the applied turn")
        assert "discount" in (repo / "inventory.py").read_text()
        watcher = app.main.driver.runtime.watcher
        await until(pilot, lambda: "inventory.py" in watcher.changed_since(0), "the watch")
        await pilot.pause(0.3)
        pane = app.main.query_one(FilesPane)
        assert "inventory.py" not in pane.changed  # spark-pair wrote it: no M
        assert "inventory.py" not in watcher.recent()  # nor "edited on disk" for the context
        await type_line(pilot, app, "/undo")
        await until(pilot, lambda: "discount" not in (repo / "inventory.py").read_text(),
                    "the undo")
        await pilot.pause(0.4)
        assert not pane.changed & {"inventory.py", "test_inventory.py", "README.md"}
        (repo / "README.md").write_text("a person's edit\n")
        (repo / "scratch.tmp").write_text("x")
        await until(pilot, lambda: "README.md" in pane.changed, "a person's edit: M")
        assert pane_rows(app)["README.md"].startswith("M ")
        assert "README.md" in watcher.recent()
        (repo / "scratch.tmp").unlink()
        await until(pilot, lambda: "scratch.tmp" in watcher.changed_since(0), "the watch")
        await pilot.pause(0.4)
        assert "scratch.tmp" not in pane_rows(app) and "scratch.tmp" not in pane.changed


async def test_tab_reaches_the_live_diff_which_scrolls_sideways(repo: Path,
                                                               demo_sim: SimProcess) -> None:
    from spark_pair.ui.widgets.diff_view import LESS, DiffView

    app = make_app(repo, demo_sim)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: opened(app) and all_proposed(app), "every proposal")
        view = app.main.query_one(DiffView)
        for _ in range(4):
            if app.focused is view:
                break
            await pilot.press("tab")
        assert app.focused is view
        assert view.virtual_size.width > view.scrollable_content_region.width  # rows are cut
        await pilot.press("right", "right", "right")
        await pilot.pause()
        assert view.scroll_x == 3
        assert any(view.render_line(y).text.startswith(LESS)
                   for y in range(view.scrollable_content_region.height))
