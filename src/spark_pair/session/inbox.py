"""The turn's inbox (stream, watcher, decisions, wake-ups, in order) and the loop's share."""

from __future__ import annotations

import asyncio
import collections
import time
from typing import Any, NamedTuple

from ..protocol.events import TextDelta
from .approval import Proposal

SLICE_S = 0.002  # the longest stretch of work before the loop gets a turn
GATHER_CHARS = 8192  # the most text handed over as one TextDelta (parsed in well under SLICE_S)


class LoopShare:
    """Gives the event loop a turn after SLICE_S of work without a pause: a backlog (a burst
    of buffered socket messages, a queue of parsed events) never freezes a screen, and the
    deadline's timer and a signal's handler run in time. A long gap since the last call
    begins a new stretch only if the loop did have a turn meanwhile (a callback scheduled at
    the stretch's start has run): a step may be slow without a pause."""

    def __init__(self) -> None:
        self.start = self.last = time.perf_counter()
        self.turned = True  # the loop had a turn since the stretch began

    def _turn(self) -> None:
        self.turned = True

    async def take(self) -> None:
        now = time.perf_counter()
        if now - self.last > SLICE_S / 4 and self.turned:  # it waited: a new stretch
            self.start = now
            self.turned = False
            asyncio.get_running_loop().call_soon(self._turn)
        elif now - self.start > SLICE_S:
            await asyncio.sleep(0)
            now = self.start = time.perf_counter()
            self.turned = True
        self.last = now


class Inbox:
    """The turn's incoming items (stream, watcher, decisions, wake-ups), in order. `put` never
    waits; the turn loop takes from `items` and waits only when it is empty.

    `latency`: how long model text may wait before the turn loop is woken for it (0: at once).
    A front end that shows nothing per token lets text gather, so the loop wakes about
    1 / latency times a second instead of once per socket read; anything else (the stream's
    end, a failure, a decision, a file change, a cancel) wakes it at once."""

    def __init__(self, latency: float = 0.0) -> None:
        self.items: collections.deque[Any] = collections.deque()
        self.latency = latency
        self._waiter: asyncio.Future[None] | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._due = 0.0  # a text item may wake the loop from this (loop) time on

    def put(self, item: Any) -> None:
        self.items.append(item)
        self._wake()

    def put_text(self, item: Any) -> None:
        """A text delta: the loop may be woken for it up to `latency` late."""
        self.items.append(item)
        waiter = self._waiter
        if waiter is None or self._timer is not None:
            return
        loop = waiter.get_loop()
        if loop.time() < self._due:
            self._timer = loop.call_at(self._due, self._wake)
        else:
            self._wake()

    def _wake(self) -> None:
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    async def wait(self) -> None:
        """Return once something is in `items`."""
        loop = asyncio.get_running_loop()
        while not self.items:
            self._waiter = loop.create_future()
            await self._waiter
        self._due = loop.time() + self.latency


END = object()  # the stream ended
WAKE = object()  # the turn was cancelled: look at the inbox again


class DiskChanged(NamedTuple):
    paths: frozenset[str]  # repo paths the watcher saw change


class Answered(NamedTuple):
    proposal: Proposal  # its decide() task is done


def gathered(first: TextDelta, items: collections.deque[Any]) -> TextDelta:
    """`first` and the text deltas queued right behind it, as one (up to GATHER_CHARS, so a
    burst is still parsed in slices that leave the loop its turns)."""
    texts = [first.text]
    size = len(first.text)
    while items and type(items[0]) is TextDelta and size < GATHER_CHARS:
        text = items.popleft().text
        texts.append(text)
        size += len(text)
    return TextDelta("".join(texts))
