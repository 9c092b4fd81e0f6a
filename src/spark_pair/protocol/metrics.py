"""Timing of one response, measured in one place by one monotonic clock."""

from __future__ import annotations

import time

TYPE_CHECKING = False  # not typing's: `run` loads this module before its request goes out
if TYPE_CHECKING:  # light to import: the workspace counts tokens before the request goes out
    from .events import Metrics, TurnRequest


class Stopwatch:
    """Made when the request begins; text() on each text, done() at the end."""

    def __init__(self, clock=time.perf_counter) -> None:
        self.clock = clock
        self.t0 = clock()
        self.t_first: float | None = None
        self.t_last: float | None = None
        self.t_end: float | None = None

    def first(self) -> None:
        if self.t_first is None:
            self.t_first = self.clock()

    def text(self) -> None:
        """Text arrived (the first call marks the first token)."""
        self.t_last = self.clock()
        if self.t_first is None:
            self.t_first = self.t_last

    def stopped(self, output_tokens: int) -> Metrics:
        """A response stopped before its end (timeout, Ctrl-C, cancel): the rate over the text
        that arrived, the duration up to now, marked partial."""
        now = self.clock()
        return timing(self.t0, self.t_first, self.t_last or now, output_tokens,
                      duration_s=now - self.t0, partial=True)

    def done(self) -> None:
        self.t_end = self.clock()

    def metrics(self, output_tokens: int) -> Metrics:
        end = self.t_end if self.t_end is not None else self.clock()
        return timing(self.t0, self.t_first, end, output_tokens)


def timing(t0: float, t_first: float | None, t_end: float, output_tokens: int, *,
           duration_s: float | None = None, partial: bool = False) -> Metrics:
    """TTFT and tok/s from three instants of one clock: request sent, first text, last text.

    tok/s is the steady rate: the tokens after the first over the time after the first (so the
    TTFT does not dilute it); None when there is too little to rate. `duration_s` (default:
    up to `t_end`) and `partial` are for a response stopped before its end."""
    from .events import Metrics

    ttft = None if t_first is None else t_first - t0
    rate = None
    if t_first is not None and output_tokens > 1 and t_end > t_first:
        rate = (output_tokens - 1) / (t_end - t_first)
    return Metrics(ttft_s=ttft, duration_s=t_end - t0 if duration_s is None else duration_s,
                   output_tokens=output_tokens, tokens_per_s=rate, partial=partial)


def estimate_tokens(text: str) -> int:
    """Rough token count when the server sends none (about 4 characters a token)."""
    return tokens_for_chars(len(text))


def estimate_request_tokens(request: TurnRequest) -> int:
    """Rough count of the tokens a request sends: its instructions and whole conversation."""
    texts = [request.instructions, *(m.content for m in (*request.history, *request.new_input))]
    return tokens_for_chars(sum(len(t) for t in texts))


def tokens_for_chars(chars: int) -> int:
    """estimate_tokens for a text of `chars` characters."""
    return (chars + 3) // 4
