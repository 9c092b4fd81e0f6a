"""`?`: every key of the app and the slash commands."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

KEYS = [
    ("enter", "prompt", "send the prompt, or run a slash command"),
    ("escape", "while streaming", "stop the stream (what arrived stays; nothing is written)"),
    ("a / r", "review", "accept / reject the focused hunk (or create), then the next one"),
    ("A", "review", "accept every undecided modify and create (never a delete or rename)"),
    ("R", "review", "reject everything still undecided; accepted hunks stay accepted"),
    ("d then y", "review", "accept the focused delete or rename (r rejects it)"),
    ("j k / n p", "review", "next / previous hunk; next / previous file"),
    ("space", "files", "put the file into the context or take it out"),
    ("tab", "anywhere", "move between prompt, review and files"),
    ("ctrl+r", "anywhere", "regenerate this turn"),
    ("ctrl+e", "anywhere", "resend this turn to the stronger model"),
    ("ctrl+p", "anywhere", "command palette: model, transport, theme, context files"),
    ("ctrl+q", "anywhere", "quit (asks when operations are undecided)"),
    ("up / down", "prompt", "earlier / later prompts"),
]
COMMANDS = [
    ("/undo", "restore the files of the last applied turn"),
    ("/model NAME", "talk to another model"),
    ("/transport NAME", "auto, ws, responses or chat"),
    ("/add PATH", "put a file into the context"),
    ("/drop PATH", "take a file out of the context"),
    ("/clear", "clear the screen and the context set"),
    ("/help", "this screen"),
    ("/quit", "quit"),
]


def help_text() -> str:
    width = max(len(k) for k, _, _ in KEYS)
    places = max(len(w) for _, w, _ in KEYS)
    lines = ["[b]Keys[/b]", ""]
    lines += [f"  [b]{k:<{width}}[/b]  [dim]{where:<{places}}[/dim]  {what}"
              for k, where, what in KEYS]
    lines += ["", "[b]Slash commands[/b] (type / in the prompt; → completes)", ""]
    cwidth = max(len(c) for c, _ in COMMANDS)
    lines += [f"  [b]{c:<{cwidth}}[/b]  {what}" for c, what in COMMANDS]
    lines += ["", "An AI! comment saved in a file starts a turn about it.",
              "", "escape or ? closes this screen"]
    return "\n".join(lines)


class HelpScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("escape", "close", "close", id="help.close"),
        Binding("question_mark", "close", "close", id="help.close_q", show=False),
        Binding("q", "close", "close", id="help.close_q2", show=False),
    ]

    DEFAULT_CSS = """
    HelpScreen {
        align: center middle;
    }
    HelpScreen > VerticalScroll {
        width: 100%;
        max-width: 110;
        height: auto;
        max-height: 100%;
        border: round $accent;
        background: $surface;
        padding: 0 1;
    }
    HelpScreen Static {
        width: 100%;
    }
    """

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(help_text(), markup=True)

    def action_close(self) -> None:
        self.dismiss(None)
