"""The second look as the turn runs it: a reply made only of `NEED: name` lines is held back
(never parsed as a diff, never shown as prose), the names are found in the workspace (in a
thread) and one follow-up request carries them; its reply is the turn's. Once per turn: a
second NEED reply ends the turn with an error."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol

from ..base.errors import ParseError, SparkPairError
from ..protocol.events import Completed, Failed, FirstToken, Rewound, TextDelta, Usage
from ..protocol.request import Message
from .events import Looked

if TYPE_CHECKING:
    from ..protocol.request import TurnRequest
    from .inbox import Inbox
    from .parts import Parts
    from .stale import StaleTracker

NEED = "NEED:"
MAX_NEED_CHARS = 1000  # a longer reply is never a NEED reply
_LINE = re.compile(r"NEED:[ \t]*(\S.*?)[ \t]*")
_SPLIT = re.compile(r"[,\s]+")


def may_be_need(text: str) -> bool:
    """Whether a reply that begins with `text` may still be only NEED lines."""
    if len(text) > MAX_NEED_CHARS:
        return False
    *done, last = text.lstrip().split("\n")
    if not all(_LINE.fullmatch(line.strip()) for line in done if line.strip()):
        return False
    last = last.strip()
    return NEED.startswith(last) or last.startswith(NEED)


def need_names(text: str) -> list[str] | None:
    """The names a reply asks for, when it is only NEED lines (else None)."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if not lines or len(text) > MAX_NEED_CHARS:
        return None
    names: list[str] = []
    for line in lines:
        found = _LINE.fullmatch(line)
        if found is None:
            return None
        names.extend(n for n in _SPLIT.split(found.group(1)) if n)
    return names or None


class Run(Protocol):
    """What of the running turn (session.turn.TurnRun) the look uses: it moves the request on
    to the follow-up and adds the files it sent to the stale checks."""

    s: Parts
    request: TurnRequest
    ask: bool
    inbox: Inbox
    stale: StaleTracker


class _Held:
    """One request's events, its text and the events that go with it held while the reply may
    be a NEED reply; `names` (and `done`, its Completed) once it was one."""

    def __init__(self) -> None:
        self.text = ""
        self.held: list[Any] = []
        self.holding = True
        self.names: list[str] | None = None
        self.done: Completed | None = None

    def _release(self) -> list[Any]:
        out, self.held, self.holding = self.held, [], False
        return out

    async def events(self, source: AsyncIterator[Any]) -> AsyncIterator[Any]:
        async for event in source:
            kind = type(event)
            if not self.holding:
                yield event
            elif kind is TextDelta:
                self.text += event.text
                self.held.append(event)
                if not may_be_need(self.text):
                    for out in self._release():
                        yield out
            elif kind is Rewound:  # a retry answered differently: the held text is cut
                self.text = self.text[:event.keep]
                self.held = [e for e in self.held if type(e) is not TextDelta]
                if self.text:
                    self.held.append(TextDelta(self.text))
            elif kind is FirstToken or kind is Usage:
                self.held.append(event)
            elif kind is Completed and event.cut is None and need_names(self.text):
                self.names, self.done, self.held = need_names(self.text), event, []
            else:  # the request's start, retries, the end of any other reply: as they come
                if kind is Completed or kind is Failed:
                    for out in self._release():
                        yield out
                yield event


async def stream(run: Run) -> AsyncIterator[Any]:
    """The turn's request and, when its reply asks for more, the one follow-up request: their
    protocol events, a `Looked` between them, and a SparkPairError when it asks again."""
    s, gather = run.s, run.inbox.latency > 0
    if s.look is None or run.ask:
        async for event in s.client.stream(run.request, gather=gather):
            yield event
        return
    first = _Held()
    async for event in first.events(s.client.stream(run.request, gather=gather)):
        yield event
    if first.names is None or first.done is None:
        return
    try:
        found, hashes = await asyncio.to_thread(s.look, first.names)
    except SparkPairError as exc:
        yield exc
        return
    run.stale.add(hashes)
    yield Looked(found.asked, found.files, found.refused, found.tokens,
                 round(first.done.metrics.duration_s * 1000))
    request = run.request = replace(
        run.request, history=[*run.request.history, *run.request.new_input,
                              Message("assistant", first.text.strip())],
        new_input=[Message("user", found.text)], task="look")
    second = _Held()
    async for event in second.events(s.client.stream(request, gather=gather)):
        yield _both(event, first.done) if type(event) is Completed else event
    if second.names is not None and second.done is not None:
        yield _both(second.done, first.done)
        yield ParseError(
            f"the model asked again for more context ({', '.join(second.names)}) after its "
            "one look; no diff came",
            hint="add the files it needs yourself (-f, or the files pane) and run the turn "
                 "again, or turn the look off: [context] second_look = false")


def _both(last: Completed, first: Completed) -> Completed:
    """The follow-up's end, with the turn's tokens: both requests'."""
    u, spent = last.usage, first.usage
    if u is None or spent is None:
        return last
    return last._replace(usage=Usage(u.input_tokens + spent.input_tokens,
                                     u.output_tokens + spent.output_tokens,
                                     u.estimated or spent.estimated))


def said(event: Looked) -> str:
    """One line for a person: what the model asked for, what was sent and why not the rest."""
    from ..base.printable import shown

    sent = []
    for f in event.files:
        why = f.reason.partition(": ")[2]  # "defines NAME" for a definition
        how = "whole" if f.shown == "whole" else "lines " + ", ".join(
            f"{a}-{b}" for a, b in f.regions)
        sent.append(f"{shown(f.path)} ({why + ': ' if why else ''}{how}, ~{f.tokens} tok)")
    text = f"the model asked for {', '.join(shown(n) for n in event.asked)}: "
    text += ("sent " + ", ".join(sent)) if sent else "sent nothing"
    if event.refused:
        text += "; not sent: " + "; ".join(f"{shown(n)} ({why})" for n, why in event.refused)
    return text
