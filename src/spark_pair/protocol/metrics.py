"""Timing of one response, measured in one place by one monotonic clock."""

from __future__ import annotations

import time

from .events import Metrics


class Stopwatch:
    """start() when the request begins, first() on the first text, done() at the end."""

    def __init__(self, clock=time.perf_counter) -> None:
        self.clock = clock
        self.t0 = clock()
        self.t_first: float | None = None
        self.t_end: float | None = None

    def first(self) -> None:
        if self.t_first is None:
            self.t_first = self.clock()

    def done(self) -> None:
        self.t_end = self.clock()

    def metrics(self, output_tokens: int) -> Metrics:
        end = self.t_end if self.t_end is not None else self.clock()
        return timing(self.t0, self.t_first, end, output_tokens)


def timing(t0: float, t_first: float | None, t_end: float, output_tokens: int) -> Metrics:
    """TTFT and tok/s from three instants of one clock: request sent, first text, last text.

    tok/s is the steady rate: the tokens after the first over the time after the first (so the
    TTFT does not dilute it); None when there is too little to rate."""
    ttft = None if t_first is None else t_first - t0
    rate = None
    if t_first is not None and output_tokens > 1 and t_end > t_first:
        rate = (output_tokens - 1) / (t_end - t_first)
    return Metrics(ttft_s=ttft, duration_s=t_end - t0, output_tokens=output_tokens,
                   tokens_per_s=rate)


def estimate_tokens(text: str) -> int:
    """Rough token count when the server sends none (about 4 characters a token)."""
    return (len(text) + 3) // 4
