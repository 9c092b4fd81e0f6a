"""When to retry a failed request, and after how long. A pure function, easy to test."""

from __future__ import annotations

import random

from ..errors import ModelError

BASE_DELAY_S = 1.0
MAX_DELAY_S = 30.0


def retry_delay(error: ModelError, attempt: int, elapsed_s: float, deadline_s: float,
                rng: random.Random | None = None, base_s: float = BASE_DELAY_S) -> float | None:
    """Seconds to wait before retry number `attempt` (1-based), or None: do not retry.

    Only retryable errors (429, 5xx, timeouts, drops, link failures) are retried. Retry-After is
    honoured as given; otherwise base * 2**(attempt-1), jittered up by at most 25 %, capped.
    None when waiting would pass the total deadline.
    """
    if not error.retryable or attempt < 1:
        return None
    if error.retry_after is not None and error.retry_after >= 0:
        delay = float(error.retry_after)
    else:
        jitter = (rng or random).random() * 0.25
        delay = min(MAX_DELAY_S, base_s * 2 ** min(attempt - 1, 20)) * (1.0 + jitter)
    if elapsed_s + delay > deadline_s:
        return None
    return delay
