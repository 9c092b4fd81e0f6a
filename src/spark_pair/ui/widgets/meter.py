"""The status bar: TTFT, live tok/s with a sparkline, tokens, usage, cost, retries, transport.

Live numbers come from the formula of `spark-pair run`'s meter (protocol.metrics.timing() with
arrivals): each frame is an arrival of the text it holds, at the time the screen got it (one
TextDelta is one token), and tok/s is the pace of the arrivals that were not late (a frame
handled late, with a backlog, does not inflate it), of the current attempt only (a retry's wait
is no generation time). The live TTFT is the client's own (its FirstToken event), the one the
final numbers carry: timed by the screen, from the turn's start to a frame, it would count the
wait for the socket, connecting, TLS and the frame's lateness, and differ from the final one
(only a client that sends no FirstToken is timed so). Once the stream completes the numbers are
replaced by the client's own measurement, the same numbers `spark-pair run` prints (TTFT and
tok/s of the attempt that answered, named when it was not the first).

Feeding only counts. The line is repainted at most four times a second while the stream runs
(at once when it starts or ends), from its own timer and only when its text changed: repainted
in the same screen update as the live diff, the bar at the bottom would stretch that update
over every pane in between.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping

from rich.text import Text
from textual.timer import Timer
from textual.widget import Widget

from ...protocol.events import (
    Completed,
    Failed,
    FirstToken,
    Metrics,
    ModelChanged,
    Retrying,
    Started,
    TextDelta,
    TransportChanged,
    Usage,
)
from ...protocol.metrics import attempt_note, timing
from ...session.events import (
    RepairFinished,
    RepairStarted,
    SessionEvent,
    TurnFinished,
    TurnStarted,
)
from ...store.stats import cost_usd

SPARK = "▁▂▃▄▅▆▇█"
SAMPLE_S = 0.25  # one sparkline bar per quarter second
PAINT_S = 0.25  # the live line is repainted at most this often
BARS = 12


def compact(n: int) -> str:
    """1234 -> 1.2k, 1234567 -> 1.2M."""
    if n < 1000:
        return str(n)
    if n < 1_000_000:
        return f"{n / 1000:.1f}k"
    return f"{n / 1_000_000:.1f}M"


def sparkline(values: Iterable[float]) -> str:
    vals = list(values)
    top = max(vals, default=0.0)
    if top <= 0:
        return SPARK[0] * len(vals)
    return "".join(SPARK[min(len(SPARK) - 1, int(v / top * (len(SPARK) - 1) + 0.5))]
                   for v in vals)


class Meter(Widget):
    """One line of numbers about the turn in flight (or the last one)."""

    DEFAULT_CSS = """
    Meter {
        height: 1;
        width: 1fr;
        padding: 0 1;
        background: $panel;
        color: $foreground;
    }
    """

    def __init__(self, prices: Mapping[str, tuple[float, float]] | None = None, *,
                 clock: Callable[[], float] = time.perf_counter, name: str | None = None,
                 id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.prices = dict(prices or {})
        self.clock = clock
        self.transport = ""
        self.model = ""
        self._shown = ""  # the text on screen
        self._painted = 0.0  # when it was last repainted (monotonic)
        self._timer: Timer | None = None  # a repaint waiting for its time
        self._soon = False  # a repaint is due after the screen's next update
        self.reset()

    def reset(self) -> None:
        """A new turn: no numbers yet (transport and model are kept)."""
        self.t0: float | None = None
        self.t_first: float | None = None
        self.t_last: float | None = None
        self.tokens = 0
        self.rated = 0  # the tokens of the current attempt (those `arrivals` hold)
        self.context_tokens: int | None = None
        self.usage: Usage | None = None
        self.final: Metrics | None = None
        self.first: FirstToken | None = None  # the client's TTFT of the latest attempt
        self.retries = 0
        self.fallbacks = 0
        self.repair = ""  # the repair round: running, or what it came to
        self.arrivals: list[tuple[float, int]] = []  # (when, characters) of each frame's text
        self.samples: deque[float] = deque(maxlen=BARS)
        self._sample_t: float | None = None
        self._sample_n = 0
        self._repaint(now=True)

    # ---- feeding -------------------------------------------------------------------------------

    def feed(self, events: Iterable[SessionEvent], now: float | None = None) -> None:
        """One frame's events; `now` is when they arrived (the clock's now by default)."""
        now = self.clock() if now is None else now
        if self.t0 is None:
            self.t0 = now
        deltas = chars = 0
        ended = False
        for event in events:
            match event:
                case TextDelta(text=text):
                    deltas += 1
                    chars += len(text)
                case TurnStarted(context_tokens=tokens):
                    self.reset()
                    self.t0, self.context_tokens = now, tokens
                case Started(transport=transport, model=model):
                    self.transport, self.model = transport, model
                case TransportChanged(new=new):
                    self.transport = new
                    self.fallbacks += 1
                    self._again()
                case ModelChanged(new=new):
                    self.model = new
                    self._again()
                case Retrying(attempt=attempt, transport=transport):
                    self.retries = attempt
                    self.transport = transport or self.transport
                    self._again()
                case FirstToken():
                    self.first = event
                case Usage():
                    self.usage = event
                case Completed(metrics=metrics, usage=usage, retries=retries):
                    self.final, self.retries = metrics, retries
                    self.usage = usage or self.usage
                    ended = True
                case RepairStarted(hunks=hunks):
                    self.repair = f"repair {len(hunks)} hunk{'s' if len(hunks) > 1 else ''}…"
                    ended = True
                case RepairFinished(outcome=outcome):
                    fixed = sum(m.fixed for m in outcome.mended)
                    self.repair = f"repaired {fixed}/{len(outcome.mended)}"
                    ended = True
                case TurnFinished() if self.repair.endswith("…"):
                    self.repair = "repair stopped"  # (the turn ended while it ran)
                case Failed(retries=retries, transport=transport):
                    self.retries = retries
                    self.transport = transport or self.transport  # the one tried, not "-"
                    ended = True
                case _:
                    pass
        if deltas:
            if self.t_first is None:
                self.t_first = now
                self._sample_t, self._sample_n = now, 0
            self.tokens += deltas
            self.rated += deltas
            self.t_last = now
            if chars:
                self.arrivals.append((now, chars))
        self._sample(now)
        self._repaint(now=ended)

    def _again(self) -> None:
        """The next attempt begins: the live rate is its own (not across the wait)."""
        self.arrivals, self.rated = [], 0

    # ---- painting ------------------------------------------------------------------------------

    @property
    def pending(self) -> bool:
        """A repaint is waiting for its turn (the line on screen is behind the numbers)."""
        return self._soon or self._timer is not None

    def _repaint(self, now: bool = False) -> None:
        """Repaint once PAINT_S has passed since the last repaint, or at once (`now`); either
        way after the screen's next update, so the live diff's rows are painted first."""
        if not self.is_attached:
            return
        wait = self._painted + PAINT_S - time.monotonic()
        if now or wait <= 0:
            if self._timer is not None:
                self._timer.stop()
                self._timer = None
            if not self._soon:
                self._soon = True
                self.call_after_refresh(self._paint)
        elif self._timer is None and not self._soon:
            self._timer = self.set_timer(wait, self._paint, name="meter")

    def _paint(self) -> None:
        self._timer, self._soon = None, False
        self._painted = time.monotonic()
        if self._line() != self._shown:
            self.refresh()

    def _sample(self, now: float) -> None:
        if self._sample_t is None or self.final is not None:
            return
        span = now - self._sample_t
        if span >= SAMPLE_S:
            self.samples.append((self.tokens - self._sample_n) / span)
            self._sample_t, self._sample_n = now, self.tokens

    # ---- numbers -------------------------------------------------------------------------------

    def metrics(self) -> Metrics | None:
        """The client's measurement once the stream completed, else the live one."""
        if self.final is not None:
            return self.final
        if self.t0 is None or self.t_first is None or self.t_last is None:
            return None
        live = timing(self.t0, self.t_first, self.t_last, self.tokens, arrivals=self.arrivals,
                      rated=self.rated)
        if self.first is None:  # a client that does not say: the screen's own clock
            return live
        # the client's TTFT, the final one if this attempt answers (a retry's stays until the
        # next attempt's first token)
        return Metrics(self.first.ttft_s, live.duration_s, live.output_tokens,
                       live.tokens_per_s, attempt=self.first.attempt)

    def cost(self) -> float | None:
        """USD for the turn so far: the usage when known, else the estimate."""
        if self.usage is not None:
            return cost_usd(self.model, self.usage.input_tokens, self.usage.output_tokens,
                            self.prices)
        return cost_usd(self.model, self.context_tokens or 0, self.tokens, self.prices)

    def parts(self) -> list[str]:
        """The meter's fields in order, the sparkline after tok/s."""
        out = [text for _, text in self._fields()]
        if self.samples:
            out[1] += f" {sparkline(self.samples)}"
        return out

    def _fields(self) -> list[tuple[int, str]]:
        """(rank, text) of each field, without the sparkline: a narrow meter drops the highest
        rank first. TTFT, tok/s and the transport with the model (rank 0) always stay."""
        m = self.metrics()
        ttft = m.ttft_s if m is not None else None
        rate = m.tokens_per_s if m is not None else None
        out = [(0, (f"TTFT {ttft * 1000:.0f} ms" if ttft is not None else "TTFT -")
                + attempt_note(m)),
               (0, f"{rate:,.0f} tok/s" if rate else "- tok/s")]
        u = self.usage
        tokens = u.output_tokens if u is not None else self.tokens
        out.append((2, f"{tokens:,} tok"))
        if u is not None:
            est = " est." if u.estimated else ""
            out.append((3, f"in {compact(u.input_tokens)} out {compact(u.output_tokens)}{est}"))
        elif self.context_tokens is not None:
            out.append((3, f"in ~{compact(self.context_tokens)}"))
        cost = self.cost()
        if cost is not None:
            out.append((4, f"{'~' if u is None else ''}${cost:.4f}"))
        rank = 1 if self.retries or self.fallbacks else 5  # no retry: the least telling field
        out.append((rank, f"{self.retries} retr{'y' if self.retries == 1 else 'ies'}"
                    + (f", {self.fallbacks} fallback" if self.fallbacks else "")))
        if self.repair:
            out.append((1, self.repair))
        # the model that writes the reply, named with its transport (a fix round sent to the
        # stronger model says so here too)
        out.append((0, (self.transport or "-") + (f" · {self.model}" if self.model else "")))
        return out

    def _line(self) -> str:
        """The fields that fit, the sparkline in the room left: it shortens (its oldest bars
        go) before any field goes; then fields go by rank (no retries, cost, usage, tokens,
        retries).
        TTFT, tok/s and the transport stay."""
        width = self.size.width or 200
        sep = " │ "
        fields = self._fields()
        while len(sep.join(t for _, t in fields)) > width:
            rank = max(r for r, _ in fields)
            if rank == 0:
                break
            del fields[max(i for i, (r, _) in enumerate(fields) if r == rank)]
        parts = [t for _, t in fields]
        bars = min(len(self.samples), width - len(sep.join(parts)) - 1)
        if bars > 0:
            parts[1] += f" {sparkline(list(self.samples)[-bars:])}"
        return sep.join(parts)

    def render(self) -> Text:
        self._shown = self._line()
        return Text(self._shown, no_wrap=True, overflow="ellipsis")
