"""Typing never decides: a key that types text, wherever it lands (a pane, a question), goes on
to the prompt; only chords (alt, ctrl) and keys that are never text decide."""

from __future__ import annotations

from textual import events
from textual.app import App
from textual.message import Message
from textual.notifications import Notification, Notify
from textual.screen import ModalScreen, Screen
from textual.widget import Widget

NEW_LINE = ("ctrl+j", "shift+enter")  # the prompt's new line (a key the prompt types)


def typed_text(event: events.Key) -> str | None:
    """The text a key types: a printable character without alt or ctrl, or the new line
    (None: a key or a chord, never text)."""
    if event.key in NEW_LINE:
        return "\n"
    if event.character and event.is_printable and not event.key.startswith(("alt+", "ctrl+")):
        return event.character
    return None


class Typed(Message):
    """Text typed while a pane other than the prompt had the focus: it goes to the prompt
    (at its end); or `edit`, an editing key's prompt action (under a question)."""

    def __init__(self, text: str, edit: str = "") -> None:
        super().__init__()
        self.text = text
        self.edit = edit


# the editing keys a question hands on to the prompt under it (text goes to its end: these
# mend it there), when the question has no use for them
EDITS = {"backspace": "delete_left", "ctrl+u": "clear_prompt"}


def main_screen(app: App[object]) -> Screen[object] | None:
    """The screen the prompt is on: the first that is not a question or a pane over it (the
    default screen), whatever is stacked above it."""
    return next((s for s in app.screen_stack if not isinstance(s, ModalScreen)), None)


def repaint_over(screen: Screen[object]) -> None:
    """The screens stacked over `screen` repaint what shows of it through them (Textual
    repaints the top one only: a prompt under two questions kept its old text on screen)."""
    for above in screen.app.screen_stack:
        if above is not screen and isinstance(above, ModalScreen):
            above.refresh()


def pass_typed(node: Widget | Screen[object], event: events.Key | events.Paste) -> None:
    """A pane or a question got a key or a paste: text goes on to the prompt (on the main
    screen, however many questions are stacked over it), so a sentence typed or pasted at any
    moment lands there, whole, and decides nothing."""
    text = (without_last_break(event.text) if isinstance(event, events.Paste)
            else typed_text(event))
    edit = ""
    if not text and isinstance(node, Screen) and isinstance(event, events.Key):
        edit = EDITS.get(event.key, "") if event.key not in node.active_bindings else ""
    if not text and not edit:
        return
    event.stop()
    event.prevent_default()
    target = node if not isinstance(node, Screen) else main_screen(node.app)
    if target is not None:
        target.post_message(Typed(text or "", edit))


def pane_has_focus(screen: Screen[object], event: events.Event) -> bool:
    """A key or a paste just read, while a pane of the main screen (`PASSES_TYPED`) has the
    focus."""
    return (isinstance(event, (events.Key, events.Paste)) and not event.is_forwarded
            and not isinstance(screen, ModalScreen)
            and getattr(screen.focused, "PASSES_TYPED", False))


def focus_prompt(screen: Screen[object]) -> None:
    """The prompt takes the focus now, before the app hands on text typed on a pane, so this
    key and the next reach it in the order typed (a pane hands text on as a message: keys
    typed fast after it went straight to the prompt and could land first)."""
    prompt = next(iter(screen.query("#prompt")), None)
    if prompt is not None and prompt.focusable:
        screen.set_focus(prompt)


def enter_hint(node: Widget | Screen[object], event: events.Key,
               keys: str) -> Notification | None:
    """enter in a question that enter does not answer: say which keys do (the toast that says
    it, to withdraw once those keys change; None: it was not enter)."""
    if event.key != "enter":
        return None
    event.stop()
    event.prevent_default()
    hint = Notification(f"enter answers nothing here: {keys}", severity="warning", timeout=4,
                        markup=False)
    node.app.post_message(Notify(hint))
    return hint


def without_last_break(text: str) -> str:
    """A pasted text without the line break it ends in (one; a paste of only breaks stays)."""
    for end in ("\r\n", "\n", "\r"):
        if text.endswith(end) and text[: -len(end)].strip():
            return text[: -len(end)]
    return text
