"""The fix loop tells the truth: a failed check stays readable until the person answers, output
that points at the environment is asked about before it goes to the model, and a round the
tool could not apply is named as such, never as the person's rejection. Driven with the pilot
against the simulator process in a real git repository, with real check commands."""

from __future__ import annotations

from pathlib import Path

from support.apps import edit_bodies, notice, review, turn_over, type_line, until
from test_app_fix import (
    PROMPT,
    REPLIES,
    STRONG,
    answer,
    app_for,
    calc,
    calc_repo,
    diff,
    loop_end,
    proposed,
    status,
)

from spark_pair.session.approval import Action, Decision
from spark_pair.session.history import outcome_note
from spark_pair.session.review import note_for_model, verdicts_of
from spark_pair.sim.process import SimProcess
from spark_pair.store.sessions import StoredTurn
from spark_pair.store.verdicts import Fate, shares
from spark_pair.ui.screens.check import CheckScreen
from spark_pair.ui.sessions import earlier_lines
from spark_pair.ui.widgets.diff_view import DiffView, HunkMark

__all__ = ["calc_repo"]  # the fixture, shared with test_app_fix

MISSING = "python3 -c 'import calc, no_such_module_for_spark_pair'"


async def failed_check(pilot, app) -> CheckScreen:
    await until(pilot, lambda: isinstance(app.screen, CheckScreen) and
                app.screen.result is not None, "the failed check")
    screen = app.screen
    await pilot.pause(0.3)  # a person reads it: it stays
    assert app.screen is screen
    return screen


def toasts(app) -> str:
    return "\n".join(str(n.message) for n in app._notifications)


def output(screen: CheckScreen) -> str:
    return "\n".join(screen.query_one("#check-output").lines)


async def test_a_failed_check_stays_on_screen_until_the_person_sends_it(
        calc_repo: Path, sim: SimProcess) -> None:
    app = app_for(calc_repo, sim)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: proposed(app), "the first proposal")
        await pilot.press("alt+t")
        screen = await failed_check(pilot, app)
        assert "add(2, 3) is -1" in output(screen)  # the code's own failure, readable
        assert "fix round 1 of 2" in status(screen) and not screen.cause
        assert len(edit_bodies(sim)) == 1  # nothing went to the model yet
        await pilot.press("alt+y")
        await until(pilot, lambda: "fix round 1 of 2" in notice(app), "the round")
        assert len(edit_bodies(sim)) == 2


async def test_the_same_instruction_sent_after_a_rolled_back_task_is_a_new_task(
        calc_repo: Path, sim: SimProcess) -> None:
    """alt+t, the failed check offers fix round 1 of 2, alt+n rolls it back; the same
    instruction sent again (as ↑ recalls it) is a new task: its failed check offers round 1
    again (before: the ended loop was reused and only keep or roll back was asked)."""
    app = app_for(calc_repo, sim)
    async with app.run_test(size=(80, 24)) as pilot:
        for attempt in (1, 2):
            await until(pilot, lambda: proposed(app), f"proposal {attempt}")
            await pilot.press("alt+t")
            screen = await failed_check(pilot, app)
            assert "fix round 1 of 2" in status(screen), (attempt, status(screen))
            await pilot.press("alt+n")
            await until(pilot, lambda: calc(calc_repo) == "return 0", "rolled back")
            await until(pilot, lambda: turn_over(app), "the end of the turn")
            if attempt == 1:
                await type_line(pilot, app, PROMPT)
        assert len(edit_bodies(sim)) == 2  # no round went: only the two sends


