"""A y/n question over the current screen (delete or rename, quit with undecided work)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label

from .. import bindings


class ConfirmScreen(ModalScreen[bool]):
    """Answers True for y, False for n or escape."""

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
            yield Label("[b]y[/b] yes   [b]n[/b] no")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)
