"""The concurrency sweep behind `spark-pair bench`: plain results, no UI.

For each transport and each concurrency level, N requests run on `concurrency` clients in
parallel (one client each: a WebSocket carries one response at a time). Per request: TTFT,
steady tok/s, retries, error class; per level: spreads, aggregate throughput, error rate.
The knee is the level with the highest aggregate throughput whose error rate stays under the
threshold. Bounded: N requests per level and a total time budget (`max_seconds`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from contextlib import AsyncExitStack
from dataclasses import asdict, dataclass, field
from typing import Any

from ...protocol import errors_map
from ...protocol.events import (
    Completed,
    Failed,
    Message,
    Retrying,
    Started,
    TextDelta,
    TransportChanged,
    TurnRequest,
)
from ...store.stats import Spread

BENCH_PROMPT = ("Write a Python module with ten small, documented utility functions for "
                "string handling, each with a docstring and a doctest.")
LONG_PROMPT = ("Write a complete, long technical tutorial (at least 6,000 words) on building "
               "a text editor in Python, with full code listings for every step.")
DEFAULT_CONCURRENCY = (1, 4, 8, 16)
# error classes that more load cannot fix: a level where every request fails so ends the sweep
SETUP_ERRORS = {"auth", "endpoint", "redirect", "model_not_found", "bad_request", "connection",
                "protocol"}
LONG_MAX_TOKENS = 8192
REGRESSION_DROP = 0.10  # a tok/s drop larger than this against the baseline is a regression


@dataclass
class BenchPlan:
    model: str
    transports: list[str] = field(default_factory=lambda: ["auto"])
    concurrency: list[int] = field(default_factory=lambda: list(DEFAULT_CONCURRENCY))
    requests: int = 8  # per level
    max_tokens: int = 1024
    long: bool = False
    max_seconds: float = 300.0
    max_error_rate: float = 0.05
    base_host: str = ""
    prompt: str = ""

    def requests_at(self, concurrency: int) -> int:
        """Requests a level runs: --requests, but at least the level's concurrency (so every
        parallel slot gets a request)."""
        return max(self.requests, concurrency)

    def turn_request(self) -> TurnRequest:
        prompt = self.prompt or (LONG_PROMPT if self.long else BENCH_PROMPT)
        return TurnRequest(instructions="You are a helpful coding assistant.",
                           new_input=[Message("user", prompt)], max_tokens=self.max_tokens,
                           task="bench")


@dataclass
class RequestResult:
    ok: bool
    transport: str
    error_class: str | None = None
    ttft_ms: float | None = None
    duration_ms: float | None = None
    output_tokens: int = 0
    tokens_per_s: float | None = None
    retries: int = 0
    cut: bool = False  # stopped by the time budget (not an error)
    error: str = ""  # the error's message, for a failed request
    hint: str = ""  # and its hint
    # long mode: seconds from the request start at which each 1,000 output tokens were reached
    thousands_s: list[float] = field(default_factory=list)


@dataclass
class LevelResult:
    transport: str
    concurrency: int
    requests: int
    ok: int
    errors: int
    error_classes: dict[str, int]
    retries: int
    ttft_ms: Spread
    tokens_per_s: Spread
    aggregate_tps: float
    wall_s: float
    cut: int = 0
    thousands_s: list[float] = field(default_factory=list)  # long mode: mean per 1,000 tokens
    first_error: str = ""
    first_hint: str = ""

    @property
    def error_rate(self) -> float:
        done = self.ok + self.errors
        return self.errors / done if done else 0.0

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["ttft_ms"] = self.ttft_ms.as_dict()
        out["tokens_per_s"] = self.tokens_per_s.as_dict()
        out["error_rate"] = self.error_rate
        return out


@dataclass
class BenchResult:
    plan: BenchPlan
    levels: list[LevelResult]
    started: float
    wall_s: float
    truncated: bool = False  # the time budget ran out before every level finished
    aborted: str = ""  # why the sweep stopped early (a request failed for a set-up reason)
    abort_hint: str = ""  # how to fix that

    def knee(self, transport: str) -> LevelResult | None:
        """Highest aggregate throughput with an error rate under the plan's threshold."""
        good = [lv for lv in self.levels if lv.transport == transport and lv.ok
                and lv.error_rate < self.plan.max_error_rate]
        return max(good, key=lambda lv: lv.aggregate_tps, default=None)

    @property
    def transports(self) -> list[str]:
        return list(dict.fromkeys(lv.transport for lv in self.levels))

    def as_dict(self) -> dict[str, Any]:
        knees = {}
        for t in self.transports:
            knee = self.knee(t)
            knees[t] = None if knee is None else {"concurrency": knee.concurrency,
                                                  "aggregate_tps": knee.aggregate_tps}
        plan = asdict(self.plan)
        plan.pop("prompt", None)
        return {"started": self.started, "wall_s": self.wall_s, "truncated": self.truncated,
                "aborted": self.aborted or None, "abort_hint": self.abort_hint or None,
                "plan": plan, "levels": [lv.as_dict() for lv in self.levels], "knee": knees}


