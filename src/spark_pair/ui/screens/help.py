"""f1 (or /help, or the palette): every key of the app and the slash commands."""

from __future__ import annotations

from collections.abc import Mapping

from rich.console import Group
from rich.padding import Padding
from rich.table import Table
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.keys import key_to_character
from textual.screen import ModalScreen
from textual.widgets import Static

from .. import bindings
from ..slash import SLASH
from ..typed import pass_typed

# (binding ids whose keys are shown, or a label), where, what
KEYS: list[tuple[tuple[str, ...] | str, str, str]] = [
    (("prompt.send",), "prompt", "send the prompt, or run a slash command"),
    (("prompt.send",), "while streaming",
     "steer: the prompt goes to the running turn as a correction (nothing is written by it)"),
    (("prompt.send",), "under review",
     "the prompt waits: enter says so and the text stays; once the turn is decided enter "
     "sends it (tab queues it instead: it starts by itself once the turn ends)"),
    (("prompt.queue",), "while a turn runs",
     "queue the prompt as the next turn (it starts when this one ends; elsewhere tab moves "
     "to the next pane)"),
    (("prompt.clear_queue",), "empty prompt",
     "clear the queued turns (asks first; while a reply streams escape stops it)"),
    (("app.stop",), "while streaming", "stop the stream (what arrived stays; nothing is "
     "written); between fix rounds: stop the loop"),
    (("review.accept", "review.reject"), "review",
     "accept / reject the focused hunk (or create), then the next one"),
    (("review.accept_all",), "review",
     "accept every undecided modify and create (never a delete or rename)"),
    (("review.reject_all",), "review",
     "reject everything still undecided; accepted hunks stay accepted"),
    (("review.confirm",), "review",
     "then alt+y: accept the focused delete or rename (alt+r rejects it; offered while one "
     "is undecided)"),
    (("review.reason",), "review",
     "reject the focused hunk or operation with a reason the model hears"),
    (("review.amend",), "review",
     "edit the focused hunk's result (or a created file) in $VISUAL/$EDITOR"),
    (("review.try",), "review",
     "accept like alt+A (a delete or rename still waits for alt+d / alt+r), apply, run "
     "[review] check; then keep (alt+y) or roll back (alt+n); a "
     "failing check stays on screen and alt+y sends its output as a fix round "
     "([review] fix_rounds)"),
    (("review.pager",), "review", "open the turn's diff in [review] pager ($PAGER, less -R)"),
    (("review.next", "review.previous"), "review", "next / previous hunk"),
    (("review.next_file", "review.previous_file"), "review",
     "next / previous file (alt+p is the files pane's pin while that pane has the focus)"),
    (("review.down", "review.up"), "review", "the cursor down / up"),
    (("review.page_down", "review.page_up"), "review", "the cursor a page down / up"),
    (("review.first", "review.last"), "review", "the cursor to the first / last row"),
    (("files.toggle",), "files",
     "drop a file chosen for the prompt (or bring it back); put a file into the context or "
     "take it out"),
    (("files.pin",), "files", "pin the file: it goes with every prompt"),
    (("app.next_pane", "app.previous_pane"), "anywhere",
     "next / previous pane: prompt, review, files, live diff (its arrows scroll it, "
     "sideways too; → / ← at a row's end / start: it goes on past the edge)"),
    (("app.regenerate",), "anywhere", "regenerate this turn"),
    (("app.escalate",), "anywhere", "resend this turn to the stronger model"),
    ("ctrl+p", "anywhere", "command palette: model, transport, theme, context files"),
    (("app.quit",), "anywhere",
     "quit (asks when operations are undecided or accepted and not yet written, a tried "
     "turn waits for keep / roll back, or the prompt holds unsent text: quitting prints it)"),
    (("prompt.newline",), "prompt",
     "a new line (a paste keeps its lines; enter sends them all)"),
    (("prompt.clear",), "prompt", "clear the whole prompt (every line)"),
    (("prompt.history_back", "prompt.history_forward"), "prompt",
     "earlier / later prompts (from the first / last line)"),
    (("app.help",), "anywhere",
     "this screen, over a question or the check too (? is text: it is typed into the prompt "
     "like any letter)"),
    (("confirm.yes", "confirm.no", "confirm.cancel"), "a question",
     "yes / no / no (enter answers nothing: it says which keys do)"),
    ("alt+y / alt+n / alt+f", "the check",
     "keep the turn (in a fix loop: and send the output on) / roll it back (at a fix loop's "
     "end: the whole task) / send output that points at the environment (a module or command "
     "not found) to the model anyway"),
    (("help.close", "app.help", "help.close_f1"), "this screen",
     "close it (letters typed here go to the prompt)"),
]
COMMANDS = [(s.usage, s.help) for s in SLASH]  # the one table of slash commands


