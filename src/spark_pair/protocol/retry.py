"""When to retry a failed request, and after how long. Pure functions, easy to test.

Policy: retry 429, 5xx, timeouts (connect and read) and dropped streams, at most max_retries
times within a total deadline. Never retry 400/401/403/404, and never a link failure
(connection refused, DNS, TLS, proxy): nothing answers there, so the user hears it at once.
A drop whose reconnect is refused ends there, naming both.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from ..base.errors import ModelError

if TYPE_CHECKING:  # loaded for a jittered wait only: a run that needs no retry never loads it
    import random

BASE_DELAY_S = 1.0
MAX_DELAY_S = 30.0
MIN_READ_TIMEOUT_S = 1.0  # a retry's read timeout is capped by the deadline, but not below this


class Clock:
    """The time a request's retries wait and count against their deadline: the real one. A test
    gives the client one that skips the waits and counts them as passed."""

    def monotonic(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        import asyncio

        await asyncio.sleep(seconds)


def retry_delay(error: ModelError, attempt: int, elapsed_s: float, deadline_s: float,
                rng: random.Random | None = None, base_s: float = BASE_DELAY_S) -> float | None:
    """Seconds to wait before retry number `attempt` (1-based), or None: do not retry.

    Only retryable errors (429, 5xx, timeouts, drops) are retried. Retry-After is honoured as
    given; otherwise base * 2**(attempt-1), jittered up by at most 25 %, capped.
    None when waiting would pass the total deadline.
    """
    if not error.retryable or attempt < 1:
        return None
    if error.retry_after is not None and error.retry_after >= 0:
        delay = float(error.retry_after)
    else:
        import random

        jitter = (rng or random).random() * 0.25
        delay = min(MAX_DELAY_S, base_s * 2 ** min(attempt - 1, 20)) * (1.0 + jitter)
    if elapsed_s + delay > deadline_s:
        return None
    return delay


def give_up_note(error: ModelError, retries: int, max_retries: int, elapsed_s: float,
                 deadline_s: float, previous: ModelError | None = None) -> str:
    """Why no retry follows `error` (to append to its message), or "" when it says enough."""
    if not error.retryable:
        return f" (while retrying after: {previous.message})" if previous is not None else ""
    done = f"{retries} retr{'y' if retries == 1 else 'ies'}"
    if retries >= max_retries:
        return f" — gave up after {done}" if retries else ""
    left = max(0.0, deadline_s - elapsed_s)
    if error.retry_after is not None and error.retry_after >= 0:
        return (f" — the server asked to wait {error.retry_after:g} s, more than the "
                f"{left:.1f} s left of the {deadline_s:g} s retry deadline ({done} made)")
    return f" — gave up: the {deadline_s:g} s retry deadline is reached ({done} made)"
