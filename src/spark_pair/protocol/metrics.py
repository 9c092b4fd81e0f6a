"""Timing of one response, measured in one place by one monotonic clock."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Collection

    from .events import Metrics, TurnRequest
    from .records import RequestRecord


SAME_ARRIVAL_S = 0.0002  # texts timed closer than this came in one read: one arrival
MIN_SPAN_S = 0.002  # arrivals closer than this together are a burst: too little to rate


class Stopwatch:
    """Made when the request begins; text(chars) on each read's text, done() at the end.

    A request may take several attempts (a retry after a drop or an error, another transport
    or model): again() starts the next. TTFT and tok/s are those of the attempt that produced
    the answer (the last): the waits before it (backoff, reconnect) and a dropped attempt's
    text are no part of them. The TTFT runs from sent(), when the attempt's request went out
    on an open connection, so connecting (TCP, TLS, a WebSocket upgrade) is no part of it
    either: that is `connect_s`, from the attempt's start. An attempt never told sent() is
    timed from its start. The duration runs from the request's start to its end, every attempt
    included."""

    def __init__(self, clock=time.perf_counter) -> None:
        self.clock = clock
        self.t0 = clock()  # the request began (its first attempt)
        self.t_start: float | None = None  # the current attempt began (None: the first, at t0)
        self.t_sent: float | None = None  # the current attempt's request went out
        self.attempt = 1
        self.t_first: float | None = None  # the current attempt's first text
        self.t_last: float | None = None
        self.t_end: float | None = None
        self.arrivals: list[tuple[float, int]] = []  # the attempt's (when, characters) of each
        self.chars = 0  # the characters timed, every attempt's
        self.held: set[int] = set()  # the arrivals read far behind the stream (see read())
        self._behind = False  # see read()

    def again(self, delay_s: float = 0.0) -> None:
        """The next attempt begins (in `delay_s`): its TTFT and tok/s start afresh."""
        self.attempt += 1
        self.t_start = self.clock() + delay_s
        self.t_sent = self.t_first = self.t_last = None
        self.arrivals = []
        self.held = set()
        self._behind = False

    def first(self) -> None:
        """The first token came (ahead of its text, or without any)."""
        if self.t_first is None:
            self.t_first = self.clock()

    def sent(self, at: float | None = None) -> None:
        """The attempt's request went out on an open connection (now, or `at`); sent again
        (a socket the server closed before answering), the last sending counts."""
        self.t_sent = self.clock() if at is None else at

    @property
    def ttft_s(self) -> float | None:
        """The current attempt's TTFT, once its first text came."""
        return None if self.t_first is None else self.t_first - self._asked()

    def read(self, behind: bool) -> None:
        """The reader read the socket; `behind`: it found a backlog (it came late: a busy
        machine, a run still loading). The text of such a read was sent before it is timed,
        and the server may have held more back for want of room in the receive window: the
        reads after it catch up as fast as the reader goes. That text counts in the tokens,
        never in the pace (see pace). A reader that never says is taken to be on time."""
        self._behind = behind

    def text(self, chars: int = 1) -> None:
        """Text of `chars` characters arrived (the first call marks the attempt's first token)."""
        self.t_last = self.clock()
        if self.t_first is None:
            self.t_first = self.t_last
        if self._behind:
            self.held.add(len(self.arrivals))
        self.arrivals.append((self.t_last, chars))
        self.chars += chars

    def stopped(self, output_tokens: int, chars: int | None = None) -> Metrics:
        """A response stopped before its end (timeout, Ctrl-C, cancel): the rate over the text
        that arrived, the duration up to now, marked partial. `output_tokens` are the tokens of
        `chars` characters of text (default: all the text timed)."""
        now = self.clock()
        chars = self.chars if chars is None else chars
        had = sum(c for _, c in self.arrivals)  # the attempt's share of them
        rated = output_tokens * had / chars if chars > 0 else 0
        return timing(self._asked(), self.t_first, self.t_last or now, output_tokens,
                      duration_s=now - self.t0, partial=True, arrivals=self.arrivals,
                      rated=rated, held=self.held, attempt=self.attempt,
                      connect_s=self._connect())

    def done(self) -> None:
        self.t_end = self.clock()

    def metrics(self, output_tokens: int) -> Metrics:
        """The whole reply's numbers; `output_tokens`: the tokens of the answering attempt's
        text (the whole reply)."""
        end = self.t_end if self.t_end is not None else self.clock()
        return timing(self._asked(), self.t_first, end, output_tokens, duration_s=end - self.t0,
                      arrivals=self.arrivals, held=self.held, attempt=self.attempt,
                      connect_s=self._connect())

    def _start(self) -> float:
        return self.t0 if self.t_start is None else self.t_start

    def _asked(self) -> float:
        """When the TTFT starts: the attempt's request went out (or, not told, it began)."""
        return self._start() if self.t_sent is None else self.t_sent

    def _connect(self) -> float | None:
        return None if self.t_sent is None else max(0.0, self.t_sent - self._start())


