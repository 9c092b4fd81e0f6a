"""The backstop of a headless run's --timeout on the event loop: the run's work ends by the
deadline, except a written turn's report (its commit), which is let finish."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")
REPORT_WAITS = 3600  # seconds a written turn's report (its commit) may run past the deadline


async def within(work: Awaitable[T], seconds: float, reporting: Callable[[], bool]) -> T:
    """`work`'s result, or TimeoutError after `seconds`, unless `reporting()` then (a written
    turn is being reported, its commit under way): that is let finish (each of its steps has
    a timeout of its own), so the run says what was written and committed."""
    task = asyncio.ensure_future(work)
    try:
        done, _ = await asyncio.wait({task}, timeout=seconds)
        for _ in range(REPORT_WAITS):
            if done or not reporting():
                break
            done, _ = await asyncio.wait({task}, timeout=1.0)
        if done:
            return task.result()
    finally:
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
    raise TimeoutError
