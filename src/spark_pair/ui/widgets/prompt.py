"""The prompt: multi-line text (a paste keeps every line; ctrl+j or shift+enter adds a line),
enter sends all of it, the sent prompts come back on up/down from the first or last line,
slash commands completed as you type (→ takes the suggestion). It grows up to `MAX_ROWS` lines;
past that its border says how many lines it holds.

Chords with alt are never text here: they are the review's decisions (the screen's bindings),
so a letter always types itself and a chord never does."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from textual import events
from textual.message import Message
from textual.widgets import TextArea

from ...base.transport import TRANSPORT_CHOICES
from .. import bindings
from ..slash import completions
from ..textual_private import run_binding
from ..typed import NEW_LINE, without_last_break

SLASH_COMMANDS = completions()  # from the one table of slash commands
MAX_ROWS = 4  # lines shown before the prompt scrolls


def lines_held(text: str) -> int:
    """The lines of a draft, as the prompt's border and the quit question count them: a line
    break at the end (or blank lines) starts no line."""
    return text.rstrip().count("\n") + 1


class SlashSuggester:
    """Completes slash commands and their argument (model, transport, file path)."""

    def __init__(self, models: Callable[[], Sequence[str]], files: Callable[[], Sequence[str]],
                 context: Callable[[], Sequence[str]]) -> None:
        self.models = models
        self.files = files
        self.context = context

    def suggest(self, value: str) -> str | None:
        """The whole completed value for `value` (None: nothing to suggest)."""
        if not value.startswith("/") or "\n" in value:
            return None
        command, space, arg = value.partition(" ")
        if not space:
            return next((c.rstrip() for c in SLASH_COMMANDS if c.startswith(value)
                         and c.rstrip() != value), None)
        choices: Sequence[str] = {
            "/model": self.models, "/transport": lambda: TRANSPORT_CHOICES,
            "/add": self.files, "/drop": self.context,
        }.get(command, lambda: ())()
        hit = next((c for c in choices if c.startswith(arg) and c != arg), None)
        return f"{command} {hit}" if hit else None


class Prompt(TextArea):
    """Enter sends; ctrl+j (or shift+enter) adds a line; up/down walk the sent
    prompts from the first / last line."""

    BINDINGS = bindings.PROMPT

    DEFAULT_CSS = f"""
    Prompt {{
        height: auto;
        min-height: 3;
        max-height: {MAX_ROWS + 2};
        border: round $secondary;
        border-subtitle-align: right;
        padding: 0 1;
        background: $surface;
        & > .text-area--cursor-line {{ background: $surface; }}
    }}
    Prompt:focus {{
        border: heavy $accent;  /* (heavy: the focus shows without colour too) */
        background-tint: $foreground 0%;
    }}
    """

    class Queue(Message):
        """tab while a turn runs: `text` is to be the next turn."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    class ClearQueue(Message):
        """escape on the empty prompt while turns are queued."""

    def __init__(self, send: Callable[[str], None], *, placeholder: str = "",
                 suggester: SlashSuggester | None = None, **kwargs: object) -> None:
        super().__init__(placeholder=placeholder, soft_wrap=True, show_line_numbers=False,
                         tab_behavior="focus", highlight_cursor_line=False,
                         **kwargs)  # type: ignore[arg-type]
        self.send = send
        self.suggester = suggester
        self.turn_running = False  # set by the screen: tab queues while a turn runs
        self.queued = 0  # set by the screen: turns waiting (escape on an empty prompt clears
        # them while no reply streams; while one does, escape stops it)
        self.sent: list[str] = []
        self._pos = 0  # len(sent): the line being written
        self._draft = ""
        self._files_note = ""
        self._enter_shown = "send"  # what the footer last named enter for

    # ---- the text ------------------------------------------------------------------------

    @property
    def value(self) -> str:
        return self.text

    @value.setter
    def value(self, text: str) -> None:
        self.load_text(text)
        self.move_cursor(self.document.end)

    def on_paste(self, event: events.Paste) -> None:
        """A paste that ends in a line break (text copied with its last line's end) goes in
        without it: it starts no empty line for enter to send."""
        text = without_last_break(event.text)
        if text == event.text or self.read_only:
            return  # (the text area's own paste)
        event.prevent_default()
        self.move_cursor(self.replace(text, *self.selection).end_location)
        self.focus()

    def insert_typed(self, text: str) -> None:
        """Text typed elsewhere (a pane that had the focus): at the end, as if typed here."""
        self.move_cursor(self.document.end)
        self.move_cursor(self.insert(text).end_location)

    def give_back(self, text: str) -> None:
        """The instruction of a turn that failed before anything came, when nothing was typed
        since."""
        if not self.value.strip():
            self.value = text
            self.move_cursor(self.document.end)

    def edit_typed(self, action: str) -> None:
        """An editing key typed under a question (`typed.EDITS`: '' for none), at the end."""
        if action == "delete_left":
            self.action_delete_left()
        elif action == "clear_prompt":
            self.action_clear_prompt()

    def update_suggestion(self) -> None:
        full = self.suggester.suggest(self.text) if self.suggester is not None else None
        at_end = self.cursor_location == self.document.end
        self.suggestion = full[len(self.text):] if full and at_end else ""

    def _on_text_area_changed(self) -> None:
        self._subtitle()
        if self.enter_does() != self._enter_shown:  # the footer names what enter does
            self.refresh_bindings()

    def enter_does(self) -> str:
        """What enter does now: "run" a slash command, "steer" the streaming turn, send
        "later" (a turn is under review: it says why and the text stays), or "send"."""
        text = self.text.strip()
        if text.startswith("/") and "\n" not in text:
            return "run"
        if self.turn_running:
            return "steer" if getattr(self.screen, "streaming", False) else "later"
        return "send"

    @property
    def files_note(self) -> str:
        return self._files_note

    @files_note.setter
    def files_note(self, note: str) -> None:
        """What the lower border says about the chosen files (beside the lines held)."""
        self._files_note = note
        self._subtitle()

    def _subtitle(self) -> None:
        lines = self.document.line_count  # lines_held, without reading the whole text
        while lines > 1 and not self.document.get_line(lines - 1).strip():
            lines -= 1
        self.border_subtitle = " · ".join(filter(None, (
            f"{lines} lines (^j: new line)" if lines > 1 else "", self._files_note)))

    def check_consume_key(self, key: str, character: str | None = None) -> bool:
        """A chord (alt, ctrl) is never text (? is: f1 opens the help)."""
        if key.startswith(("alt+", "ctrl+")):
            return False
        return super().check_consume_key(key, character)

    async def _on_key(self, event: events.Key) -> None:
        """An alt chord never types its letter (alt+a with nothing to decide does nothing: the
        chords are priority bindings, taken before this); enter sends, here, in turn with the
        keys typed before it, and so do the prompt's other keys."""
        if event.key.startswith("alt+"):
            event.prevent_default()
        elif event.key == "enter":
            event.stop()
            event.prevent_default()
            await self.action_submit()
        elif event.is_printable:
            pass  # a letter (the text area types it; a binding never takes what it types)
        elif (bound := self.screen.active_bindings.get(event.key)) is not None \
                and bound.enabled:
            # a key with a binding (new line, clear, recall, tab to the next pane) acts in
            # turn with the letters, where the focus is at its turn (Textual ran it once the
            # key had gone back up to the app, after the keys behind it)
            event.stop()
            event.prevent_default()
            await run_binding(self.app, event.key)
        elif event.key in NEW_LINE:  # typed before a key ahead of it moved the focus on:
            event.stop()  # still text for the prompt
            event.prevent_default()
            self.action_newline()

    # ---- keys ----------------------------------------------------------------------------

    async def action_submit(self, does: str = "send") -> None:
        self.send(self.text)

    def action_clear_prompt(self) -> None:
        self.clear()  # every line, not only the cursor's

    def action_newline(self) -> None:
        self.move_cursor(self.insert("\n").end_location)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """tab queues only while a turn runs and the prompt holds text, escape clears the queue
        only from an empty prompt while no reply streams: otherwise the key goes on to the
        screen (next pane, stop)."""
        if action == "submit":  # one of enter's bindings: the one naming what it does
            self._enter_shown = self.enter_does()
            return (parameters[0] if parameters else "send") == self._enter_shown
        if action == "queue":
            return self.turn_running and bool(self.text.strip())
        if action == "clear_queue":
            return self.queued > 0 and not self.text and not getattr(self.screen, "streaming",
                                                                     False)
        return super().check_action(action, parameters)

    def action_queue(self) -> None:
        self.post_message(self.Queue(self.text))

    def action_clear_queue(self) -> None:
        self.post_message(self.ClearQueue())

    def remember(self, text: str) -> None:
        if text and (not self.sent or self.sent[-1] != text):
            self.sent.append(text)
        self._pos = len(self.sent)
        self._draft = ""

    def action_recall(self, step: int) -> None:
        """up on the first line (down on the last): the earlier (later) prompt; elsewhere the
        cursor moves a line."""
        row = self.cursor_location[0]
        if (step < 0 and row > 0) or (step > 0 and row < self.document.line_count - 1):
            self.action_cursor_up() if step < 0 else self.action_cursor_down()
            return
        if not self.sent:
            return
        if self._pos == len(self.sent):
            self._draft = self.text
        pos = max(0, min(len(self.sent), self._pos + step))
        if pos == self._pos:
            return
        self._pos = pos
        self.value = self.sent[pos] if pos < len(self.sent) else self._draft
