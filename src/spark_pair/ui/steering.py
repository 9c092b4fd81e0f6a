"""Enter while a turn streams: the correction's way through (the server's own steering, or a
stop and an immediate resend) and the notes the live diff shows about it."""

from __future__ import annotations

from ..session.steer import dropped_note, resend_prompt


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