async def test_an_environment_failure_is_asked_about_and_not_sent(
        calc_repo: Path, sim: SimProcess) -> None:
    app = app_for(calc_repo, sim, **{"review.check": MISSING})
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: proposed(app), "the first proposal")
        await pilot.press("alt+t")
        screen = await failed_check(pilot, app)
        assert "No module named 'no_such_module_for_spark_pair'" in screen.cause
        assert "points at the environment, not the code" in status(screen)
        assert "No module named" in status(screen)  # the cause itself, not only the output
        await pilot.press("alt+y")  # keep the turn, send nothing
        await until(pilot, lambda: "nothing went to the model" in notice(app), "the end")
        assert "No module named" in notice(app)
        await pilot.pause(0.3)
        assert len(edit_bodies(sim)) == 1 and calc(calc_repo) == "return a - b"
        assert not app.main.fixes.active


async def test_f_sends_an_environment_failure_to_the_model_anyway(
        calc_repo: Path, sim: SimProcess) -> None:
    app = app_for(calc_repo, sim, **{"review.check": f"{MISSING} || exit 127"})
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: proposed(app), "the first proposal")
        await pilot.press("alt+t")
        screen = await failed_check(pilot, app)
        assert screen.result.exit_code == 127 and screen.cause
        await pilot.press("alt+f")
        await until(pilot, lambda: len(edit_bodies(sim)) == 2, "the round's request")
        assert "no_such_module_for_spark_pair" in str(edit_bodies(sim)[-1])


async def test_a_round_that_could_not_apply_is_the_tools_refusal_not_a_rejection(
        calc_repo: Path, sim: SimProcess) -> None:
    # the round's hunk removes a line the file does not have
    unfit = [{"match": "", "check": "add(2, 3) is -1", "text": diff("a / b", "a + b")},
             REPLIES[-1]]
    app = app_for(calc_repo, sim, unfit, **{"model.stronger": STRONG,
                                           "review.escalate": "auto"})
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: proposed(app), "the first proposal")
        await pilot.press("alt+t")
        await failed_check(pilot, app)
        await pilot.press("alt+y")
        text = await loop_end(pilot, app)  # the loop ends without a pass: asked
        assert "could not apply" in text
        assert "rejected (you decided)" not in text and "you rejected nothing" in text
        assert "calc.py" in text
        await answer(pilot, True)
        await until(pilot, lambda: "kept" in notice(app), "kept")
        await until(pilot, lambda: turn_over(app), "the end of the round")
        entry = next(iter(review(app).review.entries.values()))
        assert None in entry.unfit and entry.decision().unfit == (None,)
        view = app.main.query_one(DiffView)  # the live diff says so on the hunk, too
        assert view.marks[(entry.index, 0)] is HunkMark.UNFIT
        header = view.hunk_rows[(entry.index, 0)] - round(view.scroll_y)
        assert "can't apply (not a rejection)" in view.render_line(header).text
        assert "rejected" not in view.render_line(header).text.replace("not a rejection", "")
        assert "escalated" not in notice(app)  # a refusal is no reason to escalate
        assert all(b["model"] != STRONG for b in edit_bodies(sim))
        # stored and resent as not applied (its lines are not in the file), not as rejected
        stored = app.main.driver.stored.current
        turn = stored.turns[-1]
        assert turn.status == "conflict" and turn.decisions[0]["fate"] == "unfit"
        note = outcome_note(turn)  # what the next request begins with
        assert "not applied: its lines are not in the file" in note
        assert "rejected by the user" not in note and "- could not apply" in note
        assert stored.history.entries[-1].outcome == note
        assert earlier_lines(stored.turns, "s", "")[-1].endswith("→ could not apply")


