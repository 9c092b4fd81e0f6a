"""The app's fix loop, driven with the pilot against the simulator process in a real git
repository: `t` on a turn whose check fails starts fix rounds; escalation; ending the loop."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.apps import edit_bodies, make_app, notice, review, turn_over, type_line, until
from support.runs import make_repo

from spark_pair.sim.process import SimProcess
from spark_pair.store.sessions import SessionStore
from spark_pair.ui.dialogs.confirm import ConfirmScreen
from spark_pair.ui.screens.check import CheckScreen
from spark_pair.ui.sessions import earlier_lines
from spark_pair.ui.widgets.diff_view import DiffView, Kind
from spark_pair.ui.widgets.header import AppHeader
from spark_pair.ui.widgets.meter import Meter

PROMPT = "ADD numbers in calc.py"
CALC = "def add(a, b):\n    return 0\n"
CHECK = 'import calc\nassert calc.add(2, 3) == 5, "add(2, 3) is %r" % calc.add(2, 3)\n'
STRONG = "gpt-5.3-codex"


def diff(old: str, new: str) -> str:
    return (f"```diff\n--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n"
            f"-    return {old}\n+    return {new}\n```\n")


# each round's reply answers the check output the request carries
REPLIES = [
    {"match": "", "check": "add(2, 3) is 0", "model": STRONG, "text": diff("a // b", "a + b")},
    {"match": "", "check": "add(2, 3) is 6", "text": diff("a * b", "a // b")},
    {"match": "", "check": "add(2, 3) is -1", "text": diff("a - b", "a * b")},
    {"match": "ADD", "text": diff("0", "a - b")},
]


@pytest.fixture
def calc_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SPARK_PAIR_HOME", str(tmp_path / "home"))
    for var in ("SPARK_PAIR_BASE_URL", "SPARK_PAIR_MODEL", "SPARK_PAIR_TRANSPORT"):
        monkeypatch.delenv(var, raising=False)
    return make_repo(tmp_path / "repo", {"calc.py": CALC, "check.py": CHECK})


def app_for(repo: Path, sim: SimProcess, replies: list | None = None, **overrides: str):
    sim.configure(replies=REPLIES if replies is None else replies)
    return make_app(repo, sim, prompt=PROMPT, files=("calc.py",),
                    **{"review.check": "python3 check.py", "context.auto": "false", **overrides})


def body_text(sim: SimProcess) -> list[str]:
    return [json.dumps(b) for b in edit_bodies(sim)]


def proposed(app) -> bool:
    return len(review(app).review.undecided()) == 1


def calc(repo: Path) -> str:
    return (repo / "calc.py").read_text().splitlines()[1].strip()


async def read_and_send(pilot, app) -> CheckScreen:
    """The failed check stays on screen with what `y` sends next, until `y`."""
    await until(pilot, lambda: isinstance(app.screen, CheckScreen) and
                app.screen.result is not None, "the failed check")
    screen = app.screen
    await pilot.pause(0.1)
    assert app.screen is screen and screen.sends  # it waits for the person
    assert "alt+y keeps the turn and sends this output" in status(screen)
    await pilot.press("alt+y")
    return screen


async def to_the_round(pilot, app) -> None:
    """`t` on the first proposal, its failed check sent: fix round 1 of the loop under review."""
    await until(pilot, lambda: proposed(app), "the first proposal")
    await pilot.press("alt+t")
    await read_and_send(pilot, app)
    await until(pilot, lambda: proposed(app) and "fix round 1" in notice(app), "the round")


async def to_the_last_check(pilot, app) -> None:
    """One round of a one-round loop, then its failed check on screen."""
    await until(pilot, lambda: proposed(app), "the first proposal")
    await pilot.press("alt+t")
    await read_and_send(pilot, app)
    await until(pilot, lambda: proposed(app) and "fix round 1 of 1" in notice(app), "the round")
    await pilot.press("alt+t")
    await until(pilot, lambda: isinstance(app.screen, CheckScreen) and
                app.screen.result is not None, "the last check")


async def loop_end(pilot, app) -> str:
    """The question a loop that ends without a pass asks: keep or roll back the task."""
    await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "keep or roll back")
    return app.screen.question


async def answer(pilot, keep: bool) -> None:
    """Keep (True) or roll back (False): on the loop's question or the check."""
    await pilot.press("alt+y" if keep else "alt+n")


