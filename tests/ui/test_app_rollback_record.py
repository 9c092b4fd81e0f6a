"""A tried turn rolled back after its check is recorded as rolled back, not as applied: in the
stored session (`-c`'s list), in what the next request tells the model (live and resumed), and in
`spark-pair stats` (applied turns, check and fix). Driven with the pilot against the simulator
process in a real git repository, with a real check command."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from support.apps import edit_bodies, notice, turn_over, type_line, until
from test_app_fix import REPLIES, STRONG, app_for, calc, calc_repo, proposed, to_the_last_check

from spark_pair.cli.main import main as cli
from spark_pair.session.pick import Pick
from spark_pair.sim.process import SimProcess
from spark_pair.store.sessions import SessionStore
from spark_pair.ui.app import SparkPairApp
from spark_pair.ui.screens.check import CheckScreen
from spark_pair.ui.screens.main import Launch
from spark_pair.ui.sessions import Choice, earlier_lines

__all__ = ["calc_repo"]  # the fixture, shared with test_app_fix

AGAIN = "ADD numbers once more in calc.py"
FAILS = "add(2, 3) is -1"  # the check's failing line after the first reply (a - b)


async def tried_and_rolled_back(pilot, app) -> None:
    """alt+t on the first proposal; its check fails; alt+n rolls the turn back."""
    await until(pilot, lambda: proposed(app), "the first proposal")
    await pilot.press("alt+t")
    await until(pilot, lambda: isinstance(app.screen, CheckScreen) and
                app.screen.result is not None, "the failed check")
    await pilot.press("alt+n")
    await until(pilot, lambda: "not kept: rolled back" in notice(app), "the roll back")


def stored(repo: Path) -> tuple[list[str], list[str]]:
    """Each stored turn's status, and `-c`'s lines of them."""
    with SessionStore() as store:
        (info,) = store.listed(str(repo))
        turns = store.turns(info.id)
    return [t.status for t in turns], earlier_lines(turns, info.name, "")


def stats_json() -> dict:
    result = CliRunner().invoke(cli, ["stats", "--json", "--since", "all"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


async def test_a_rolled_back_try_is_stored_told_and_counted_as_rolled_back(
        calc_repo: Path, sim: SimProcess) -> None:
    app = app_for(calc_repo, sim)
    async with app.run_test(size=(80, 24)) as pilot:
        await tried_and_rolled_back(pilot, app)
        assert calc(calc_repo) == "return 0"
        await until(pilot, lambda: turn_over(app), "the end of the turn")
        await type_line(pilot, app, AGAIN)
        await until(pilot, lambda: len(edit_bodies(sim)) == 2, "the next request")
        await until(pilot, lambda: proposed(app), "the next proposal")
        await pilot.press("alt+shift+a")  # kept without a check
        await until(pilot, lambda: turn_over(app) and calc(calc_repo) == "return a - b",
                    "the next turn applied")
    sent = json.dumps(edit_bodies(sim)[1])
    # the next request says the change was rolled back, and why (the check's failing line)
    assert "then rolled back" in sent and FAILS in sent
    statuses, lines = stored(calc_repo)
    assert statuses == ["rolled_back", "applied"]
    assert "→ rolled back calc.py" in lines[1] and "→ applied calc.py" in lines[2]
    report = stats_json()
    assert report["turns"]["applied_turns"] == 1  # the kept turn only
    assert report["turns"]["rolled_back_turns"] == 1
    (task,) = [t for t in report["tasks"] if t["model"] == "gpt-5.3-codex-spark"]
    assert task["tasks"] == 1 and task["green"] == 0  # the alt+t check counts
    text = CliRunner().invoke(cli, ["stats", "--since", "all"]).output
    assert "no checked tasks yet" not in text and "1 more rolled back" in text


async def test_a_resumed_session_tells_the_model_its_change_was_rolled_back(
        calc_repo: Path, sim: SimProcess) -> None:
    app = app_for(calc_repo, sim)
    async with app.run_test(size=(80, 24)) as pilot:
        await tried_and_rolled_back(pilot, app)
        await until(pilot, lambda: turn_over(app), "the end of the turn")
    resumed = SparkPairApp(Launch(
        root=calc_repo, session=Choice(Pick(newest=True)),
        overrides={"model.base_url": sim.base_url, "context.auto": "false",
                   "review.check": "python3 check.py"},
        env={"SPARK_PAIR_API_KEY": "test-key", "SPARK_PAIR_MODEL": "gpt-5.3-codex-spark"}))
    async with resumed.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: "carrying on" in notice(resumed), "the resume")
        await type_line(pilot, resumed, AGAIN)
        await until(pilot, lambda: len(edit_bodies(sim)) == 2, "the next request")
        await until(pilot, lambda: proposed(resumed), "the next proposal")
        await pilot.press("alt+shift+a")
        await until(pilot, lambda: turn_over(resumed), "the end of the turn")
    sent = json.dumps(edit_bodies(sim)[1])
    assert "then rolled back" in sent and FAILS in sent
    assert "Outcome of your previous reply: applied to calc.py." not in sent


async def test_a_round_rolled_back_with_its_task_is_recorded_for_each_turn(
        calc_repo: Path, sim: SimProcess) -> None:
    """A fix round whose check fails, alt+n: the tried turn and the round both go back."""
    app = app_for(calc_repo, sim, REPLIES, **{"review.fix_rounds": "1"})
    async with app.run_test(size=(80, 24)) as pilot:
        await to_the_last_check(pilot, app)
        await pilot.press("alt+n")
        await until(pilot, lambda: "rolled back the whole task" in notice(app), "the roll back")
        assert calc(calc_repo) == "return 0"
        await until(pilot, lambda: turn_over(app), "the end")
    with SessionStore() as store:
        (info,) = store.listed(str(calc_repo))
        assert [t.status for t in store.turns(info.id)] == ["rolled_back", "rolled_back"]
    report = stats_json()
    assert report["turns"]["applied_turns"] == 0
    assert report["turns"]["rolled_back_turns"] == 2
    assert STRONG not in {t["model"] for t in report["tasks"]}
    (task,) = report["tasks"]
    assert task["tasks"] == 1 and task["green"] == 0


async def kept(pilot, app, calc_repo: Path) -> None:
    """alt+shift+a on the proposal: applied without a check."""
    await until(pilot, lambda: proposed(app), "the proposal")
    await pilot.press("alt+shift+a")
    await until(pilot, lambda: turn_over(app) and calc(calc_repo) == "return a - b",
                "the turn applied")


async def test_a_turn_undone_with_plain_undo_is_stored_told_and_counted_as_undone(
        calc_repo: Path, sim: SimProcess) -> None:
    """/undo after a kept turn: the stored session, the next request and `stats` say undone;
    a turn undone, then written again by /redo, is applied again."""
    app = app_for(calc_repo, sim)
    async with app.run_test(size=(80, 24)) as pilot:
        await kept(pilot, app, calc_repo)
        await type_line(pilot, app, "/undo")
        await until(pilot, lambda: "restored 1 file" in notice(app), "the undo")
        assert calc(calc_repo) == "return 0"
        await type_line(pilot, app, AGAIN)
        await until(pilot, lambda: len(edit_bodies(sim)) == 2, "the next request")
        await kept(pilot, app, calc_repo)
        await type_line(pilot, app, "/undo")
        await until(pilot, lambda: "restored 1 file" in notice(app), "the second undo")
        await type_line(pilot, app, "/redo")
        await until(pilot, lambda: "re-applied 1 file" in notice(app), "the redo")
        assert calc(calc_repo) == "return a - b"
    sent = json.dumps(edit_bodies(sim)[1])
    assert "then undone by the user" in sent
    assert "Outcome of your previous reply: applied to calc.py." not in sent
    statuses, lines = stored(calc_repo)
    assert statuses == ["undone", "applied"]
    assert "→ undone calc.py" in lines[1] and "→ applied calc.py" in lines[2]
    report = stats_json()
    assert report["turns"]["applied_turns"] == 1  # the redone turn
    assert report["turns"]["undone_turns"] == 1
    assert report["turns"]["rolled_back_turns"] == 0
    text = CliRunner().invoke(cli, ["stats", "--since", "all"]).output
    assert "1 more undone (not counted)" in text
