"""A clock for the model client's retries that skips their waits (the real waits are kept in a
few end-to-end tests)."""

from __future__ import annotations

import asyncio
import time

from spark_pair.protocol.retry import Clock


class SkippingClock(Clock):
    """Real time, plus every wait asked for: a wait returns at once, is recorded in `waits`
    and counts as passed for the retry deadline."""

    def __init__(self) -> None:
        self.waits: list[float] = []
        self.skipped = 0.0

    def monotonic(self) -> float:
        return time.monotonic() + self.skipped

    async def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.skipped += seconds
        await asyncio.sleep(0)
