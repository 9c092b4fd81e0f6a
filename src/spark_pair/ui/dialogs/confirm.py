"""A yes/no question (alt+y / alt+n) over the current screen (delete or rename, quit with
undecided work)."""

from __future__ import annotations

from textual import events
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label

from .. import bindings
from ..typed import enter_hint, pass_typed

ANSWERS = "alt+y yes, alt+n no (escape: no)"


class ConfirmScreen(ModalScreen[bool]):
    """Answers True for alt+y, False for alt+n or escape."""

    BINDINGS = bindings.CONFIRM

    DEFAULT_CSS = """
    ConfirmScreen {
        align: center middle;
    }
    ConfirmScreen > Vertical {
        width: auto;
        max-width: 90%;
        height: auto;
        border: thick $warning;
        background: $surface;
        padding: 1 2;
    }
    ConfirmScreen Label {
        width: auto;
        max-width: 100%;  /* a long question wraps instead of being cut */
    }
    """

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(self.question, markup=False)  # it names paths: literal
            yield Label("[b]alt+y[/b] yes   [b]alt+n[/b] no   (what you type goes to the prompt)")

    def on_paste(self, event: events.Paste) -> None:
        pass_typed(self, event)  # a paste goes to the prompt whole

    def on_key(self, event: events.Key) -> None:
        if not enter_hint(self, event, ANSWERS):  # (enter answers nothing: it says which do)
            pass_typed(self, event)  # a sentence typed now goes to the prompt: it answers nothing

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)
