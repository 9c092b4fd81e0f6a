"""The review tools as a person uses them, with Textual's pilot against the simulator as a real
process in the demo's git repository: a reason the model hears, an edit made in $EDITOR, try
before keep, redo after undo, the pager."""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path
from typing import Any

from support.apps import (
    all_proposed,
    entries_of,
    go_to,
    make_app,
    notice,
    review,
    turn_over,
    until,
)

from spark_pair.edits.ops import OpKind
from spark_pair.sim.demo_project import FILES
from spark_pair.sim.process import SimProcess
from spark_pair.ui.dialogs.reason import ReasonScreen
from spark_pair.ui.review_state import Item, Mark
from spark_pair.ui.screens.check import CheckScreen


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".git" not in p.parts}


def script(tmp: Path, name: str, body: str) -> Path:
    path = tmp / name
    path.write_text(f"#!{sys.executable}\nimport sys\n{body}")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


async def send(pilot, app, text: str) -> None:
    app.main.query_one("#prompt").focus()
    await pilot.press(*text, "enter")


async def test_c_rejects_with_a_reason_that_the_next_request_carries(
        repo: Path, demo_sim: SimProcess) -> None:
    # (no files chosen by themselves: a file naming the demo's word would get its reply again)
    app = make_app(repo, demo_sim, **{"context.auto": "false"})
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: all_proposed(app), "every proposal")
        first = review(app).review.entries[0]
        await pilot.press("alt+c")
        await until(pilot, lambda: isinstance(app.screen, ReasonScreen), "the reason input")
        await pilot.press(*"keep the old total", "enter")
        assert first.hunks[0] is Mark.REJECTED and first.reasons[0] == "keep the old total"
        assert "why: keep the old total" in review(app).text_of(Item(0, 0))
        await pilot.press("alt+shift+a")  # the rest of the modifies and the create
        await pilot.press("alt+r", "alt+r")  # the delete, the rename
        await until(pilot, lambda: turn_over(app), "the end of the turn")
        assert (repo / "CHANGELOG.md").exists()
        demo_sim.clear_requests()
        await send(pilot, app, "try again")
        await until(pilot, lambda: demo_sim.requests() and turn_over(app), "the next turn")
    sent = json.dumps(demo_sim.requests()[-1])
    assert 'inventory.py hunk 1 (reason: \\"keep the old total\\")' in sent
    assert "rejected, not applied: TODO.txt (delete) (no reason given)" in sent
    assert "applied as you proposed: inventory.py hunk 2" in sent


def hand_editor(tmp_path: Path, monkeypatch) -> None:
    """$VISUAL: an editor that appends '  # checked by hand' to the hunk's last line."""
    editor = script(tmp_path, "edit.py", "p = sys.argv[1]\nlines = open(p).read().split('\\n')\n"
                    "lines[-2] = lines[-2] + '  # checked by hand'\n"
                    "open(p, 'w').write('\\n'.join(lines))\n")
    monkeypatch.setenv("VISUAL", str(editor))

async def edit_the_first_hunk(pilot, app) -> tuple[Any, Any]:
    """Once every operation is proposed, alt+e on the first hunk (its editor set by the test):
    the first entry and its hunk as the model wrote it, once the edited hunk is accepted."""
    await until(pilot, lambda: all_proposed(app), "every proposal")
    first = review(app).review.entries[0]
    hunk = first.op.hunks[0]
    await pilot.press("alt+e")
    await until(pilot, lambda: first.hunks[0] is Mark.ACCEPTED, "the edited hunk")
    return first, hunk


