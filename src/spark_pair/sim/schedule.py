"""Token pacing against a monotonic clock: token i is due at ttft + i/tps after the start."""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable

EPSILON = 1e-9  # float slack, so a token due exactly now counts as due


class TokenSchedule:
    def __init__(self, tps: float, ttft_ms: float, clock: Callable[[], float] = time.monotonic):
        self.tps = float(tps)
        self.ttft = max(0.0, float(ttft_ms)) / 1000.0
        self.clock = clock
        self.start = clock()

    def due_at(self, index: int) -> float:
        """Clock time at which token `index` (0-based) is due."""
        extra = index / self.tps if self.tps > 0 else 0.0
        return self.start + self.ttft + extra

    def due(self, total: int) -> int:
        """How many of `total` tokens are due now."""
        elapsed = self.clock() - self.start - self.ttft + EPSILON
        if elapsed < 0:
            return 0
        if self.tps <= 0:
            return total
        return min(total, math.floor(elapsed * self.tps) + 1)

    async def next_batch(self, sent: int, total: int) -> int:
        """Wait until token `sent` is due; return how many tokens are due (> sent)."""
        delay = self.due_at(sent) - self.clock()
        if delay > 0:
            await asyncio.sleep(delay)
        return max(sent + 1, self.due(total)) if sent < total else total