def help_text(keys: Mapping[str, str] | None = None) -> Group:
    """The help, with the keys in effect (`keys`: binding id -> key, after the key map): tables
    whose last column wraps under itself on a narrow terminal."""
    if keys is None:
        keys = bindings.default_keys()
    table = Table.grid(padding=(0, 2), expand=True)
    table.add_column(style="bold", no_wrap=True)
    table.add_column(style="dim", no_wrap=True)
    table.add_column(ratio=1)
    for k, where, what in KEYS:
        shown = k if isinstance(k, str) else " / ".join(dict.fromkeys(
            _key(keys.get(i, i)) for i in k))  # (escape / f1, f1 twice shown once)
        row = Text(what)  # literal: [review] is not markup
        if not isinstance(k, str):  # the ids a [keys] table remaps, after the action
            row.append("  " + " ".join(k), style="dim italic")
        table.add_row(Text(shown), where, row)
    commands = Table.grid(padding=(0, 2), expand=True)
    commands.add_column(style="bold", no_wrap=True)
    commands.add_column(ratio=1)
    for command, what in COMMANDS:
        commands.add_row(Text(command), Text(what))
    return Group(Text.assemble(("Keys", "bold"), " (each action ends with its id, dim: remap "
                               "it in the config, e.g. [keys] \"review.accept\" = \"f5\")\n"),
                 Padding(table, (0, 0, 0, 2)),
                 Text.assemble("\n", ("Slash commands", "bold"),
                               " (alone in the prompt, one line; → completes)\n"),
                 Padding(commands, (0, 0, 0, 2)),
                 Text("\nTyping never decides: letters always go to the prompt, whatever has "
                      "the focus and whatever the turn is doing. Decisions, questions and the "
                      "review's moves are alt chords (alt+A is alt+shift+a; on macOS let the "
                      "Option key send Esc+/Meta), or a click on the footer. Under questions "
                      "stacked on questions too; the footer shows the keys of the one on top.\n"
                      "\nAn AI! comment saved in a file starts a turn about it.\n"
                      "A hunk whose lines match nowhere in its file goes back to the model "
                      "once, with the file's real lines; the live diff shows what comes back "
                      "([review] repair).\n"
                      "The model may ask once for a file or a definition it lacks (NEED:) "
                      "before its diff; the live diff says what went, the files pane lists it "
                      "'asked by the model' ([context] second_look).\n\n"
                      f"{closing(keys)} closes this screen; what you type goes to the prompt"))


def _key(key: str) -> str:
    """A key as a person types it: ? for question_mark (several keys: a, b)."""
    out = []
    for k in key.split(","):
        if k.startswith("alt+"):
            out.append(bindings.key_label(k))
            continue
        ch = key_to_character(k) if len(k) > 1 else None
        out.append(ch if ch and ch.isprintable() and not ch.isspace() else _SHORT.get(k, k))
    return ", ".join(out)


_SHORT = {"pagedown": "pgdn", "pageup": "pgup"}  # the key column stays narrow


def closing(keys: Mapping[str, str] | None) -> str:
    """The keys in effect that close this screen: `escape or f1` (the key that opens it closes
    it: remapped, it is named)."""
    keys = keys or bindings.default_keys()
    return " or ".join(dict.fromkeys(_key(keys[i]) for i in ("help.close", "app.help")))


class HelpScreen(ModalScreen[None]):
    BINDINGS = bindings.HELP

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
        border-subtitle-align: right;
    }
    HelpScreen Static {
        width: 100%;
    }
    """

    def __init__(self, keys: Mapping[str, str] | None = None) -> None:
        super().__init__()
        self.keys = keys

    def compose(self) -> ComposeResult:
        with VerticalScroll() as scroll:
            # in view on a small screen
            scroll.border_subtitle = f"{closing(self.keys)} closes · ↑ ↓ scroll"
            yield Static(help_text(self.keys))

    def on_key(self, event: events.Key) -> None:
        pass_typed(self, event)  # letters (q and ? too) go to the prompt; escape / f1 close

    def on_paste(self, event: events.Paste) -> None:
        pass_typed(self, event)

    def action_close(self) -> None:
        self.dismiss(None)