def status(screen: CheckScreen) -> str:
    return str(screen.query_one("#check-status").content)


async def test_t_on_a_failing_check_starts_a_round_whose_pass_ends_the_loop(
        calc_repo: Path, sim: SimProcess) -> None:
    fixes = [{"match": "", "check": "add(2, 3) is -1", "text": diff("a - b", "a + b")},
             REPLIES[-1]]
    app = app_for(calc_repo, sim, fixes)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: proposed(app), "the first proposal")
        await pilot.press("alt+t")
        await read_and_send(pilot, app)
        await until(pilot, lambda: "fix round 1 of 2" in notice(app), "the round's start")
        assert "gpt-5.3-codex-spark" in notice(app) and "escape stops" in notice(app)
        await until(pilot, lambda: proposed(app), "the round's proposal")
        sent = body_text(sim)
        assert len(sent) == 2 and "add(2, 3) is -1" in sent[1] and "check-output" in sent[1]
        await pilot.press("alt+shift+a")  # reviewed as any turn; once applied the check runs again
        await until(pilot, lambda: "the check passes after 1 round" in notice(app), "green")
        assert calc(calc_repo) == "return a + b"
        await until(pilot, lambda: turn_over(app), "the end of the turn")
        # the stored last instruction is the person's, not the fix round's (/sessions, -c)
        assert app.main.driver.stored.current._current().last_instruction == PROMPT
        for expected in ("return a - b", "return 0"):  # each round undoes by itself
            await type_line(pilot, app, "/undo")
            await until(pilot, lambda e=expected: calc(calc_repo) == e, expected)
    with SessionStore() as store:
        (info,) = store.listed(str(calc_repo))
        assert info.turns == 2 and info.last_instruction == PROMPT
        lines = earlier_lines(store.turns(info.id), info.name, "")
    assert PROMPT in lines[1] and "fix round" in lines[2] and "After your" not in lines[2]


async def test_failed_rounds_ask_for_the_stronger_model_and_go_back_after(
        calc_repo: Path, sim: SimProcess) -> None:
    app = app_for(calc_repo, sim, **{"review.fix_rounds": "2", "model.stronger": STRONG})
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: proposed(app), "the first proposal")
        await pilot.press("alt+t")
        await read_and_send(pilot, app)
        for n in (1, 2):
            await until(pilot, lambda n=n: f"fix round {n} of 2" in notice(app), f"round {n}")
            await until(pilot, lambda: proposed(app), f"round {n}'s proposal")
            await pilot.press("alt+t")
            await read_and_send(pilot, app)
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question")
        assert STRONG in app.screen.question and "still fails after 2 rounds" in \
            app.screen.question
        assert [b["model"] for b in edit_bodies(sim)] == ["gpt-5.3-codex-spark"] * 3
        await pilot.press("alt+y")
        await until(pilot, lambda: "escalated" in notice(app), "the escalated round")
        assert f"stronger model {STRONG}" in notice(app)
        assert app.main.query_one(AppHeader).model == STRONG  # on screen, not silently
        await until(pilot, lambda: proposed(app), "the stronger model's proposal")
        assert edit_bodies(sim)[-1]["model"] == STRONG
        # who wrote it, on every hunk, in the review's title and in the meter
        hunks = [r.text for r in app.main.query_one(DiffView).rows if r.kind == Kind.HUNK]
        assert hunks and all(h.endswith(f"· {STRONG}") for h in hunks)
        assert str(review(app).border_title).endswith(f"by {STRONG}")
        assert app.main.query_one(Meter).parts()[-1].endswith(f"· {STRONG}")
        await pilot.press("alt+t")
        await until(pilot, lambda: "passes after 3 rounds" in notice(app), "green")
        await until(pilot, lambda: "back on gpt-5.3-codex-spark" in notice(app), "back")
        assert app.main.query_one(AppHeader).model == "gpt-5.3-codex-spark"
        assert calc(calc_repo) == "return a + b"


