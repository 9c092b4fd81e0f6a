"""The app's prompt, slash commands, files pane, help, palette, resizing and re-runs, driven with
the pilot against the simulator as a real process."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support.apps import (
    all_proposed,
    edit_bodies,
    entries_of,
    go_to,
    make_app,
    notice,
    opened,
    screen_text,
    turn_over,
    type_line,
    typed,
    until,
)

from spark_pair.edits.ops import OpKind
from spark_pair.sim.demo_project import FILES, PROMPT
from spark_pair.sim.process import SimProcess
from spark_pair.ui.dialogs.confirm import ConfirmScreen
from spark_pair.ui.driver import Driver
from spark_pair.ui.review_state import Mark
from spark_pair.ui.screens.help import HelpScreen
from spark_pair.ui.screens.main import MainScreen
from spark_pair.ui.widgets.files import FilesPane
from spark_pair.ui.widgets.meter import Meter
from spark_pair.ui.widgets.prompt import Prompt


async def test_slash_commands_complete_and_bad_ones_explain(repo: Path,
                                                            demo_sim: SimProcess) -> None:
    app = make_app(repo, demo_sim, prompt="")
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: opened(app), "the open repository")
        prompt = app.main.query_one(Prompt)
        prompt.focus()
        await pilot.press(*"/tr")
        await until(pilot, lambda: prompt.suggestion == "ansport", "the suggestion")
        await pilot.press("right")  # takes the suggestion
        assert prompt.value == "/transport"
        await pilot.press(*" bogus", "enter")
        assert "unknown transport 'bogus'" in notice(app) and "hint:" in notice(app)
        assert prompt.value == "/transport bogus"  # a refused command stays, to mend
        await pilot.press("ctrl+u")
        await type_line(pilot, app, "/frobnicate")
        assert "unknown command" in notice(app) and "/undo" in notice(app)
        assert prompt.value == "/frobnicate"
        await pilot.press("ctrl+u")
        await type_line(pilot, app, "/add no/such/file.py")
        assert "no such file" in notice(app) and prompt.value == "/add no/such/file.py"
        await pilot.press("ctrl+u")
        await type_line(pilot, app, "/add ../outside.py")
        assert "refused path" in notice(app) and "go into the context" in notice(app)
        assert "writes" not in notice(app)  # (the hint of a refused write)
        assert app.is_running  # every error is shown; the app keeps running


async def test_a_command_that_takes_no_argument_refuses_one_and_keeps_the_text(
        repo: Path, demo_sim: SimProcess) -> None:
    """'/undo 3' (the CLI's undo takes a turn) must not undo the last turn instead; '/quit now'
    does not quit; a command refused while a turn waits for review stays in the prompt."""
    app = make_app(repo, demo_sim)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: all_proposed(app), "every proposal")
        prompt = app.main.query_one(Prompt)
        await type_line(pilot, app, "/redo")
        assert "under review" in notice(app) and prompt.value == "/redo"
        await pilot.press("ctrl+u", "alt+shift+a", "alt+shift+r")  # the modifies written
        await until(pilot, lambda: turn_over(app), "the applied turn")
        applied = {rel: (repo / rel).read_text() for rel in FILES if (repo / rel).exists()}
        assert applied != FILES
        for text in ("/undo please", "/quit now"):
            await type_line(pilot, app, text)
            await pilot.pause()
            assert f"{text.split()[0]} takes no argument" in notice(app), notice(app)
            assert prompt.value == text and app.is_running
            await pilot.press("ctrl+u")
        assert {rel: (repo / rel).read_text() for rel in applied} == applied  # not undone
        await type_line(pilot, app, "/undo")
        await until(pilot, lambda: "restored" in notice(app), "the undo")
        assert prompt.value == ""


async def test_prompt_history_walks_back_and_forth(repo: Path, demo_sim: SimProcess) -> None:
    app = make_app(repo, demo_sim, prompt="")
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: opened(app), "the open repository")
        await type_line(pilot, app, "/help")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen), "the help screen")
        await pilot.press("escape")
        await type_line(pilot, app, "/clear")
        prompt = app.main.query_one(Prompt)
        await pilot.press(*"draft")
        await pilot.press("up")
        assert prompt.value == "/clear"
        await pilot.press("up")
        assert prompt.value == "/help"
        await pilot.press("down", "down")
        assert prompt.value == "draft"  # what was being written comes back


@pytest.mark.parametrize("transport", ["auto", "chat"])
async def test_at_80x24_a_refused_key_and_a_missing_model_are_read_whole(
        repo: Path, demo_sim: SimProcess, transport: str) -> None:
    """Message and hint, every word on screen; the header names the error, not a failed link."""
    from spark_pair.ui.driver import describe
    from spark_pair.ui.widgets.header import AppHeader

    def whole(error: Any) -> bool:
        return " ".join(describe(error).split()) in " ".join(screen_text(app).split())

    demo_sim.configure(api_key="the-right-key")
    app = make_app(repo, demo_sim, transport=transport)
    async with app.run_test(size=(80, 24)) as pilot:
        errors: list[Any] = []
        original = app.main.show_error
        app.main.show_error = lambda e, **kw: (  # type: ignore[method-assign]
            errors.append(e), original(e, **kw))
        await until(pilot, lambda: app.main.last_prompt and turn_over(app) and errors,
                    "the failed turn")
        await pilot.pause()
        assert whole(errors[-1]), screen_text(app)
        header = str(app.main.query_one(AppHeader).render())
        assert "key refused" in header and "failed" not in header
        meter = str(app.main.query_one(Meter).render())  # the transport tried, not "-"
        assert meter.endswith(f"│ {'ws' if transport == 'auto' else transport}"), meter
        demo_sim.configure(api_key=None)
        await type_line(pilot, app, "/model no-such-model")
        await until(pilot, lambda: "now using model no-such-model" in notice(app), "the switch")
        await type_line(pilot, app, "add a discount")
        await until(pilot, lambda: "no-such-model" in notice(app) and turn_over(app)
                    and "hint:" in notice(app), "the missing model")
        await pilot.pause()
        assert whole(errors[-1]), screen_text(app)
        header = str(app.main.query_one(AppHeader).render())
        assert "model not found" in header and "failed" not in header
        # no frame came: the instruction stays in the prompt, to send again once mended
        assert app.main.query_one("#prompt").text == "add a discount"


async def test_at_80x24_the_meter_names_the_transport_while_it_retries(
        repo: Path, demo_sim: SimProcess) -> None:
    """A server error on chat: while the retry waits, the meter says chat (not "-")."""
    demo_sim.set_faults([{"kind": "server_error", "transport": "chat", "times": -1}])
    app = make_app(repo, demo_sim, transport="chat")
    async with app.run_test(size=(80, 24)) as pilot:
        meter = app.main.query_one(Meter)
        await until(pilot, lambda: meter.retries, "the first retry")
        assert meter.transport == "chat" and str(meter.render()).endswith("│ chat")
        await pilot.press("escape")
        await until(pilot, lambda: turn_over(app), "the stopped turn")


async def test_add_and_drop_say_what_changed_when_the_files_pane_is_folded(
        repo: Path, demo_sim: SimProcess) -> None:
    app = make_app(repo, demo_sim, prompt="")
    async with app.run_test(size=(80, 24)) as pilot:  # under 100 columns: no files pane
        await until(pilot, lambda: opened(app), "the open repository")
        assert not app.main.query_one(FilesPane).display
        await type_line(pilot, app, "/add README.md")
        assert notice(app) == "added README.md to the context: 3 files in it now"
        await type_line(pilot, app, "/add ./README.md")
        assert notice(app) == "README.md is already in the context"
        await type_line(pilot, app, "/drop ./README.md")
        assert notice(app) == "dropped README.md from the context: 2 files in it now"
        assert "README.md" not in app.main.context
        await type_line(pilot, app, "/add nope.py")
        assert "no such file" in notice(app) and "hint:" in notice(app)


async def test_files_pane_toggles_the_context(repo: Path, demo_sim: SimProcess) -> None:
    app = make_app(repo, demo_sim, prompt="")
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: opened(app), "the open repository")
        await type_line(pilot, app, "/add README.md")
        files = app.main.query_one(FilesPane)
        assert "README.md" in app.main.context
        await until(pilot, lambda: app.main.context.get("README.md"), "its token estimate")
        assert app.main.context["README.md"] == (len(FILES["README.md"]) + 3) // 4
        await pilot.press("tab")  # prompt -> files (the empty review pane is skipped)
        assert app.focused is files
        files.highlighted = files.get_option_index("README.md")
        await pilot.press("enter")
        assert "README.md" not in app.main.context
        await pilot.press("enter")
        assert "README.md" in app.main.context
        (repo / "stock.csv").write_text("pen, 2.00, 1\n")
        await until(pilot, lambda: "stock.csv" in files.changed, "the watcher's report")
        assert str(files.get_option("stock.csv").prompt).startswith("M ")


def listed(app: Any) -> list[str]:
    """The files pane's rows as a person reads them."""
    pane = app.main.query_one(FilesPane)
    return [str(pane.get_option_at_index(i).prompt) for i in range(pane.option_count)]


def in_list(app: Any, name: str) -> str | None:
    """The files pane's row of a file (`M ● name tokens`), None when it is not listed."""
    return next((row for row in listed(app) if row[4:].split(" ")[0] == name), None)


async def test_a_context_file_the_turn_deleted_leaves_the_files_pane_until_undo(
        repo: Path, demo_sim: SimProcess) -> None:
    """An accepted delete of a context file: the file leaves the files pane and is no longer
    sent; /undo brings it back to both, /redo takes it away again. A renamed context file
    stays in the context under its new name."""
    app = make_app(repo, demo_sim, files=("inventory.py", "TODO.txt", "stock.csv"))
    async with app.run_test(size=(120, 40)) as pilot:
        files = app.main.query_one(FilesPane)
        await until(pilot, lambda: in_list(app, "TODO.txt") == "  ● TODO.txt 16",
                    "TODO.txt in the context")
        await until(pilot, lambda: all_proposed(app), "every proposal")
        for kind in (OpKind.DELETE, OpKind.RENAME):
            await go_to(pilot, app, entries_of(app, kind)[0].index)
            await pilot.press("alt+d")
            await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question")
            await pilot.press("alt+y")
        await pilot.press("alt+shift+r")
        await until(pilot, lambda: turn_over(app), "the end of the turn")
        assert not (repo / "TODO.txt").exists() and not (repo / "stock.csv").exists()
        await until(pilot, lambda: in_list(app, "TODO.txt") is None
                    and in_list(app, "stock.csv") is None, "the deleted files to leave the list")
        assert "●" in (in_list(app, "inventory.py") or "")
        assert "●" in (in_list(app, "sample_stock.csv") or "")  # the renamed file, renamed
        assert files.border_subtitle.startswith("2 in context")
        assert app.main.sent_context() == ["inventory.py", "sample_stock.csv"]
        await type_line(pilot, app, "/undo")
        await until(pilot, lambda: "restored" in notice(app), "the undo")
        assert (repo / "TODO.txt").read_text() == FILES["TODO.txt"]
        await until(pilot, lambda: "● TODO.txt 16" in (in_list(app, "TODO.txt") or "")
                    and in_list(app, "sample_stock.csv") is None,
                    "the restored files back in the list")
        assert "●" in (in_list(app, "stock.csv") or "")
        assert files.border_subtitle.startswith("3 in context")
        assert app.main.sent_context() == ["inventory.py", "TODO.txt", "stock.csv"]
        await type_line(pilot, app, "/redo")
        await until(pilot, lambda: "re-applied" in notice(app), "the redo")
        await until(pilot, lambda: in_list(app, "TODO.txt") is None
                    and "●" in (in_list(app, "sample_stock.csv") or ""),
                    "the file deleted again to leave the list")


async def test_resizing_never_crashes_and_80_columns_fold_the_files_pane(
        repo: Path, demo_sim: SimProcess) -> None:
    demo_sim.configure(tps=3000)
    app = make_app(repo, demo_sim)
    async with app.run_test(size=(200, 50)) as pilot:
        await until(pilot, lambda: app.main.driver.running, "the turn")
        for size in ((80, 24), (40, 10), (20, 5), (200, 50), (80, 24)):
            await pilot.resize_terminal(*size)
            await pilot.pause()
        assert app.main.has_class("-narrow")
        assert not app.main.query_one(FilesPane).display or \
            app.main.query_one(FilesPane).styles.display == "none"
        await until(pilot, lambda: all_proposed(app), "every proposal")
        await pilot.press("alt+shift+r")
        await until(pilot, lambda: turn_over(app), "the end of the turn")
        assert isinstance(app.screen, MainScreen)


async def test_rows_stop_at_the_scrollbar_at_80_columns(repo: Path,
                                                       demo_sim: SimProcess) -> None:
    """With a scrollbar showing, no row of the live diff or the review pane runs into it (or
    past the pane's border)."""
    app = make_app(repo, demo_sim)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: all_proposed(app), "every proposal")
        for pane in (app.main.query_one("#diff"), app.main.query_one("#review")):
            region = pane.scrollable_content_region
            assert region.width < pane.size.width, "the pane shows a scrollbar"
            widths = {pane.render_line(y).cell_length for y in range(region.height)}
            assert widths == {region.width}, pane


