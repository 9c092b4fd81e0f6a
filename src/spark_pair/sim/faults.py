"""Fault injection: a list of faults, each consumed by the requests it matches."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..base.transport import Transport

KINDS = {
    "rate_limit": {"retry_after": 1},
    "server_error": {"status": 503},
    "drop": {"after_tokens": 5},
    "ws_close": {"after_responses": 1},
    "stall": {"after_tokens": 0, "seconds": 3600},
    "html": {"status": 200},
    "ws_refuse": {},
    # the WebSocket upgrade is answered `seconds` late (a slow TLS handshake or gateway): the
    # connection's set-up, before any request can go out on it
    "slow_handshake": {"seconds": 1},
    "redirect": {"status": 307},
    "concurrency_limit": {"max_concurrent": 1},
    # the stream's end is never marked: no `data: [DONE]` (chat) and no end of the body; the
    # connection stays open `seconds` after the last event (some servers and gateways do this)
    "no_done": {"seconds": 3600},
    # a chat stream fails after `after_tokens` tokens, reported as the profile's server does
    # (sim.profiles.StreamError); `status` is the HTTP status the failure stands for
    "stream_error": {"after_tokens": 5, "status": 500},
    # a chat stream ends with `data: [DONE]` after `after_tokens` tokens and no finish reason
    # (llama.cpp's server when a newer request takes the slot of a running one)
    "interrupt": {"after_tokens": 5},
    # a buffering proxy: the whole stream body is held back until the reply is complete, then
    # sent in one write (the events themselves are unchanged)
    "buffer": {},
}
TRANSPORTS = {None, "http", "models", *Transport}  # what a fault fires on
# Kinds that fire on the WS handshake; the others fire on a request (HTTP or WS response.create).
HANDSHAKE_KINDS = {"ws_refuse", "html", "redirect", "slow_handshake"}
WS_ONLY_KINDS = {"ws_refuse", "slow_handshake"}  # kinds of a WebSocket upgrade only
HTTP_KINDS = {"no_done", "buffer"}  # kinds of an HTTP stream only (a WS response.create skips)
CHAT_KINDS = {"stream_error", "interrupt"}  # kinds of a chat stream only
# name -> (lowest, highest, whole numbers only); `status` depends on the kind
LIMITS: dict[str, tuple[float, float, bool]] = {
    "retry_after": (0, 86400, False),
    "after_tokens": (0, 10**9, True),
    "after_responses": (0, 10**6, True),
    "seconds": (0, 86400, False),
    "max_concurrent": (1, 10**6, True),
}
STATUS_LIMITS: dict[str, tuple[float, float]] = {
    "server_error": (500, 599), "html": (200, 599), "stream_error": (400, 599),
    "redirect": (300, 399)}


class FaultSpecError(ValueError):
    pass


@dataclass
class Fault:
    kind: str
    times: int = 1
    transport: str | None = None
    params: dict[str, Any] = field(default_factory=dict)

    def get(self, name: str) -> Any:
        return self.params.get(name, KINDS[self.kind].get(name))

    def matches(self, transport: str) -> bool:
        if self.transport is None:
            return transport != "models"
        if self.transport == "http":
            return transport in (Transport.CHAT, Transport.RESPONSES)
        return self.transport == transport

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "times": self.times, "transport": self.transport, **self.params}


def fault_from_dict(data: dict[str, Any]) -> Fault:
    data = dict(data)
    kind = data.pop("kind", None)
    if kind not in KINDS:
        raise FaultSpecError(f"unknown fault kind {kind!r}; known: {', '.join(sorted(KINDS))}")
    times = data.pop("times", 1)
    if not _whole(times) or times < -1:
        raise FaultSpecError(f"fault {kind}: times must be a whole number >= 0, or -1 for "
                             f"always (got {times!r})")
    transport = data.pop("transport", None)
    if transport not in TRANSPORTS:
        raise FaultSpecError(f"unknown transport {transport!r} in fault {kind}")
    for name, value in data.items():
        if name not in KINDS[kind]:
            raise FaultSpecError(f"fault {kind} has no parameter {name!r}")
        _check_value(kind, name, value)
    return Fault(kind, int(times), transport, data)


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_value(kind: str, name: str, value: Any) -> None:
    """Raise FaultSpecError for a value the fault cannot honour."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        raise FaultSpecError(f"fault {kind}: {name} must be a number (got {value!r})")
    if name == "status":
        low, high = STATUS_LIMITS[kind]
        whole = True
    else:
        low, high, whole = LIMITS[name]
    if whole and not _whole(value):
        raise FaultSpecError(f"fault {kind}: {name} must be a whole number (got {value!r})")
    if not low <= value <= high:
        raise FaultSpecError(f"fault {kind}: {name} must be between {low:g} and {high:g} "
                             f"(got {value!r})")


def parse_fault_spec(spec: str) -> Fault:
    """`rate_limit:times=2,retry_after=1` -> Fault."""
    kind, _, rest = spec.strip().partition(":")
    data: dict[str, Any] = {"kind": kind.strip()}
    for pair in filter(None, (p.strip() for p in rest.split(","))):
        name, eq, value = pair.partition("=")
        if not eq:
            raise FaultSpecError(f"bad fault parameter {pair!r} (expected name=value)")
        name, value = name.strip(), value.strip()
        if name == "transport":
            data[name] = None if value in ("", "null", "none") else value
        else:
            try:
                data[name] = int(value)
            except ValueError:
                try:
                    data[name] = float(value)
                except ValueError:
                    raise FaultSpecError(f"fault parameter {name} must be a number "
                                         f"(got {value!r})") from None
    return fault_from_dict(data)


class FaultBook:
    """The active faults. `take()` returns the first fault that fires for a request."""

    def __init__(self, faults: list[Fault] | None = None) -> None:
        self.faults = list(faults or [])

    def take(self, transport: str, handshake: bool = False) -> Fault | None:
        for fault in self.faults:
            if fault.times == 0 or not fault.matches(transport):
                continue
            if fault.kind in ("concurrency_limit", "ws_close"):
                continue
            if transport == "ws" and (fault.kind in HANDSHAKE_KINDS) != handshake:
                continue
            if transport != "ws" and fault.kind in WS_ONLY_KINDS:
                continue
            if transport == "ws" and fault.kind in HTTP_KINDS:
                continue
            if transport != "chat" and fault.kind in CHAT_KINDS:
                continue
            if fault.times > 0:
                fault.times -= 1
            return fault
        return None

    def peek_ws_close(self, completed: int) -> Fault | None:
        """A ws_close fault due on a socket that has completed `completed` responses."""
        for fault in self.faults:
            if fault.kind == "ws_close" and fault.times != 0 and fault.matches("ws"):
                if completed >= int(fault.get("after_responses")):
                    if fault.times > 0:
                        fault.times -= 1
                    return fault
        return None

    def concurrency_limit(self, transport: str) -> int | None:
        limits = [int(f.get("max_concurrent")) for f in self.faults
                  if f.kind == "concurrency_limit" and f.matches(transport)]
        return min(limits) if limits else None
