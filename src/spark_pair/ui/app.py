"""The Textual app: `spark-pair` in a repository (and `spark-pair demo`)."""

from __future__ import annotations

from collections.abc import Iterable

from textual import events
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.markup import escape
from textual.screen import Screen

from ..base.transport import TRANSPORT_CHOICES
from . import bindings, commands
from .screens.help import HelpScreen
from .screens.main import Launch, MainScreen
from .slash import SLASH
from .textual_private import run_binding
from .themes import diff_variable_defaults, install_themes
from .typed import focus_prompt, pane_has_focus, typed_text
from .widgets.files import FilesPane


class SparkPairApp(App[None]):
    TITLE = "spark-pair"
    CSS_PATH = "screens/main.tcss"  # the main screen's (a default screen loads no CSS_PATH)
    ENABLE_COMMAND_PALETTE = True
    BINDINGS = bindings.APP

    def __init__(self, launch: Launch) -> None:
        super().__init__()
        self.launch = launch
        self.main = MainScreen(launch)

    async def on_event(self, event: events.Event) -> None:
        """Keys read while a pane has the focus act in the order typed: text goes to the
        prompt (which takes the focus first), another key's binding runs now, for that pane
        (Textual would run it once the key came back up from the pane: later, for whatever
        had the focus then)."""
        if self.screen_stack and pane_has_focus(self.screen, event):
            if isinstance(event, events.Key) and typed_text(event) is None:
                await run_binding(self.screen.app, event.key)
                return
            focus_prompt(self.screen)
        await super().on_event(event)

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return diff_variable_defaults(self.current_theme)

    def get_key_display(self, binding: Binding) -> str:
        """A chord shows as alt+a / alt+A (the key in effect: a binding comes remapped)."""
        key = binding.key.split(",")[0]
        if key.startswith("alt+") and not binding.key_display:
            return bindings.key_label(key)
        return super().get_key_display(binding)

    def get_default_screen(self) -> Screen[None]:
        return self.main

    def on_mount(self) -> None:
        install_themes(self)

    def action_help(self) -> None:
        """f1 anywhere (app.help): the keys screen over whatever is up; on it, it closes it."""
        if isinstance(self.screen, HelpScreen):
            self.screen.dismiss(None)
        else:
            self.main.action_help()

    async def action_quit(self) -> None:
        self.main.confirm_quit()  # (asks when something would be lost or left half done)

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        main = self.main
        for model in main.models():
            yield SystemCommand(f"Model: {escape(model)}", "Send the next turns to this model",
                                lambda m=model: main.run_command(f"/model {m}"))
        for name in TRANSPORT_CHOICES:
            yield SystemCommand(f"Transport: {name}", "Reconnect with this transport",
                                lambda n=name: main.run_command(f"/transport {n}"))
        for command in SLASH:  # the commands that take nothing, as the prompt runs them
            if not command.arg and command.name not in ("/help", "/quit"):
                yield SystemCommand(f"Command: {command.name}", command.help,
                                    lambda n=command.name: main.run_command(n))
        for rel in list(main.context):
            yield SystemCommand(f"Context: drop {escape(rel)}", "Take the file out of the context",
                                lambda r=rel: commands.drop_context(main, r))
        for c in main.chooser.chosen:
            if c.path in main.context:
                continue
            if c.path in main.chooser.dropped:
                yield SystemCommand(f"Context: send {escape(c.path)} again",
                                    f"Chosen for the prompt ({escape(c.reason)}), dropped",
                                    lambda r=c.path: main.toggle_chosen(r))
            else:
                yield SystemCommand(f"Context: drop {escape(c.path)}",
                                    f"Chosen for the prompt ({escape(c.reason)}): don't send it",
                                    lambda r=c.path: main.toggle_chosen(r))
            yield SystemCommand(f"Context: pin {escape(c.path)}",
                                "Keep the file in the context for every prompt",
                                lambda r=c.path: commands.add_context(main, r))
        changed = main.query_one(FilesPane).changed
        for rel in sorted(changed - main.context.keys())[:50]:
            yield SystemCommand(f"Context: add {escape(rel)}", "Put the file into the context",
                                lambda r=rel: commands.add_context(main, r))