async def test_e_lands_exactly_the_line_the_editor_changed(repo: Path, demo_sim: SimProcess,
                                                           tmp_path: Path, monkeypatch) -> None:
    hand_editor(tmp_path, monkeypatch)
    app = make_app(repo, demo_sim)
    async with app.run_test(size=(120, 40)) as pilot:
        first, hunk = await edit_the_first_hunk(pilot, app)
        assert "your version is accepted" in notice(app)
        await pilot.press("alt+shift+r")
        await until(pilot, lambda: turn_over(app), "the end of the turn")
    new = list(hunk.new_lines)
    new[-1] += "  # checked by hand"
    old = FILES["inventory.py"]
    expected = old.replace("\n".join(hunk.old_lines) + "\n", "\n".join(new) + "\n")
    assert (repo / "inventory.py").read_text() == expected
    for rel, text in FILES.items():
        if rel != "inventory.py":
            assert (repo / rel).read_text() == text, rel


async def test_an_edited_hunk_s_row_shows_its_own_header_and_counts(
        repo: Path, demo_sim: SimProcess, tmp_path: Path, monkeypatch) -> None:
    """alt+e adding two lines: the row says `edited` with the edited hunk's header and +/-
    counts (before: the model's, `@@ -1,2 +1,5 @@ +4 -1` after lines were added)."""
    monkeypatch.setenv("VISUAL", str(script(
        tmp_path, "add.py", "p = sys.argv[1]\nlines = open(p).read().split('\\n')\n"
        "lines[-1:-1] = ['# one by hand', '# two by hand']\n"
        "open(p, 'w').write('\\n'.join(lines))\n")))
    app = make_app(repo, demo_sim)
    async with app.run_test(size=(120, 40)) as pilot:
        first, hunk = await edit_the_first_hunk(pilot, app)
        mine = first.amended[0]
        assert (mine.added, mine.removed) == (hunk.added + 2, hunk.removed)
        row = review(app).text_of(Item(0, 0))
        head = (f"@@ -{hunk.old_start},{hunk.old_len} +{hunk.new_start},"
                f"{len(hunk.new_lines) + 2} @@ +{hunk.added + 2} -{hunk.removed}")
        assert "edited" in row and head in row, row
        await pilot.press("alt+shift+r")
        await until(pilot, lambda: turn_over(app), "the end of the turn")
    assert "# two by hand\n" in (repo / "inventory.py").read_text()


async def test_a_file_changed_after_e_says_the_edit_was_dropped(
        repo: Path, demo_sim: SimProcess, tmp_path: Path, monkeypatch) -> None:
    hand_editor(tmp_path, monkeypatch)
    app = make_app(repo, demo_sim)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: all_proposed(app), "every proposal")
        first = review(app).review.entries[0]
        await pilot.press("alt+e")
        await until(pilot, lambda: first.hunks[0] is Mark.ACCEPTED, "the edited hunk")
        mine = "# a line of mine\n" + FILES["inventory.py"]  # away from every hunk
        (repo / "inventory.py").write_text(mine)
        await until(pilot, lambda: review(app).review.entries[0] is not first, "the new ask")
        again = review(app).review.entries[0]
        assert not again.amended and again.hunks[0] is Mark.UNDECIDED
        assert "edit of it was dropped" in notice(app) and "alt+e edits it" in notice(app)
        await pilot.press("alt+shift+r")
        await until(pilot, lambda: turn_over(app), "the end of the turn")
    assert "checked by hand" not in (repo / "inventory.py").read_text()


async def test_e_with_a_failing_or_idle_editor_changes_nothing(
        repo: Path, demo_sim: SimProcess, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("VISUAL", str(script(tmp_path, "fail.py", "sys.exit(3)\n")))
    app = make_app(repo, demo_sim)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: all_proposed(app), "every proposal")
        first = review(app).review.entries[0]
        await pilot.press("alt+e")
        await until(pilot, lambda: "status 3" in notice(app), "the editor's failure")
        monkeypatch.setenv("VISUAL", str(script(tmp_path, "idle.py", "pass\n")))
        await pilot.press("alt+e")
        await until(pilot, lambda: "unchanged" in notice(app), "the unchanged text")
        assert first.hunks[0] is Mark.UNDECIDED and not first.amended
        await pilot.press("alt+shift+r")
        await until(pilot, lambda: turn_over(app), "the end of the turn")
    assert (repo / "inventory.py").read_text() == FILES["inventory.py"]


