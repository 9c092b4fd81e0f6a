"""What a headless run says on stderr for a person: progress, the context it chose, what it
applied, and the meter line at its end (never on stdout)."""

from __future__ import annotations

import re
from typing import TextIO

from ..base.termwrap import say
from ..protocol.events import (
    Completed,
    ModelChanged,
    Retrying,
    Rewound,
    TransportChanged,
)
from ..protocol.metrics import attempt_note
from ..session.events import (
    Applied,
    ContextChosen,
    Looked,
    RefusalKind,
    Refused,
    RepairFinished,
    RepairRetrying,
    RepairStarted,
    SessionEvent,
    Stale,
    TurnResult,
)
from .textfit import WIDTH, file_lines, repair_text


class Diagnostics:
    """Human-readable progress on stderr (never on stdout)."""

    def __init__(self, err: TextIO) -> None:
        self.err = err

    def say(self, text: str) -> None:
        say(self.err, text)

    def event(self, event: SessionEvent) -> None:
        match event:
            case Retrying():
                self.say(retry_text(event))
            case RepairRetrying(retry=retry):
                self.say("repair: " + retry_text(retry))
            case Rewound():
                self.say(f"the retried reply differs after {event.keep} chars; "
                         "re-reading it from there")
            case TransportChanged():
                self.say(f"transport {event.old} -> {event.new}: {event.reason}")
            case ModelChanged():
                self.say(f"model {event.old} not available; using {event.new} ({event.reason})")
            case ContextChosen():
                self.context(event)
            case Looked():
                from ..session.look import said as look_said

                self.say(look_said(event))
            case Completed(notes=notes) if notes:
                self.say("\n".join(f"note: {note}" for note in notes))
            case Stale():
                self.say(f"{event.path} changed on disk during the turn (stale)")
            case Refused(kind=RefusalKind.POLICY):
                self.say(f"refused {event.op.summary()}: {event.reason}")
            case Refused():  # the error that follows says why (once)
                self.say(f"refused {event.op.summary()} ({event.kind})")
            case RepairStarted() | RepairFinished():  # each line of its own, prefixed (the
                for said in re.split(r"\n(?! )", repair_text(event)):  # wrapped ones indented)
                    self.say(said)
            case Applied() if not event.changed:
                self.say("the turn changed no file (nothing written, nothing to undo)")
            case Applied():
                head = f"applied turn {event.turn_id}:"
                lines = file_lines(head, list(event.changed), first_width=WIDTH - 12)
                lines.append(f"  undo: spark-pair undo --turn {event.turn_id}")
                lines.extend(f"  note: {note}" for note in event.notes)
                self.say("\n".join(lines))

    def context(self, event: ContextChosen) -> None:
        """Which files went with the request and why (when it chose any by itself), and a
        note for each file the instruction named that is never sent on its own."""
        from ..base.printable import shown

        auto = [f for f in event.files if f.reason != "added"]
        if auto:  # (the map alone is in the JSON line; it says nothing a person needs)
            parts = [f"{shown(f.path)} ({f.reason}" + (", lines " + ", ".join(
                f"{a}-{b}" for a, b in f.regions) if f.regions else "") + ")" for f in auto]
            if event.map_tokens:
                parts.append(f"repository map ~{event.map_tokens} tok")
            self.say("context: " + ", ".join(parts))
        for path, why, named in event.withheld:
            if named:
                self.say(f"note: {shown(path)} is not sent ({why}); to send it anyway, add "
                         f"it by hand: -f {shown(path)}")


def retry_text(event: Retrying) -> str:
    return f"retry {event.attempt} in {event.delay_s:.1f} s ({event.reason})"


def meter_line(result: TurnResult) -> str:
    """TTFT, tok/s, tokens in/out, transport, model (and retries when there were any)."""
    m, u = result.metrics, result.usage
    parts = []
    if m is not None:
        parts.append((f"TTFT {m.ttft_s * 1000:.0f} ms" if m.ttft_s is not None else "TTFT -")
                     + attempt_note(m))
        parts.append(f"{m.tokens_per_s:,.0f} tok/s" if m.tokens_per_s else "- tok/s")
    stopped = m is not None and m.partial
    if u is not None and not stopped:
        est = " (est.)" if u.estimated else ""
        parts.append(f"in {u.input_tokens:,} / out {u.output_tokens:,} tok{est}")
    elif u is not None and m is not None:
        parts.append(f"in {u.input_tokens:,} / out {m.output_tokens:,} tok so far (est.)")
    elif m is not None:
        parts.append(f"out {m.output_tokens:,} tok" + (" so far (est.)" if stopped else ""))
    parts.append(result.transport or "-")
    parts.append(result.model or "-")
    if result.retries:
        parts.append(f"{result.retries} retr{'y' if result.retries == 1 else 'ies'}")
    if stopped:
        parts.append("stopped")
    return " │ ".join(parts)
