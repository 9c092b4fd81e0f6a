"""ctrl+q (and /quit): quits at once when nothing would be lost or left half done; else asks
first: operations undecided, operations accepted but not yet written (mid-stream: the turn is
applied when the stream ends), a tried turn written whose check has no keep / roll back yet,
text in the prompt not sent (the question names it; quitting prints what the prompt holds as
the app leaves, text typed while the question is open too). A second ctrl+q on the question
quits."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from rich.text import Text
from textual.widgets import Label

from ..dialogs.confirm import ConfirmScreen
from ..host import Panes
from ..review_state import Mark
from ..widgets.prompt import Prompt, lines_held
from ..widgets.review import ReviewPane
from .check import CheckScreen

if TYPE_CHECKING:
    from ..driver import Driver

UNDO_HINT = "`spark-pair undo` (or /undo in the app) restores its files"


class QuitQuestion(ConfirmScreen):
    """The question ctrl+q asks (a second ctrl+q on it quits as alt+y does)."""

    def __init__(self, question: str, trying: bool = False) -> None:
        super().__init__(question)
        self.trying = trying  # a tried turn stays written: said as the app leaves

    def renew(self, question: str) -> None:
        """The question as it stands now (text typed under it changed the prompt)."""
        if question != self.question:
            self.question = question
            self.query_one(Label).update(question)


class QuitHost(Panes, Protocol):
    """What ctrl+q uses of the main screen: the review, the turn, the driver."""

    driver: Driver
    streaming: bool

    @property
    def undecided(self) -> int: ...


def accepted_unwritten(screen: Panes) -> int:
    """Operations accepted (whole or a hunk of them) and not written yet."""
    review = screen.query_one(ReviewPane).review
    return sum(1 for e in review.entries.values() if not e.applied and (
        e.mark is Mark.ACCEPTED or Mark.ACCEPTED in e.hunks))


def leave(screen: QuitHost, trying: bool) -> None:
    """Exit, printing what stays written and what the prompt holds now (text typed while the
    question was open too), literally: a draft may hold [brackets]."""
    draft = screen.query_one(Prompt).text.strip()
    farewell = f"spark-pair: the tried turn stays written; {UNDO_HINT}." if trying else None
    if draft:  # nothing typed is lost
        farewell = "\n".join(filter(None, (farewell, "spark-pair: your unsent prompt:", draft)))
    screen.app.exit(message=Text(farewell) if farewell else None)


def draft_note(text: str) -> str:
    """The prompt's unsent text as the quit question names it: its first words, its lines (as
    the prompt's border counts them)."""
    words = " ".join(text.split())
    lines = lines_held(text)
    shown = words if len(words) <= 40 else words[:40].rsplit(" ", 1)[0] + "…"
    return f"the prompt holds unsent text (\"{shown}\", {lines} line{'s' if lines > 1 else ''})"


def quit_question(screen: QuitHost) -> tuple[str, bool] | None:
    """What ctrl+q asks now, and whether a tried turn is written (None: nothing would be lost
    or left half done)."""
    app = screen.app
    said = []
    undecided = screen.undecided
    if undecided:
        said.append(f"{undecided} operation(s) are undecided")
    accepted = accepted_unwritten(screen) if screen.streaming else 0
    if accepted:
        said.append(f"{accepted} accepted operation(s) are not written yet (the turn is "
                    "applied when the stream ends)")
    draft = screen.query_one(Prompt).text.strip()
    trying = any(isinstance(s, CheckScreen) for s in app.screen_stack)
    if trying:
        said = ["the tried turn is written and keep or roll back is not answered"]
    if draft:
        said.append(draft_note(screen.query_one(Prompt).text))
    if not said:
        return None
    printed = " (the unsent text is printed as you leave)" if draft else ""
    if trying:
        return (f"{'; '.join(said)}: quit and leave it written?{printed} (no: back to the "
                f"check; {UNDO_HINT})"), True
    if len(said) > 1 or not draft:
        return f"{'; '.join(said)}: quit without writing them?{printed}", False
    return f"{said[0]}: quit anyway?{printed}", False


def renew_question(screen: QuitHost) -> None:
    """The prompt changed under the open quit question: it names the text as it is now."""
    top = screen.app.screen
    if isinstance(top, QuitQuestion):
        asked = quit_question(screen)
        top.renew(asked[0] if asked is not None else "nothing would be lost now: quit?")


def ask_quit(screen: QuitHost) -> None:
    """`screen`: the main screen."""
    app = screen.app
    if isinstance(app.screen, QuitQuestion):
        leave(screen, app.screen.trying)
        return
    asked = quit_question(screen)
    if asked is None:
        app.exit()
        return
    question, trying = asked

    def answered(yes: bool | None) -> None:
        if yes:
            screen.driver.cancel()
            leave(screen, trying)

    app.push_screen(QuitQuestion(question, trying), answered)