async def test_t_failing_check_then_n_restores_the_bytes(repo: Path,
                                                         demo_sim: SimProcess) -> None:
    before = snapshot(repo)
    app = make_app(repo, demo_sim, **{"review.check": "echo checking; grep -q discount "
                                      "inventory.py && exit 1; exit 0",
                                      "review.fix_rounds": "0"})  # (the loop: test_app_fix)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: all_proposed(app), "every proposal")
        await pilot.press("alt+t")
        pending = review(app).review.undecided()
        assert sorted(e.kind for e in pending) == [OpKind.DELETE, OpKind.RENAME]
        await pilot.press("alt+r", "alt+r")
        await until(pilot, lambda: isinstance(app.screen, CheckScreen), "the check pane")
        screen = app.screen
        await until(pilot, lambda: screen.result is not None, "the check's end")
        assert not screen.result.passed and "checking" in screen.result.output
        assert "discount" in (repo / "inventory.py").read_text()  # applied while it ran
        await pilot.press("alt+n")
        await until(pilot, lambda: "rolled back" in notice(app), "the roll back")
    assert snapshot(repo) == before


async def test_t_without_a_configured_check_says_how(repo: Path, demo_sim: SimProcess) -> None:
    app = make_app(repo, demo_sim)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: all_proposed(app), "every proposal")
        await pilot.press("alt+t")
        assert "[review] check" in notice(app)
        assert len(review(app).review.undecided()) == 6  # nothing was decided
        await pilot.press("alt+shift+r")
        await until(pilot, lambda: turn_over(app), "the end of the turn")


async def test_redo_after_undo_reapplies_exactly(repo: Path, demo_sim: SimProcess) -> None:
    before = snapshot(repo)
    app = make_app(repo, demo_sim)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: all_proposed(app), "every proposal")
        await pilot.press("alt+shift+a", "alt+d")
        await pilot.press("alt+y")
        await pilot.press("alt+d", "alt+y")
        await until(pilot, lambda: turn_over(app), "the end of the turn")
        after = snapshot(repo)
        assert after != before and "stock.csv" not in after and "TODO.txt" not in after
        await send(pilot, app, "/undo")
        await until(pilot, lambda: "restored" in notice(app), "the undo")
        assert snapshot(repo) == before
        await send(pilot, app, "/redo")
        await until(pilot, lambda: "re-applied" in notice(app), "the redo")
        assert snapshot(repo) == after


async def test_o_shows_the_diff_in_the_pager_and_comes_back(
        repo: Path, demo_sim: SimProcess, tmp_path: Path) -> None:
    copy = tmp_path / "paged.diff"
    pager = script(tmp_path, "pager.py",
                   f"open({str(copy)!r}, 'w').write(open(sys.argv[1]).read())\n")
    app = make_app(repo, demo_sim, **{"review.pager": str(pager)})
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: all_proposed(app), "every proposal")
        cursor = review(app).review.cursor
        await pilot.press("alt+o")
        await until(pilot, copy.exists, "the pager")
        assert review(app).review.cursor == cursor and len(review(app).review.undecided()) == 6
        await pilot.press("alt+shift+r")
        await until(pilot, lambda: turn_over(app), "the end of the turn")
    text = copy.read_text()
    assert "--- a/inventory.py" in text and "+++ b/CHANGELOG.md" in text
    assert "discount" in text


def written_rows(app) -> list[str]:
    """The review's operation rows that say their operation is on disk now."""
    pane = review(app)
    return [pane.text_of(Item(i)) for i in sorted(pane.review.entries)
            if "written" in pane.text_of(Item(i))]


