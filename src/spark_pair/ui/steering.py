"""Enter while a turn streams: the correction's way through (the server's own steering, or a
stop and an immediate resend) and the notes the live diff shows about it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ..protocol.steer import Steered, SteerState
from ..session.steer import dropped_note, resend_prompt
from .host import Panes, Says
from .widgets.diff_view import DiffView
from .widgets.prompt import Prompt
from .widgets.review import ReviewPane

if TYPE_CHECKING:
    from .driver import Driver


class Steering:
    def __init__(self) -> None:
        self.text = ""  # the last correction
        self.decided = 0  # decisions made on the reply it corrects
        self.restart: str | None = None  # why the turn is being stopped and sent again
        self.arrived = ""  # what the last finished turn had written (set at its end)
        self._note: str | None = None  # for the diff of the turn that replaces a stopped one

    def start(self, text: str, decided: int) -> None:
        self.text, self.decided = text, decided

    def stop(self, why: str) -> bool:
        """The turn is to be stopped and sent again (False: that is under way already)."""
        if self.restart is not None or not self.text:
            return False
        self.restart = why
        return True

    def accepted(self) -> str:
        return (f"steered on the server: the reply starts again from the correction "
                f"({self.text}); {dropped_note(self.decided)}")

    def resend(self, original: str) -> str:
        """The instruction of the turn that replaces the stopped one (its note is kept for
        that turn's diff)."""
        why, self.restart = self.restart or "", None
        correction, arrived = self.text, self.arrived
        self._note = (f"steered by stop + resend ({why}): the instruction, the correction "
                      f"({correction}) and the {len(arrived):,} characters that had arrived "
                      f"went as a new request; {dropped_note(self.decided)}")
        self.text = ""
        return resend_prompt(original, correction, arrived)

    def note_for_new_turn(self) -> str | None:
        note, self._note = self._note, None
        return note


class SteerHost(Panes, Says, Protocol):
    """What steering uses of the main screen: its panes, driver and notice line."""

    driver: Driver
    steering: Steering
    streaming: bool


async def steer(screen: SteerHost, text: str) -> None:
    """enter while a turn streams: the server's own steering where it offers it, else the
    turn is stopped and sent again at once with the correction."""
    review = screen.query_one(ReviewPane).review
    decided = len(review.entries) - len(review.undecided())
    screen.steering.start(text, decided)
    if await screen.driver.steer(text):
        screen.query_one(DiffView).note(f"steering: the correction went to the running turn: "
                                        f"{text}")
    else:
        stop_and_resend(screen, "this connection cannot steer a running reply")


def stop_and_resend(screen: SteerHost, why: str) -> None:
    text = screen.steering.text
    if not screen.steering.stop(why):
        return
    if screen.streaming:
        screen.driver.cancel("stopped for a correction")
        return
    screen.steering.restart = None  # the reply is in: the correction is the next prompt
    prompt = screen.query_one(Prompt)
    if not prompt.value:
        prompt.value = text
    screen.say(f"the reply ended before the correction could go ({why}); it is back in the "
               "prompt")


def steered(screen: SteerHost, event: Steered) -> None:
    if event.state == SteerState.ACCEPTED:
        screen.query_one(DiffView).note(screen.steering.accepted())
    elif event.state == SteerState.PENDING:
        screen.query_one(DiffView).note("steering: the server takes the correction at its "
                                        "next token")
    else:
        stop_and_resend(screen, f"the server {event.state} it"
                                + (f": {event.detail}" if event.detail else ""))