async def test_ctrl_r_runs_the_turn_again_and_ctrl_e_on_the_stronger_model(
        repo: Path, demo_sim: SimProcess) -> None:
    app = make_app(repo, demo_sim, **{"model.stronger": "gpt-5.3-codex"})
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: all_proposed(app), "every proposal")
        await pilot.press("ctrl+r")  # stops this turn (nothing written) and runs it again
        await until(pilot, lambda: all_proposed(app) and app.main.driver.running, "again")
        await pilot.press("ctrl+e")
        await until(pilot, lambda: all_proposed(app) and app.main.driver.running, "escalated")
        await pilot.press("alt+shift+r")
        await until(pilot, lambda: turn_over(app), "the end of the turn")
    bodies = edit_bodies(demo_sim)
    assert [b["model"] for b in bodies] == ["gpt-5.3-codex-spark"] * 2 + ["gpt-5.3-codex"]
    for rel, text in FILES.items():
        assert (repo / rel).read_text() == text


async def test_palette_offers_models_transports_and_context(repo: Path,
                                                             demo_sim: SimProcess) -> None:
    app = make_app(repo, demo_sim, prompt="", **{"model.fallbacks": "gpt-5.3-codex"})
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: opened(app), "the open repository")
        titles = [c.title for c in app.get_system_commands(app.screen)]
        assert "Model: gpt-5.3-codex" in titles and "Transport: chat" in titles
        assert "Context: drop inventory.py" in titles and "Theme" in titles
        assert "Command: /undo" in titles and "Command: /commit" in titles  # the table
        command = next(c for c in app.get_system_commands(app.screen)
                       if c.title == "Transport: chat")
        command.callback()
        await until(pilot, lambda: "now using transport chat" in notice(app), "the switch")
        assert str(app.main.driver.client.transport) == "chat"
        drop = next(c for c in app.get_system_commands(app.screen)
                    if c.title == "Context: drop inventory.py")
        drop.callback()  # the palette's context commands act as /drop and /add do
        await pilot.pause()
        assert "inventory.py" not in app.main.context
        (repo / "inventory.py").write_text(FILES["inventory.py"] + "# edited\n")
        await until(pilot, lambda: any(c.title == "Context: add inventory.py"
                                       for c in app.get_system_commands(app.screen)),
                    "the edited file offered")
        add = next(c for c in app.get_system_commands(app.screen)
                   if c.title == "Context: add inventory.py")
        add.callback()
        await pilot.pause()
        assert "inventory.py" in app.main.context