async def test_a_rejected_round_ends_the_loop(calc_repo: Path, sim: SimProcess) -> None:
    app = app_for(calc_repo, sim)
    async with app.run_test(size=(80, 24)) as pilot:
        await to_the_round(pilot, app)
        await pilot.press("alt+shift+r")
        question = await loop_end(pilot, app)  # asked, as after `t`
        assert "round 1 was rejected (you decided)" in question and "its turn" in question
        await answer(pilot, True)
        await until(pilot, lambda: "kept: its turn stays" in notice(app), "kept")
        await until(pilot, lambda: turn_over(app), "the end of the turn")
        assert calc(calc_repo) == "return a - b"  # the first turn stays applied: you said so
        assert len(edit_bodies(sim)) == 2  # no further round


async def test_a_rejected_round_rolled_back_takes_back_the_tried_turn(
        calc_repo: Path, sim: SimProcess) -> None:
    app = app_for(calc_repo, sim)
    async with app.run_test(size=(80, 24)) as pilot:
        await to_the_round(pilot, app)
        await pilot.press("alt+shift+r")
        await loop_end(pilot, app)
        await answer(pilot, False)
        await until(pilot, lambda: "rolled back the whole task" in notice(app), "roll back")
        assert (calc_repo / "calc.py").read_text() == CALC  # byte for byte
        assert "the tried turn" in notice(app)


async def test_escape_stops_the_loop_and_off_never_escalates(calc_repo: Path,
                                                             sim: SimProcess) -> None:
    app = app_for(calc_repo, sim, **{"review.fix_rounds": "1", "model.stronger": STRONG,
                                     "review.escalate": "off"})
    async with app.run_test(size=(80, 24)) as pilot:
        await to_the_last_check(pilot, app)
        # the loop is over without a pass: keep or roll back is asked, as after `t`
        assert "still fails after 1 round and the loop ends" in status(app.screen)
        assert not app.screen.sends
        await pilot.press("alt+y")
        await until(pilot, lambda: "still fails after 1 round" in notice(app), "the end")
        assert not isinstance(app.screen, ConfirmScreen)
        assert all(b["model"] != STRONG for b in edit_bodies(sim))
        assert calc(calc_repo) == "return a * b"  # kept: the person said so


async def test_a_loop_that_ends_without_a_pass_can_roll_the_whole_task_back(
        calc_repo: Path, sim: SimProcess) -> None:
    app = app_for(calc_repo, sim, **{"review.fix_rounds": "1"})
    async with app.run_test(size=(80, 24)) as pilot:
        await to_the_last_check(pilot, app)
        assert "add(2, 3) is 6" in "\n".join(app.screen.query_one("#check-output").lines)
        assert "roll back the whole task (2 turns)" in status(app.screen)
        await answer(pilot, False)
        await until(pilot, lambda: "rolled back the whole task" in notice(app), "the roll back")
        # every round and the tried turn, newest first, byte for byte
        assert (calc_repo / "calc.py").read_text() == CALC
        assert "2 turn(s), newest first (round 1, the tried turn)" in notice(app)
        assert len(edit_bodies(sim)) == 2 and not app.main.fixes.active


async def test_a_round_that_can_not_go_back_says_what_stays(
        calc_repo: Path, sim: SimProcess) -> None:
    app = app_for(calc_repo, sim, **{"review.fix_rounds": "1"})
    async with app.run_test(size=(80, 24)) as pilot:
        await to_the_last_check(pilot, app)
        (calc_repo / "calc.py").write_text(CALC + "# mine\n")  # the person edits meanwhile
        await answer(pilot, False)
        await until(pilot, lambda: "could not be rolled back" in notice(app), "what stays")
        text = notice(app)
        assert "round 1 could not be rolled back" in text
        assert "): round 1, the tried turn stay written" in text  # what stays, newest first
        assert "/undo takes each back" in text
        assert (calc_repo / "calc.py").read_text() == CALC + "# mine\n"  # nothing lost