@dataclass
class Progress:
    transport: str
    concurrency: int
    done: int
    total: int
    errors: int
    output_tokens: int
    elapsed_s: float


ClientFactory = Callable[[str], Any]  # transport -> a ModelClient-like async context manager


async def run_bench(plan: BenchPlan, make_client: ClientFactory,
                    on_progress: Callable[[Progress], None] | None = None) -> BenchResult:
    """Run the sweep. `make_client(transport)` gives a fresh client (one per parallel slot)."""
    started, t0 = time.time(), time.monotonic()
    deadline = t0 + plan.max_seconds
    levels: list[LevelResult] = []
    truncated, aborted, hint = False, "", ""
    for transport in plan.transports:
        for concurrency in plan.concurrency:
            if time.monotonic() >= deadline:
                truncated = True
                break
            level = await _run_level(plan, transport, concurrency, make_client, deadline,
                                     on_progress)
            levels.append(level)
            if level.errors and not level.ok and set(level.error_classes) <= SETUP_ERRORS:
                aborted = f"a request on {transport} at concurrency {concurrency} failed: " \
                          f"{level.first_error}"
                hint = level.first_hint
                break
            truncated = (truncated or level.cut > 0
                         or level.ok + level.errors < plan.requests_at(concurrency))
        if aborted:
            break
    return BenchResult(plan, levels, started, time.monotonic() - t0, truncated, aborted, hint)


async def _run_level(plan: BenchPlan, transport: str, concurrency: int,
                     make_client: ClientFactory, deadline: float,
                     on_progress: Callable[[Progress], None] | None) -> LevelResult:
    results: list[RequestResult] = []
    next_index = 0
    total = plan.requests_at(concurrency)
    start = time.monotonic()
    tasks: list[asyncio.Task[None]] = []

    def report() -> None:
        if on_progress is not None:
            on_progress(Progress(transport, concurrency, len(results), total,
                                 sum(not r.ok and not r.cut for r in results),
                                 sum(r.output_tokens for r in results if r.ok),
                                 time.monotonic() - start))

    async def worker(client: Any) -> None:
        nonlocal next_index
        while next_index < total and time.monotonic() < deadline:
            next_index += 1
            left = deadline - time.monotonic()
            try:
                result = await asyncio.wait_for(_one_request(client, plan, transport), left)
            except TimeoutError:
                result = RequestResult(ok=False, transport=transport, cut=True)
            results.append(result)
            report()
            if (result.error_class in SETUP_ERRORS
                    and not any(r.ok for r in results)):  # the set-up is broken: stop now
                next_index = total
                for task in tasks:
                    if task is not asyncio.current_task():
                        task.cancel()
                return

    report()
    async with AsyncExitStack() as stack:
        clients = [await stack.enter_async_context(make_client(transport))
                   for _ in range(min(concurrency, total))]
        start = time.monotonic()
        tasks.extend(asyncio.ensure_future(worker(c)) for c in clients)
        await asyncio.gather(*tasks, return_exceptions=True)
        wall = time.monotonic() - start
    return _summarize(transport, concurrency, results, wall)


async def _one_request(client: Any, plan: BenchPlan, transport: str) -> RequestResult:
    """One streamed request; never raises for a model failure."""
    t0 = time.monotonic()
    marks: list[tuple[float, int]] = []  # (seconds since start, characters so far)
    chars, retries, used = 0, 0, transport
    try:
        async for event in client.stream(plan.turn_request()):
            if isinstance(event, TextDelta):
                chars += len(event.text)
                if plan.long:
                    marks.append((time.monotonic() - t0, chars))
            elif isinstance(event, Started):
                used = event.transport
            elif isinstance(event, TransportChanged):
                used = event.new
            elif isinstance(event, Retrying):
                retries += 1
            elif isinstance(event, Completed):
                return _completed(event, used, max(retries, event.retries), marks, chars)
            elif isinstance(event, Failed):
                return RequestResult(ok=False, transport=used, error_class=event.error.kind,
                                     retries=max(retries, event.retries),
                                     duration_ms=(time.monotonic() - t0) * 1000,
                                     error=event.error.message, hint=event.error.hint)
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # noqa: BLE001 - a client bug must not end the whole sweep
        return RequestResult(ok=False, transport=used, retries=retries, error=str(exc),
                             error_class=f"internal:{type(exc).__name__}")
    return RequestResult(ok=False, transport=used, error_class="protocol", retries=retries)


