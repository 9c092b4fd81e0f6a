"""ctrl+q (and /quit): quits at once when nothing would be lost or left half done; else asks
first: operations undecided, operations accepted but not yet written (mid-stream: the turn is
applied when the stream ends), a tried turn written whose check has no keep / roll back yet. A
second ctrl+q on the question quits."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ..dialogs.confirm import ConfirmScreen
from ..host import Panes
from ..review_state import Mark
from ..widgets.review import ReviewPane
from .check import CheckScreen

if TYPE_CHECKING:
    from ..driver import Driver

UNDO_HINT = "`spark-pair undo` (or /undo in the app) restores its files"


class QuitQuestion(ConfirmScreen):
    """The question ctrl+q asks (a second ctrl+q on it quits)."""


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


def ask_quit(screen: QuitHost) -> None:
    """`screen`: the main screen."""
    app = screen.app
    if isinstance(app.screen, QuitQuestion):
        app.exit()
        return
    said = []
    undecided = screen.undecided
    if undecided:
        said.append(f"{undecided} operation(s) are undecided")
    accepted = accepted_unwritten(screen) if screen.streaming else 0
    if accepted:
        said.append(f"{accepted} accepted operation(s) are not written yet (the turn is "
                    "applied when the stream ends)")
    trying = any(isinstance(s, CheckScreen) for s in app.screen_stack)
    if trying:
        question = ("the tried turn is written and keep or roll back is not answered: quit "
                    f"and leave it written? (no: back to the check; {UNDO_HINT})")
        farewell = f"spark-pair: the tried turn stays written; {UNDO_HINT}."
    elif said:
        question = f"{'; '.join(said)}: quit without writing them?"
        farewell = None
    else:
        app.exit()
        return

    def answered(yes: bool | None) -> None:
        if yes:
            screen.driver.cancel()
            app.exit(message=farewell)

    app.push_screen(QuitQuestion(question), answered)
