"""Session.frames(): a turn's events coalesced into frames for a screen (docs/seam.md)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable

from ..protocol.events import Failed, TextDelta
from .events import Frame, Looked, OperationProposed, SessionEvent, Stale, TurnFinished

URGENT = (OperationProposed, Stale, Failed, TurnFinished, Looked)  # a frame holding one goes
# at once


async def frames_of(partial_line: Callable[[], str], events: AsyncIterator[SessionEvent],
                    interval: float) -> AsyncIterator[Frame]:
    """Pulls the turn's events in a task and hands them over in batches, each with the diff
    line being written then (`partial_line()`). The turn's first step
    (its request built and sent off, up to `TurnStarted`) runs in the caller's task: one
    task switch less between enter and the request."""
    first = await anext(events, None)
    batch: list[SessionEvent] = [] if first is None else [first]
    arrived = asyncio.Event()  # the batch holds something (or the turn ended)
    urgent = asyncio.Event()  # the batch holds an event that must not wait for the clock
    done = False

    async def pull() -> None:
        nonlocal done
        try:
            async for event in events:
                batch.append(event)
                arrived.set()
                if isinstance(event, URGENT):
                    urgent.set()
        finally:
            done = True
            arrived.set()
            urgent.set()

    task = asyncio.create_task(pull())
    if batch:
        arrived.set()
    loop = asyncio.get_running_loop()
    last = loop.time() - interval
    try:
        while True:
            await arrived.wait()
            wait = interval - (loop.time() - last)
            if wait > 0 and not urgent.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(urgent.wait(), wait)
            arrived.clear()
            urgent.clear()
            if batch:
                taken = tuple(batch)
                batch.clear()
                text = "".join(e.text for e in taken if isinstance(e, TextDelta))
                last = loop.time()
                yield Frame(taken, text, partial_line())
            if done and not batch:
                break
        await task  # re-raise what the turn raised
    finally:
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