async def test_ai_comments_can_be_turned_off(repo: Path, demo_sim: SimProcess) -> None:
    changed: list[set[str]] = []

    def hook(message: Any) -> None:
        if isinstance(message, Driver.FilesChanged):
            changed.append(message.paths)

    app = make_app(repo, demo_sim, prompt="", **{"session.ai_comments": "false"})
    async with app.run_test(size=(120, 40), message_hook=hook) as pilot:
        await until(pilot, lambda: opened(app), "the open repository")
        (repo / "inventory.py").write_text(FILES["inventory.py"] + "# round it AI!\n")
        await until(pilot, lambda: any("inventory.py" in c for c in changed), "the change")
        await pilot.pause()
        assert not app.main.last_prompt and not app.main.driver.running


async def test_keys_are_remapped_from_the_config(repo: Path, demo_sim: SimProcess) -> None:
    (repo / ".spark-pair.toml").write_text('[keys]\nreview.reject_all = "f6"\n'
                                           '"review.accept_all" = "ctrl+y"\n')
    app = make_app(repo, demo_sim)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: all_proposed(app), "every proposal")
        await pilot.press("alt+shift+r")  # no longer bound
        assert len(app.main.query_one("#review").review.undecided()) == 6
        await pilot.press("ctrl+y", "f6")
        await until(pilot, lambda: turn_over(app), "the end of the turn")
        app.main.action_help()
        await until(pilot, lambda: isinstance(app.screen, HelpScreen)
                    and app.screen.query("Static"), "the help screen")
        text = screen_text(app).replace(" ", "")
        assert "ctrl+yreviewacceptevery" in text and "│f6reviewrejecteverything" in text
    assert (repo / "CHANGELOG.md").exists() and (repo / "TODO.txt").exists()


