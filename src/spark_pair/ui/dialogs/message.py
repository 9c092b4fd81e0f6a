"""The commit message over the current screen, to edit before the commit is made."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, TextArea

from .. import bindings


class MessageScreen(ModalScreen[str | None]):
    """Answers the edited message on ctrl+s, None on escape (nothing is committed)."""

    BINDINGS = bindings.MESSAGE

    DEFAULT_CSS = """
    MessageScreen {
        align: center middle;
    }
    MessageScreen > Vertical {
        width: 90%;
        max-width: 100;
        height: auto;
        max-height: 90%;
        border: thick $primary;
        background: $surface;
        padding: 0 1;
    }
    MessageScreen Label {
        width: 100%;  /* a long title wraps instead of being cut */
    }
    MessageScreen TextArea {
        height: 10;
    }
    MessageScreen #message-hint {
        color: $text-muted;
    }
    """

    def __init__(self, title: str, message: str, hint: str = "") -> None:
        super().__init__()
        self.title_text, self.message, self.hint = title, message, hint
        self.area = TextArea(message, id="message", soft_wrap=True, show_line_numbers=False)

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(self.title_text, markup=False)  # it names paths: literal
            if self.hint:
                yield Label(self.hint, id="message-hint", markup=False)
            yield self.area
            yield Label("[b]ctrl+s[/b] commit   [b]escape[/b] cancel (nothing is committed)")

    def on_mount(self) -> None:
        if not self.area.is_attached:  # dismissed before it mounted: nothing to focus
            return
        self.area.focus()
        self.area.move_cursor((0, len(self.message.splitlines()[0]) if self.message else 0))

    def action_commit(self) -> None:
        text = self.area.text
        self.dismiss(text if text.strip() else None)

    def action_cancel(self) -> None:
        self.dismiss(None)