async def test_escape_stops_the_loop_and_the_round_is_decided_as_any_turn(
        calc_repo: Path, sim: SimProcess) -> None:
    app = app_for(calc_repo, sim)
    async with app.run_test(size=(80, 24)) as pilot:
        await to_the_round(pilot, app)
        assert "fix round 1 of 2" in notice(app)
        await pilot.press("escape")
        await until(pilot, lambda: "fix loop stopped (escape)" in notice(app), "the stop")
        await pilot.press("alt+t")  # the round is still a turn to decide: try it as any turn
        await until(pilot, lambda: isinstance(app.screen, CheckScreen), "the check pane")
        screen = app.screen
        await until(pilot, lambda: screen.result is not None, "the check's end")
        assert not screen.result.passed  # no new round: the person decides
        assert "roll back the whole task (2 turns)" in status(screen)
        await answer(pilot, False)
        await until(pilot, lambda: "rolled back the whole task" in notice(app), "the roll back")
        assert calc(calc_repo) == "return 0" and len(edit_bodies(sim)) == 2


async def test_escape_between_rounds_and_no_to_escalation_ask_keep_or_roll_back(
        calc_repo: Path, sim: SimProcess) -> None:
    app = app_for(calc_repo, sim, **{"review.fix_rounds": "0", "model.stronger": STRONG})
    async with app.run_test(size=(80, 24)) as pilot:  # escalate = ask (the default)
        await until(pilot, lambda: proposed(app), "the first proposal")
        await pilot.press("alt+t")
        await read_and_send(pilot, app)
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen) and
                    "stronger model" in app.screen.question, "the escalation question")
        await answer(pilot, False)  # no: the loop ends without a pass
        question = await loop_end(pilot, app)
        assert "not escalated" in question and "roll back its turn" in question
        await answer(pilot, False)
        await until(pilot, lambda: "rolled back the whole task" in notice(app), "roll back")
        assert (calc_repo / "calc.py").read_text() == CALC


async def test_two_rejections_with_a_reason_send_the_task_to_the_stronger_model(
        calc_repo: Path, sim: SimProcess) -> None:
    from spark_pair.ui.dialogs.reason import ReasonScreen

    app = app_for(calc_repo, sim, **{"model.stronger": STRONG, "review.escalate": "auto"})
    async with app.run_test(size=(80, 24)) as pilot:
        for attempt in (1, 2):
            await until(pilot, lambda: proposed(app), f"proposal {attempt}")
            await pilot.press("alt+c")
            await until(pilot, lambda: isinstance(app.screen, ReasonScreen), "the reason")
            await pilot.press(*"subtracts", "enter")
            if attempt == 1:
                await until(pilot, lambda: turn_over(app), "the rejected turn's end")
                assert "escalated" not in notice(app)
                await pilot.press("ctrl+r")
        await until(pilot, lambda: "escalated (two rejections with a reason)" in notice(app),
                    "the escalation")
        await until(pilot, lambda: proposed(app), "the stronger model's proposal")
        assert [b["model"] for b in edit_bodies(sim)] == ["gpt-5.3-codex-spark"] * 2 + [STRONG]
        assert app.main.query_one(AppHeader).model == STRONG


async def test_fix_rounds_0_is_off_the_failed_check_asks_keep_or_roll_back(
        calc_repo: Path, sim: SimProcess) -> None:
    app = app_for(calc_repo, sim, **{"review.fix_rounds": "0"})
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: proposed(app), "the first proposal")
        await pilot.press("alt+t")
        await until(pilot, lambda: isinstance(app.screen, CheckScreen), "the check pane")
        screen = app.screen
        await until(pilot, lambda: screen.result is not None, "the check's end")
        await pilot.pause(0.2)
        assert app.screen is screen and not screen.result.passed  # it waits for the person
        await pilot.press("alt+y")
        await until(pilot, lambda: "kept" in notice(app), "kept")
        assert len(edit_bodies(sim)) == 1 and calc(calc_repo) == "return a - b"