async def test_a_decision_remapped_to_a_letter_is_refused(repo: Path,
                                                          demo_sim: SimProcess) -> None:
    """Typing never decides, remapped or not: `review.accept = "y"` is reported and alt+a
    stays; a y typed is text."""
    (repo / ".spark-pair.toml").write_text('[keys]\n"review.accept" = "y"\n')
    app = make_app(repo, demo_sim, prompt="")
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: "never decides" in notice(app), "the report")
        assert "review.accept" in notice(app) and "hint:" in notice(app)
        app.main.start_turn(PROMPT, list(app.main.context))
        await until(pilot, lambda: all_proposed(app), "every proposal")
        await pilot.press("y")
        assert app.main.query_one(Prompt).text == "y"
        assert len(app.main.query_one("#review").review.undecided()) == 6
        await pilot.press("alt+a")
        assert app.main.query_one("#review").review.entries[0].hunks[0] is Mark.ACCEPTED
        await pilot.press("alt+shift+r")
        await until(pilot, lambda: turn_over(app), "the end of the turn")


async def test_a_decision_remapped_to_a_punctuation_key_is_refused(
        repo: Path, demo_sim: SimProcess) -> None:
    """A key named for the character it types (full_stop, question_mark) is text as a letter
    is: refused with its hint; a sentence with a full stop typed under review is text whole and
    decides nothing (before: `.` accepted every modify and was swallowed)."""
    (repo / ".spark-pair.toml").write_text('[keys]\n"review.accept_all" = "full_stop"\n')
    app = make_app(repo, demo_sim, prompt="")
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: "never decides" in notice(app), "the report")
        assert "review.accept_all" in notice(app) and "hint:" in notice(app)
        # saved while the app runs: refused too, and said under the reload's own line
        await until(pilot, lambda: opened(app), "the app open (its config read)")
        (repo / ".spark-pair.toml").write_text(
            '[keys]\n"review.accept_all" = "full_stop"\n"review.reject" = "f7, question_mark"\n')
        await until(pilot, lambda: "config saved" in notice(app), "the reload")
        assert "review.reject" in notice(app) and "never decides" in notice(app), notice(app)
        app.main.start_turn(PROMPT, list(app.main.context))
        await until(pilot, lambda: all_proposed(app), "every proposal")
        await typed(pilot, "Looks good. And Also? ")
        assert app.main.query_one(Prompt).text == "Looks good. And Also? "
        assert len(app.main.query_one("#review").review.undecided()) == 6
        await pilot.press("alt+shift+r")
        await until(pilot, lambda: turn_over(app), "the end of the turn")