def test_verdicts_and_stats_count_a_refusal_apart_from_rejections() -> None:
    from spark_pair.edits.ops import Hunk, Modify

    hunk = Hunk(old_start=1, old_len=1, new_start=1, new_len=1, lines=["-a", "+b"])
    op = Modify("calc.py", [hunk, hunk])
    left_out = Decision(Action.REJECT, "it can not be applied: its lines are not in the file",
                        unfit=(None,))
    mixed = Decision(Action.ACCEPT, hunks=(0,), notes=((1, "it can not be applied: x"),),
                     unfit=(1,))
    person = Decision(Action.REJECT, "wrong")
    fates = [v.fate for v in verdicts_of([op, op, op], [left_out, mixed, person])]
    assert fates == [Fate.UNFIT, Fate.UNFIT, Fate.KEPT, Fate.UNFIT, Fate.REJECTED,
                     Fate.REJECTED]
    (s,) = shares(("m", "t1", f) for f in fates)
    assert (s.proposed, s.kept, s.rejected, s.unfit) == (3, 1, 2, 3)
    note = note_for_model(verdicts_of([op], [left_out]))
    assert "could not be applied" in note and "rejected" not in note


def test_a_mix_of_unfit_and_rejected_says_both() -> None:
    turn = StoredTurn("fix it", status="rejected", decisions=[
        {"path": "calc.py", "hunk": 0, "fate": "unfit", "reason": "its lines are not there"},
        {"path": "calc.py", "hunk": 1, "fate": "rejected", "reason": "wrong"}])
    note = outcome_note(turn)
    assert "some of it could not apply" in note and "the user rejected the rest" in note
    assert '- rejected: calc.py hunk 2 (reason: "wrong")' in note
    assert "- could not apply (not rejected): calc.py hunk 1" in note
    assert earlier_lines([turn], "s", "")[-1].endswith("→ 1 could not apply, the rest rejected")
    person = StoredTurn("fix it", status="rejected", decisions=[
        {"path": "calc.py", "hunk": 0, "fate": "rejected", "reason": ""}])
    assert "rejected by the user" in outcome_note(person)


async def test_while_the_check_runs_the_keys_offer_only_what_works(
        calc_repo: Path, sim: SimProcess) -> None:
    app = app_for(calc_repo, sim, **{"review.check": "sleep 2; python3 check.py"})
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: proposed(app), "the first proposal")
        await pilot.press("alt+t")
        await until(pilot, lambda: isinstance(app.screen, CheckScreen), "the check pane")
        screen = app.screen
        keys = str(screen.query_one("#check-keys").content)
        assert "keep" not in keys and "stop the check" in keys and "roll" in keys
        assert screen.check_action("answer", (True,)) is False  # y does nothing yet
        assert screen.check_action("answer", (False,)) is True
        await pilot.press("enter")  # it says which keys answer: alt+n stops the check
        await until(pilot, lambda: "answers nothing here: alt+n stop the check" in
                    toasts(app), "enter's hint")
        await until(pilot, lambda: screen.result is not None, "the check's end")
        assert "keep" in str(screen.query_one("#check-keys").content)
        assert screen.check_action("answer", (True,)) is True
        # alt+n rolls back now: the hint that said it stops the check goes with the result
        # (before: it stayed its 4 s)
        await pilot.pause()
        assert "stop the check" not in toasts(app), toasts(app)
        await pilot.press("enter")
        await until(pilot, lambda: "answers nothing here: alt+y keep" in toasts(app),
                    "enter's hint for the result")


async def test_the_checks_cut_lines_are_marked_as_in_the_live_diff(
        calc_repo: Path, sim: SimProcess) -> None:
    from spark_pair.ui.widgets.diff_rows import LESS, MORE

    long = "python3 -c \"print('start ' + 'y' * 150 + ' end'); print('short')\"; exit 1"
    app = app_for(calc_repo, sim, **{"review.check": long, "review.fix_rounds": "0"})
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: proposed(app), "the first proposal")
        await pilot.press("alt+t")
        screen = await failed_check(pilot, app)
        log = screen.query_one("#check-output")
        cut, short = log.render_line(0).text, log.render_line(1).text
        assert cut.startswith("start y") and cut.rstrip().endswith(MORE)
        assert MORE not in short and LESS not in short
        log.scroll_to(x=20, animate=False)
        await pilot.pause()
        assert log.render_line(0).text.startswith(LESS)
