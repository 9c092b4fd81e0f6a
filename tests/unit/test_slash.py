"""The slash commands are one table: the router, completion, the help screen and the
unknown-command hint all follow it (a command added to one and not the others fails here)."""

from __future__ import annotations

from rich.console import Console

from spark_pair.ui import commands, sessions
from spark_pair.ui.screens.help import help_text
from spark_pair.ui.slash import BY_NAME, SLASH, completions, hint
from spark_pair.ui.widgets.prompt import SlashSuggester


def test_the_router_has_a_handler_for_each_command_and_no_other() -> None:
    assert set(commands.HANDLERS) == {s.name for s in SLASH}
    assert set(sessions.COMMANDS) <= set(BY_NAME)
    assert len(BY_NAME) == len(SLASH)  # no name twice


def test_completion_offers_each_command_from_its_first_letters() -> None:
    suggester = SlashSuggester(lambda: [], lambda: [], lambda: [])
    for s in SLASH:
        offered = suggester.suggest(s.name[:-1])  # all but its last letter
        assert offered is not None and offered in BY_NAME and offered.startswith(s.name[:-1])
    # a command that takes an argument completes with a space after it
    assert all(c.endswith(" ") == bool(BY_NAME[c.rstrip()].arg) for c in completions())


def test_the_help_screen_and_the_hint_name_every_command_with_its_argument() -> None:
    console = Console(width=200, record=True, color_system=None)
    console.print(help_text())
    shown = console.export_text()
    for s in SLASH:
        assert s.usage in shown and s.help.split(" (")[0][:40] in " ".join(shown.split())
        assert s.usage in hint()
