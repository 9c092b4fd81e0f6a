"""[keys] remaps onto a key another binding already has (an app key such as ctrl+q, or another
remap's): refused with a warning naming both, the default key stays, in the footer, the help
and in what the key does (pilot against the simulator as a real process)."""

from __future__ import annotations

from pathlib import Path

from support.apps import (
    all_proposed,
    make_app,
    notice,
    opened,
    review,
    screen_text,
    turn_over,
    until,
)

from spark_pair.sim.demo_project import PROMPT
from spark_pair.sim.process import SimProcess
from spark_pair.ui.review_state import Mark
from spark_pair.ui.screens.help import HelpScreen
from spark_pair.ui.screens.quitting import QuitQuestion


def footer_line(app: object) -> str:
    return screen_text(app).splitlines()[-1].replace(" ", "")  # type: ignore[arg-type]


async def test_a_decision_remapped_onto_the_quit_key_is_refused(repo: Path,
                                                               demo_sim: SimProcess) -> None:
    """`review.accept = "ctrl+q"`: said, naming review.accept and app.quit; the footer shows
    alt+a for yes (before: ^q yes, and ctrl+q asked to quit), alt+a accepts, ctrl+q asks to
    quit, and the keys screen lists alt+a."""
    (repo / ".spark-pair.toml").write_text('[keys]\n"review.accept" = "ctrl+q"\n')
    app = make_app(repo, demo_sim, prompt="")
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: "app.quit" in notice(app), "the report")
        said = notice(app)
        assert "'review.accept' (accept) = 'ctrl+q': 'ctrl+q' is the key of 'app.quit' (quit)" \
            in said and "hint:" in said, said
        app.main.start_turn(PROMPT, list(app.main.context))
        await until(pilot, lambda: all_proposed(app), "every proposal")
        await pilot.pause()
        line = footer_line(app)
        assert "alt+ayes" in line and "^qyes" not in line, line
        await pilot.press("ctrl+q")
        await until(pilot, lambda: isinstance(app.screen, QuitQuestion), "the quit question")
        await pilot.press("alt+n")
        await until(pilot, lambda: app.screen is app.main, "the question answered")
        assert len(review(app).review.undecided()) == 6
        await pilot.press("alt+a")
        assert review(app).review.entries[0].hunks[0] is Mark.ACCEPTED
        app.main.action_help()
        await until(pilot, lambda: isinstance(app.screen, HelpScreen)
                    and app.screen.query("Static"), "the help screen")
        text = screen_text(app).replace(" ", "")
        assert "alt+a/alt+rreview" in text and "ctrl+q/alt+r" not in text, text
        await pilot.press("escape")
        await pilot.press("alt+shift+r")
        await until(pilot, lambda: turn_over(app), "the end of the turn")


async def test_two_remaps_onto_one_key_are_both_refused_when_saved(
        repo: Path, demo_sim: SimProcess) -> None:
    """Saved while the app runs: two entries given f5 are said together and neither is taken
    (f5 decides nothing); an app key remapped onto a review chord is refused too, while a
    remap onto a key free where the binding acts is taken."""
    app = make_app(repo, demo_sim, prompt="")
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: opened(app), "the app open (its config read)")
        (repo / ".spark-pair.toml").write_text(
            '[keys]\n"review.accept" = "f5"\n"review.reject" = "f5"\n"app.help" = "alt+d"\n'
            '"review.accept_all" = "alt+y"\n')
        await until(pilot, lambda: "config saved" in notice(app), "the reload")
        said = notice(app)
        assert "'review.accept' (accept) and 'review.reject' (reject) are both given 'f5'" \
            in said, said
        assert "'app.help' (keys) = 'alt+d'" in said and "'review.confirm'" in said, said
        assert "review.accept_all" not in said, said
        app.main.start_turn(PROMPT, list(app.main.context))
        await until(pilot, lambda: all_proposed(app), "every proposal")
        await pilot.press("f5")
        assert len(review(app).review.undecided()) == 6
        await pilot.press("alt+a", "alt+r")
        assert len(review(app).review.undecided()) < 6
        await pilot.press("alt+y")  # accept every modify and create: taken
        await until(pilot, lambda: len(review(app).review.undecided()) == 2, "accept all")
        await pilot.press("alt+shift+r")
        await until(pilot, lambda: turn_over(app), "the end of the turn")


async def test_a_refusal_at_start_stays_said_when_the_launch_prompt_starts_a_turn(
        repo: Path, demo_sim: SimProcess) -> None:
    """`spark-pair demo` (a launch prompt): the turn it starts clears the notice line, so the
    refusals are in a toast too, as the config's other warnings are (before: never seen)."""
    (repo / ".spark-pair.toml").write_text('[keys]\n"review.accept" = "ctrl+q"\n'
                                           '"review.reject" = "n"\n')
    app = make_app(repo, demo_sim)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: all_proposed(app), "every proposal")
        toasts = "\n".join(str(n.message) for n in app._notifications)
        assert "'ctrl+q' is the key of 'app.quit' (quit)" in toasts, toasts
        assert "'review.reject': a key that types text never decides" in toasts, toasts
        await pilot.press("alt+shift+r")
        await until(pilot, lambda: turn_over(app), "the end of the turn")


async def test_a_chord_spelled_another_way_runs_its_binding(repo: Path,
                                                            demo_sim: SimProcess) -> None:
    """`review.accept_all = "shift+alt+x"`: the terminal's alt+shift+x accepts every modify
    and create (before: the binding was kept under a name no key has, and never ran)."""
    (repo / ".spark-pair.toml").write_text('[keys]\n"review.accept_all" = "shift+alt+x"\n')
    app = make_app(repo, demo_sim, prompt="")
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: opened(app), "the app open")
        app.main.start_turn(PROMPT, list(app.main.context))
        await until(pilot, lambda: all_proposed(app), "every proposal")
        await pilot.press("alt+shift+x")
        await until(pilot, lambda: len(review(app).review.undecided()) == 2, "accept all")
        assert "[keys]" not in notice(app)
        await pilot.press("alt+shift+r")
        await until(pilot, lambda: turn_over(app), "the end of the turn")
