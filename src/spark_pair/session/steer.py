"""Steering a turn where the server cannot: the turn is stopped and a new one sent at once that
carries the original instruction, the correction and what the model had written so far."""

from __future__ import annotations

ARRIVED_CHARS = 8000  # the stopped reply's tail, at most, that goes with the correction


def resend_prompt(original: str, correction: str, arrived: str) -> str:
    """The instruction of the turn that replaces a stopped one."""
    text = original.strip() + "\n\nCorrection (it takes precedence): " + correction.strip()
    arrived = arrived.strip()
    if arrived:
        if len(arrived) > ARRIVED_CHARS:
            arrived = "…" + arrived[-ARRIVED_CHARS:]
        text += ("\n\nYour reply so far, stopped for this correction (write the whole reply "
                 "again, corrected):\n" + arrived)
    return text


def dropped_note(decided: int) -> str:
    """What became of the decisions made on the stopped reply."""
    if not decided:
        return "nothing of the stopped reply was written"
    return (f"{decided} decision(s) on the stopped reply were dropped (nothing of it was "
            "written); the new reply is reviewed afresh")