def timing(t0: float, t_first: float | None, t_end: float, output_tokens: int, *,
           duration_s: float | None = None, partial: bool = False,
           arrivals: list[tuple[float, int]] | None = None, rated: float | None = None,
           held: set[int] | None = None, attempt: int = 1,
           connect_s: float | None = None) -> Metrics:
    """TTFT and tok/s from three instants of one clock: request sent, first text, last text.

    tok/s is the steady rate: the tokens after the first over the time after the first (so the
    TTFT does not dilute it); None when there is too little to rate. With `arrivals` (when,
    characters) it is the server's pace read from them (see `pace`), `rated` (default
    `output_tokens`) being the tokens they hold and `held` those read far behind the stream.
    `duration_s` (default: up to `t_end`) and `partial` are for a response stopped before its
    end; `attempt` says which attempt of the request was timed, `connect_s` how long it took
    to connect before its request went out."""
    from .events import Metrics

    ttft = None if t_first is None else t_first - t0
    rated = output_tokens if rated is None else rated
    rate = None
    if arrivals:
        rate = pace(arrivals, rated, held or ())
    elif t_first is not None and rated > 1 and t_end > t_first:
        rate = (rated - 1) / (t_end - t_first)
    return Metrics(ttft_s=ttft, duration_s=t_end - t0 if duration_s is None else duration_s,
                   output_tokens=output_tokens, tokens_per_s=rate, partial=partial,
                   attempt=attempt, connect_s=connect_s)


def pace(arrivals: list[tuple[float, int]], output_tokens: float,
         held: Collection[int] = ()) -> float | None:
    """The server's tok/s from when each text arrived and how long it was.

    Text is timed when the loop reads it, never before it was sent but often after (a busy
    loop reads a backlog at once): so each arrival is counted with all the tokens it holds,
    and the rate is the slope of the upper hull of (when, tokens so far), the line of the
    arrivals that were not late. That holds for a read that took all there was, however
    late, while the server still sent: its point is on the line. Not for the arrivals in
    `held`, read by a reader far behind the stream (a reader that came late finds a backlog,
    maybe only part of it: the server holds the rest back for want of room in the receive
    window and sends it as the reader makes room, so the reads catch up as fast as the reader
    goes, faster than the server sent, or the reply had ended long before): they count in
    the tokens but are no points of the line. None when the text came in one burst, or only
    in reads that were behind (nothing to rate)."""
    chars = sum(c for _, c in arrivals)
    if output_tokens < 2 or chars <= 0:
        return None
    per_char = output_tokens / chars
    points: list[tuple[float, float]] = []  # (when, tokens so far), one per arrival
    start = -1.0
    so_far = 0
    for i, (when, c) in enumerate(arrivals):
        so_far += c
        if i in held:
            continue
        if points and when - start < SAME_ARRIVAL_S:
            points[-1] = (when, so_far * per_char)
        else:
            start = when
            points.append((when, so_far * per_char))
    hull: list[tuple[float, float]] = []
    for p in points:  # upper hull, left to right
        while len(hull) >= 2 and _not_above(hull[-2], hull[-1], p):
            hull.pop()
        hull.append(p)
    if len(hull) < 2 or hull[-1][0] - hull[0][0] < MIN_SPAN_S:
        return None  # a backlog read at once says nothing of the pace
    # the hull's edges: steep where a backlog was read at once, flat where the end came late,
    # the pace between. Each edge weighs its smaller share (of the time, of the tokens), so
    # neither kind weighs much; the rate is the weighted median of the slopes
    span_t, span_k = hull[-1][0] - hull[0][0], hull[-1][1] - hull[0][1]
    edges = sorted(((k2 - k1) / (t2 - t1), min((t2 - t1) / span_t, (k2 - k1) / span_k))
                   for (t1, k1), (t2, k2) in zip(hull, hull[1:], strict=False))
    half = sum(w for _, w in edges) / 2
    for slope, weight in edges:
        half -= weight
        if half <= 0:
            return slope
    return edges[-1][0]


def _not_above(a: tuple[float, float], b: tuple[float, float], c: tuple[float, float]) -> bool:
    """Whether b lies on or below the line from a to c."""
    return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]) >= 0


def attempt_note(m: Metrics | None) -> str:
    """' (attempt N)', said after the TTFT when a later attempt than the first was timed."""
    return f" (attempt {m.attempt})" if m is not None and m.attempt > 1 else ""


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


def fill_stopped(rec: RequestRecord, watch: Stopwatch, chars: int,
                 request: TurnRequest) -> None:
    """A request stopped by a timeout, Ctrl-C or a cancel: the timing, the (estimated) tokens
    that arrived before it stopped and the (estimated) tokens that were sent."""
    rec.input_tokens = estimate_request_tokens(request)
    tokens = tokens_for_chars(chars)
    m = watch.stopped(tokens, chars)
    rec.ttft_ms = None if m.ttft_s is None else m.ttft_s * 1000
    rec.duration_ms = m.duration_s * 1000
    rec.tokens_per_s = m.tokens_per_s
    rec.output_tokens = tokens
    rec.usage_estimated = True