async def test_t_then_n_says_the_turn_was_rolled_back_and_redo_writes_it_again(
        repo: Path, demo_sim: SimProcess) -> None:
    app = make_app(repo, demo_sim, **{"review.check": "exit 1", "review.fix_rounds": "0"})
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: all_proposed(app), "every proposal")
        await pilot.press("alt+t", "alt+r", "alt+r")  # the delete and the rename are rejected
        await until(pilot, lambda: isinstance(app.screen, CheckScreen), "the check pane")
        assert len(written_rows(app)) == 4  # on disk while the check runs
        screen = app.screen
        await until(pilot, lambda: screen.result is not None, "the check's end")
        await pilot.press("alt+n")
        await until(pilot, lambda: "rolled back" in notice(app), "the roll back")
        pane = review(app)
        heads = [pane.text_of(Item(i)) for i in sorted(pane.review.entries)]
        assert written_rows(app) == []
        assert [h for h in heads if "not kept: rolled back" in h] == heads[:4]
        assert "not kept" in str(pane.border_title)
        await send(pilot, app, "/redo")
        await until(pilot, lambda: "re-applied" in notice(app), "the redo")
        await until(pilot, lambda: len(written_rows(app)) == 4, "the rows written again")
        assert "not kept" not in str(pane.border_title)
        await send(pilot, app, "/undo")
        await until(pilot, lambda: "restored" in notice(app), "the undo")
        await until(pilot, lambda: written_rows(app) == [], "the rows undone")
        assert "/redo writes them again" in notice(app)
        assert "undone" in pane.text_of(Item(0)) and "undone" in str(pane.border_title)


async def test_a_proposal_asked_again_after_a_change_on_disk_is_not_labelled_stale(
        repo: Path, demo_sim: SimProcess) -> None:
    # (no files chosen by themselves: a file naming the demo's word would get its reply again)
    app = make_app(repo, demo_sim, **{"context.auto": "false"})
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: all_proposed(app), "every proposal")
        first = review(app).review.entries[0]
        mine = "# a line of mine\n" + FILES["inventory.py"]  # away from every hunk: still fits
        (repo / "inventory.py").write_text(mine)
        await until(pilot, lambda: review(app).review.entries[0] is not first, "the new ask")
        again = review(app).review.entries[0]
        head = review(app).text_of(Item(0))
        assert not again.blocked and "STALE" not in head
        assert "changed on disk, asked again" in head
        assert "stale" not in notice(app)  # the notice about it gave way to its new state
        await pilot.press("alt+shift+a", "alt+shift+r")
        await until(pilot, lambda: turn_over(app), "the end of the turn")
    text = (repo / "inventory.py").read_text()
    assert text.startswith("# a line of mine\n") and "discount" in text


async def test_under_review_the_prompt_says_how_to_end_the_turn_and_keeps_the_text(
        repo: Path, demo_sim: SimProcess) -> None:
    app = make_app(repo, demo_sim)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: all_proposed(app) and not app.main.streaming,
                    "the whole reply, under review")
        await send(pilot, app, "also log the total")
        said = notice(app)
        assert "under review" in said and "R rejects" in said and "escape" not in said
        assert app.main.query_one("#prompt").value == "also log the total"  # enter sends it later
        await send(pilot, app, "/undo")
        assert "under review" in notice(app) and "escape" not in notice(app)
        assert "tab queues it" in notice(app)
        await pilot.press("tab")  # the prompt holds text while a turn runs: tab queues it
        assert [q for q, _ in app.main.queued] == ["also log the total/undo"]
        await pilot.press("tab")  # the prompt is empty: to the review
        assert app.focused is review(app)
        await pilot.press("alt+shift+r")
        await until(pilot, lambda: "also log the total" in app.main.last_prompt, "the queued turn")
        await until(pilot, lambda: turn_over(app), "the end of the queued turn")