async def test_an_unknown_key_binding_id_is_reported(repo: Path, demo_sim: SimProcess) -> None:
    (repo / ".spark-pair.toml").write_text('[keys]\n"review.acept" = "x"\n')
    app = make_app(repo, demo_sim, prompt="")
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: "review.acept" in notice(app), "the report")
        assert "hint:" in notice(app)


async def test_a_wrong_key_and_a_missing_model_are_shown_with_hints(
        repo: Path, demo_sim: SimProcess) -> None:
    demo_sim.configure(api_key="the-right-key")
    app = make_app(repo, demo_sim, transport="chat")
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.main.last_prompt and turn_over(app), "the failed turn")
        assert "hint:" in notice(app) and "key" in notice(app).lower()
        assert "test-key" not in notice(app)  # the key itself is never shown
        demo_sim.configure(api_key=None)
        await type_line(pilot, app, "/model no-such-model")
        await until(pilot, lambda: "now using model no-such-model" in notice(app), "the switch")
        await type_line(pilot, app, "add a discount")
        await until(pilot, lambda: "no-such-model" in notice(app) and turn_over(app)
                    and "hint:" in notice(app), "the missing model")
        assert app.is_running
    for rel, text in FILES.items():
        assert (repo / rel).read_text() == text


async def test_a_broken_config_is_shown_and_the_app_keeps_running(
        repo: Path, demo_sim: SimProcess) -> None:
    (repo / ".spark-pair.toml").write_text("[session]\ntransport = \"pigeon\"\n")
    app = make_app(repo, demo_sim, prompt="", transport="")
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: "pigeon" in notice(app), "the config error")
        assert "hint:" in notice(app) and ".spark-pair.toml" in notice(app)
        await type_line(pilot, app, "add a discount")
        assert "pigeon" in notice(app) and "/transport auto" in notice(app)
        assert app.main.query_one(Prompt).text == "add a discount"  # kept for enter, later
        await pilot.press("ctrl+u")
        await type_line(pilot, app, "/transport auto")  # (the flag wins over the file)
        await until(pilot, lambda: "transport auto: spark-pair is open now" in notice(app),
                    "the reopening")
        assert app.main.driver.session is not None and app.is_running
