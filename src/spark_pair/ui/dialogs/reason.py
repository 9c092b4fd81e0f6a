"""A one-line input over the current screen: why a hunk or an operation is rejected."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label

from .. import bindings

MAX_REASON = 300  # characters; the model gets it verbatim (whitespace folded)


class ReasonScreen(ModalScreen[str | None]):
    """Answers the typed reason on enter (may be empty), None on escape."""

    BINDINGS = bindings.REASON

    DEFAULT_CSS = """
    ReasonScreen {
        align: center middle;
    }
    ReasonScreen > Vertical {
        width: 80%;
        height: auto;
        border: thick $warning;
        background: $surface;
        padding: 0 1;
    }
    ReasonScreen Label {
        width: 100%;  /* a long title wraps instead of being cut */
    }
    ReasonScreen #reason-hint {
        color: $text-muted;
    }
    """

    def __init__(self, what: str) -> None:
        super().__init__()
        self.what = what

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(f"Reject {self.what}: why?", markup=False)  # a path: literal
            yield Label("the model hears it with the next turn", id="reason-hint")
            yield Input(placeholder="reason (enter rejects, escape cancels)",
                        max_length=MAX_REASON, id="reason")
            yield Label("[b]enter[/b] reject   [b]escape[/b] cancel")

    @on(Input.Submitted, "#reason")
    def _submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)