async def test_a_missing_editor_or_pager_is_named_with_a_hint(repo: Path, demo_sim: SimProcess,
                                                              tmp_path: Path,
                                                              monkeypatch) -> None:
    monkeypatch.setenv("VISUAL", str(tmp_path / "no-such-editor"))
    app = make_app(repo, demo_sim, **{"review.pager": str(tmp_path / "no-such-pager")})
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: all_proposed(app), "every proposal")
        await pilot.press("alt+e")
        await until(pilot, lambda: "no-such-editor" in notice(app), "the editor's report")
        assert "not found" in notice(app) and "hint: set $VISUAL or $EDITOR" in notice(app)
        assert review(app).review.entries[0].hunks[0] is Mark.UNDECIDED
        await pilot.press("alt+o")
        await until(pilot, lambda: "no-such-pager" in notice(app), "the pager's report")
        assert "not found" in notice(app) and "hint: set [review] pager" in notice(app)
        await pilot.press("alt+shift+r")
        await until(pilot, lambda: turn_over(app), "the end of the turn")


async def test_a_delete_showing_part_of_the_file_is_refused_at_once_and_never_asked(
        repo: Path, demo_sim: SimProcess) -> None:
    from spark_pair.edits.ops import Delete

    (repo / "TODO.txt").write_text(FILES["TODO.txt"] + "- mine, not committed\n")
    before = snapshot(repo)
    app = make_app(repo, demo_sim)
    async with app.run_test(size=(120, 40)) as pilot:
        # the reply's three modifies, its create and its rename; its delete shows 2 of 3 lines:
        # listed, refused, with nothing to confirm
        await until(pilot, lambda: all_proposed(app), "the proposals")
        delete = next(e for e in review(app).review.entries.values() if isinstance(e.op, Delete))
        assert delete.sent and "not the whole file" in delete.problem
        assert "TODO.txt" in notice(app) and "can not be written" in notice(app)
        await pilot.press("alt+shift+a")  # pointless now: it says why and accepts nothing
        assert not any(Mark.ACCEPTED in e.hunks for e in review(app).review.entries.values())
        await pilot.press("alt+shift+r")
        await until(pilot, lambda: turn_over(app), "the end of the turn")
        assert "TODO.txt" in notice(app) and "not the whole file" in notice(app)
        assert "nothing was written" in notice(app)
    assert snapshot(repo) == before


async def test_a_toast_leaves_the_prompt_and_the_meter_in_view_at_80x24(
        repo: Path, demo_sim: SimProcess) -> None:
    """alt+d on a modify's hunk says how to decide it in a toast: at the top right, over the
    live diff, not over the prompt and the meter (where it sat at 80x24)."""
    from textual.widgets._toast import Toast

    app = make_app(repo, demo_sim)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await until(pilot, lambda: all_proposed(app), "every proposal")
        await go_to(pilot, app, entries_of(app, OpKind.MODIFY)[0].index)
        await pilot.press("alt+d")
        await until(pilot, lambda: app.screen.query(Toast), "the toast")
        await pilot.pause()
        toast = app.screen.query_one(Toast).region
        assert toast.area, toast
        for name in ("#prompt", "#meter", "#review"):
            widget = app.screen.query_one(name).region
            assert not toast.overlaps(widget), (name, toast, widget)
        await pilot.press("alt+shift+r")
        await until(pilot, lambda: turn_over(app), "the end of the turn")


async def test_the_pager_shows_the_persons_own_version_of_a_hunk(
        repo: Path, demo_sim: SimProcess, tmp_path: Path, monkeypatch) -> None:
    """alt+e, then alt+o: the pager shows the hunk as the person wrote it, which is what is
    written (before: the model's)."""
    hand_editor(tmp_path, monkeypatch)
    copy = tmp_path / "paged.diff"
    pager = script(tmp_path, "pager.py",
                   f"open({str(copy)!r}, 'w').write(open(sys.argv[1]).read())\n")
    app = make_app(repo, demo_sim, **{"review.pager": str(pager)})
    async with app.run_test(size=(120, 40)) as pilot:
        await edit_the_first_hunk(pilot, app)
        await pilot.press("alt+o")
        await until(pilot, copy.exists, "the pager")
        await pilot.press("alt+shift+r")
        await until(pilot, lambda: turn_over(app), "the end of the turn")
    assert "  # checked by hand" in copy.read_text()
