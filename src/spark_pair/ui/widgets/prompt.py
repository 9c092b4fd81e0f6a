"""The prompt: one line, history on up/down, slash commands completed as you type (→ takes
the suggestion)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from textual.message import Message
from textual.suggester import Suggester
from textual.widgets import Input

from ...base.transport import TRANSPORT_CHOICES
from .. import bindings

SLASH_COMMANDS = ("/undo", "/redo", "/model ", "/transport ", "/add ", "/drop ", "/clear", "/help",
                  "/quit", "/sessions", "/rename ", "/fork", "/commit")


class SlashSuggester(Suggester):
    """Completes slash commands and their argument (model, transport, file path)."""

    def __init__(self, models: Callable[[], Sequence[str]], files: Callable[[], Sequence[str]],
                 context: Callable[[], Sequence[str]]) -> None:
        super().__init__(use_cache=False, case_sensitive=True)
        self.models = models
        self.files = files
        self.context = context

    async def get_suggestion(self, value: str) -> str | None:
        if not value.startswith("/"):
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


class Prompt(Input):
    """Enter sends; up/down walk the history of sent prompts."""

    BINDINGS = bindings.PROMPT

    DEFAULT_CSS = """
    Prompt {
        height: 3;
        border: round $secondary;
    }
    Prompt:focus {
        border: round $accent;
    }
    """

    class Queue(Message):
        """tab while a turn runs: `text` is to be the next turn."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    class ClearQueue(Message):
        """escape on the empty prompt while turns are queued."""

    def __init__(self, send: Callable[[str], None], **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.send = send
        self.turn_running = False  # set by the screen: tab queues while a turn runs
        self.queued = 0  # set by the screen: turns waiting (escape on an empty prompt clears
        # them while no reply streams; while one does, escape stops it)
        self.history: list[str] = []
        self._pos = 0  # len(history): the line being written
        self._draft = ""

    def check_consume_key(self, key: str, character: str | None = None) -> bool:
        """An empty prompt leaves ? to the screen (the help); one with text types it."""
        if character == "?" and not self.value:
            return False
        return super().check_consume_key(key, character)

    async def action_submit(self) -> None:
        self.send(self.value)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """tab queues only while a turn runs and the prompt holds text, escape clears the queue
        only from an empty prompt while no reply streams: otherwise the key goes on to the
        screen (next pane, stop)."""
        if action == "queue":
            return self.turn_running and bool(self.value.strip())
        if action == "clear_queue":
            return self.queued > 0 and not self.value and not getattr(self.screen, "streaming",
                                                                      False)
        return super().check_action(action, parameters)

    def action_queue(self) -> None:
        self.post_message(self.Queue(self.value))

    def action_clear_queue(self) -> None:
        self.post_message(self.ClearQueue())

    def remember(self, text: str) -> None:
        if text and (not self.history or self.history[-1] != text):
            self.history.append(text)
        self._pos = len(self.history)
        self._draft = ""

    def action_history(self, step: int) -> None:
        if not self.history:
            return
        if self._pos == len(self.history):
            self._draft = self.value
        pos = max(0, min(len(self.history), self._pos + step))
        if pos == self._pos:
            return
        self._pos = pos
        self.value = self.history[pos] if pos < len(self.history) else self._draft
        self.cursor_position = len(self.value)
