"""Steering a running response (Responses API WebSocket mode): a `response.steer` message sends
a correction; the server answers pending, accepted (the running response ends `incomplete`,
reason `steered`, and one chained on it answers the correction) or failed, and a server
without it answers an error for the message type."""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Any, NamedTuple


class SteerState(StrEnum):
    PENDING = "pending"  # taken; applied once the response writes its next token
    ACCEPTED = "accepted"  # the reply starts again from the correction (after a Rewound)
    FAILED = "failed"  # the server took it but could not apply it (no response running)
    REFUSED = "refused"  # the server does not offer steering (an error for the message type)


class Steered(NamedTuple):
    """What became of a correction sent to the running response."""

    state: SteerState
    detail: str = ""


STEERED = "steered"  # the incomplete reason of a response a correction ended
REFUSAL_CODES = ("unsupported_message_type", "unknown_message_type", "invalid_message_type")


def steer_message(text: str) -> str:
    return json.dumps({"type": "response.steer",
                       "input": [{"role": "user", "content": text}]}, ensure_ascii=False)


def steer_answer(event: dict[str, Any], steering: bool) -> Steered | None:
    """The answer to a correction `event` is (None: the event is something else). `steering`:
    a correction waits for its answer (an error for the message type is then its refusal)."""
    kind = event.get("type")
    if kind == "response.steer.pending":
        return Steered(SteerState.PENDING)
    if kind == "response.steer.accepted":
        return Steered(SteerState.ACCEPTED)
    if kind == "response.steer.failed":
        return Steered(SteerState.FAILED, _message(event))
    if kind == "error" and steering:
        error = event.get("error")
        code = error.get("code") if isinstance(error, dict) else None
        param = error.get("param") if isinstance(error, dict) else None
        if code in REFUSAL_CODES or param == "type":
            return Steered(SteerState.REFUSED, _message(event))
    return None


def is_steered(event: dict[str, Any]) -> bool:
    """Whether `event` ends a response because a correction was accepted."""
    if event.get("type") != "response.incomplete":
        return False
    response = event.get("response")
    details = response.get("incomplete_details") if isinstance(response, dict) else None
    return isinstance(details, dict) and details.get("reason") == STEERED


def _message(event: dict[str, Any]) -> str:
    error = event.get("error")
    message = error.get("message") if isinstance(error, dict) else None
    return str(message or "")[:200]