def _completed(event: Completed, transport: str, retries: int,
               marks: list[tuple[float, int]], chars: int) -> RequestResult:
    m = event.metrics
    tokens = event.usage.output_tokens if event.usage else m.output_tokens
    short = event.shortfall()  # cut by the server, or no output: not a success
    if errors_map.output_limit_reached(short):
        short = None  # it stopped at --max-tokens: every token it was asked for
    return RequestResult(
        ok=short is None, transport=transport, error_class=short.kind if short else None,
        error=short.message if short else "", hint=short.hint if short else "",
        ttft_ms=None if m.ttft_s is None else m.ttft_s * 1000, duration_ms=m.duration_s * 1000,
        output_tokens=tokens, tokens_per_s=m.tokens_per_s, retries=retries,
        thousands_s=thousand_marks(marks, chars, tokens))


def thousand_marks(marks: list[tuple[float, int]], chars: int, tokens: int) -> list[float]:
    """Seconds at which the 1,000th, 2,000th, ... token arrived (tokens spread over the chars)."""
    if not marks or not chars or tokens < 1000:
        return []
    per_char = tokens / chars
    out: list[float] = []
    goal = 1000
    for seconds, so_far in marks:
        while so_far * per_char >= goal and goal <= tokens:
            out.append(seconds)
            goal += 1000
    return out


def _summarize(transport: str, concurrency: int, results: list[RequestResult],
               wall: float) -> LevelResult:
    done = [r for r in results if not r.cut]
    ok = [r for r in done if r.ok]
    classes: dict[str, int] = {}
    for r in done:
        if not r.ok:
            name = r.error_class or "unknown"
            classes[name] = classes.get(name, 0) + 1
    used = next((r.transport for r in ok), transport)
    curves = [r.thousands_s for r in ok if r.thousands_s]
    mean_curve: list[float] = []
    for i in range(max((len(c) for c in curves), default=0)):
        points = [c[i] for c in curves if len(c) > i]
        mean_curve.append(sum(points) / len(points))
    return LevelResult(
        transport=used if transport == "auto" else transport, concurrency=concurrency,
        requests=len(results), ok=len(ok), errors=len(done) - len(ok), error_classes=classes,
        retries=sum(r.retries for r in results),
        ttft_ms=Spread.of(r.ttft_ms for r in ok),
        tokens_per_s=Spread.of(r.tokens_per_s for r in ok),
        aggregate_tps=sum(r.output_tokens for r in ok) / wall if wall > 0 else 0.0,
        wall_s=wall, cut=len(results) - len(done), thousands_s=mean_curve,
        first_error=next((r.error for r in done if not r.ok and r.error), ""),
        first_hint=next((r.hint for r in done if not r.ok and r.error), ""))


# ---- comparison against a stored run ------------------------------------------------------

def baseline_run(runs: list[dict[str, Any]], current: dict[str, Any]) -> dict[str, Any] | None:
    """The stored run (as_dict() form) to compare `current` with: the newest one with the same
    model, host, long mode and max_tokens that was set with --set-baseline, or was complete
    and not itself a regression. A regressed run never becomes the baseline by itself."""
    plan = current["plan"]
    keys = ("model", "base_host", "long", "max_tokens")

    def eligible(run: dict[str, Any]) -> bool:
        other = run.get("plan") or {}
        if any(other.get(k) != plan.get(k) for k in keys) or run.get("aborted"):
            return False
        if run.get("set_baseline"):
            return True
        return not run.get("regression") and not run.get("truncated")

    good = [r for r in runs if isinstance(r, dict) and eligible(r)]
    return max(good, key=lambda r: (r.get("started") or 0, r.get("id") or 0), default=None)


@dataclass
class Change:
    transport: str
    concurrency: int
    tps_before: float | None
    tps_after: float | None
    errors_before: float
    errors_after: float
    regression: bool
    reason: str = ""


def compare(current: dict[str, Any], previous: dict[str, Any]) -> list[Change]:
    """Per (transport, concurrency) present in both runs (as_dict() form): the change and
    whether it is a regression (p50 tok/s more than 10% lower, or a higher error rate)."""
    before = {(lv["transport"], lv["concurrency"]): lv for lv in previous.get("levels", [])}
    changes = []
    for lv in current.get("levels", []):
        old = before.get((lv["transport"], lv["concurrency"]))
        if old is None:
            continue
        tps_a, tps_b = lv["tokens_per_s"]["p50"], old["tokens_per_s"]["p50"]
        err_a, err_b = lv["error_rate"], old["error_rate"]
        reasons = []
        if tps_a is not None and tps_b and tps_a < tps_b * (1 - REGRESSION_DROP):
            reasons.append(f"tok/s {100 * (tps_a / tps_b - 1):+.0f}%")
        if tps_a is None and tps_b:
            reasons.append("no successful request")
        if err_a > err_b:
            reasons.append(f"error rate {100 * err_b:.0f}% -> {100 * err_a:.0f}%")
        changes.append(Change(lv["transport"], lv["concurrency"], tps_b, tps_a, err_b, err_a,
                              bool(reasons), "; ".join(reasons)))
    return changes