async def test_escape_in_an_escalated_round_goes_back_once_the_round_is_decided(
        calc_repo: Path, sim: SimProcess) -> None:
    app = app_for(calc_repo, sim, **{"review.fix_rounds": "0", "model.stronger": STRONG,
                                     "review.escalate": "auto"})
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: proposed(app), "the first proposal")
        await pilot.press("alt+t")
        await read_and_send(pilot, app)
        await until(pilot, lambda: proposed(app) and "escalated" in notice(app),
                    "the escalated round under review")
        assert app.main.query_one(AppHeader).model == STRONG
        await pilot.press("escape")
        await until(pilot, lambda: "fix loop stopped (escape)" in notice(app), "the stop")
        assert app.main.query_one(AppHeader).model == STRONG  # not under the round
        await pilot.press("alt+shift+r")
        assert "fix loop stopped" in await loop_end(pilot, app)
        await answer(pilot, True)
        await until(pilot, lambda: app.main.query_one(AppHeader).model ==
                    "gpt-5.3-codex-spark", "the drafting model again")
        await until(pilot, lambda: "back on gpt-5.3-codex-spark" in notice(app), "said so")
        assert "turn is running" not in notice(app)


async def test_a_reply_cut_by_the_context_window_is_offered_to_the_stronger_model(
        calc_repo: Path, sim: SimProcess) -> None:
    prose = "Let me think about this change carefully. " * 40
    sim.configure(contexts={"gpt-5.3-codex-spark": 600})
    app = app_for(calc_repo, sim, [{"match": "ADD", "text": prose + diff("0", "a + b")}],
                  **{"model.stronger": STRONG})  # escalate = ask (the default)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question")
        assert "context window" in app.screen.question and STRONG in app.screen.question
        await pilot.press("alt+y")
        await until(pilot, lambda: proposed(app), "the stronger model's proposal")
        assert [b["model"] for b in edit_bodies(sim)] == ["gpt-5.3-codex-spark", STRONG]
        assert "context window" in notice(app)


async def test_the_check_pane_and_the_stored_check_show_the_key_as_stars(
        calc_repo: Path, sim: SimProcess, monkeypatch: pytest.MonkeyPatch) -> None:
    """A check that prints the key (whole lines, and a last line without its end, written in
    pieces) shows *** in the pane, as `run --check` does, and the session stores ***."""
    secret = "sk-app-check-secret-0123456789"
    monkeypatch.setenv("SPARK_PAIR_API_KEY", secret)  # what the check's process inherits
    script = ("import os, sys, time; k = os.environ['SPARK_PAIR_API_KEY']; print('key=' + k,"
              " flush=True); sys.stdout.write('last ' + k[:6]); sys.stdout.flush();"
              " time.sleep(0.2); sys.stdout.write(k[6:]); sys.exit(1)")
    (calc_repo / "leak.py").write_text(script + "\n")
    app = app_for(calc_repo, sim, **{"review.check": "python3 leak.py"})
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: proposed(app), "the first proposal")
        await pilot.press("alt+t")
        await until(pilot, lambda: isinstance(app.screen, CheckScreen) and
                    app.screen.result is not None, "the failed check")
        shown = "\n".join(app.screen.query_one("#check-output").lines)
        assert "key=***" in shown and "last ***" in shown and secret[6:] not in shown
        await pilot.press("alt+y")
        await until(pilot, lambda: turn_over(app), "the end of the turn")
    with SessionStore() as store:
        (info,) = store.listed(str(calc_repo))
        checks = [t.check for t in store.turns(info.id) if t.check]
    assert checks and all(secret not in json.dumps(c) for c in checks)
    assert "key=***" in checks[0]["tail"]
