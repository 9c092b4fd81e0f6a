"""Aggregate request records: counts, tokens, TTFT / tok/s percentiles, errors, cost.

Pure functions over RequestRecord lists; no I/O, no UI. `spark-pair stats` renders the result.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from ..protocol.records import RequestRecord, RequestStatus

Prices = Mapping[str, tuple[float, float]]  # model -> (USD per million input, per million output)
# replies shorter than this have no steady rate (TTFT and start-up dominate): they are left out
# of the tok/s percentiles
TPS_MIN_OUTPUT_TOKENS = 50
PREWARM = ("hit", "prefix", "miss")


def percentile(values: Sequence[float], q: float) -> float | None:
    """The q-th percentile (0..100) with linear interpolation; None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100.0
    low = math.floor(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


@dataclass(frozen=True, slots=True)
class Spread:
    """p50 / p95 / min / max of one measure (None when no request had it)."""

    p50: float | None = None
    p95: float | None = None
    min: float | None = None
    max: float | None = None
    count: int = 0

    @classmethod
    def of(cls, values: Iterable[float | None]) -> Spread:
        vals = [float(v) for v in values if v is not None]
        if not vals:
            return cls()
        return cls(percentile(vals, 50), percentile(vals, 95), min(vals), max(vals), len(vals))

    def as_dict(self) -> dict[str, float | int | None]:
        return {"p50": self.p50, "p95": self.p95, "min": self.min, "max": self.max,
                "count": self.count}


def cost_usd(model: str, tokens_in: int, tokens_out: int, prices: Prices) -> float | None:
    """USD cost of tokens in and out of a model; None if the model has no price."""
    price = prices.get(model)
    if price is None:
        return None
    return (tokens_in * price[0] + tokens_out * price[1]) / 1_000_000


def record_cost(rec: RequestRecord, prices: Prices) -> float | None:
    """USD cost of one request from the price table; None if the model has no price."""
    return cost_usd(rec.model, rec.input_tokens or 0, rec.output_tokens or 0, prices)


@dataclass(slots=True)
class Group:
    """The summary of a set of requests (all, or one model / transport / day)."""

    key: str
    requests: int = 0
    ok: int = 0
    errors: int = 0
    cut: int = 0  # replies the server ended early or without any output (not whole answers)
    cancelled: int = 0
    error_classes: dict[str, int] = field(default_factory=dict)
    retries: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    ttft_ms: Spread = field(default_factory=Spread)
    tokens_per_s: Spread = field(default_factory=Spread)
    cost: float = 0.0
    unpriced: int = 0  # requests whose model has no price (not in `cost`)

    @property
    def error_rate(self) -> float:
        return self.errors / self.requests if self.requests else 0.0

    @property
    def cut_rate(self) -> float:
        return self.cut / self.requests if self.requests else 0.0

    def as_dict(self) -> dict[str, object]:
        return {
            "key": self.key, "requests": self.requests, "ok": self.ok, "errors": self.errors,
            "cut": self.cut, "cancelled": self.cancelled, "error_rate": self.error_rate,
            "cut_rate": self.cut_rate,
            "error_classes": dict(self.error_classes), "retries": self.retries,
            "input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
            "ttft_ms": self.ttft_ms.as_dict(), "tokens_per_s": self.tokens_per_s.as_dict(),
            "cost_usd": _usd(self.cost, self.unpriced), "unpriced_requests": self.unpriced,
        }


def _usd(cost: float, unpriced: int) -> float | None:
    """A cost for JSON: null when nothing was priced (requests without a price and no cost:
    unknown, not free), as the text report's `-`."""
    return None if unpriced and not cost else round(cost, 6)


def summarize_group(key: str, records: Sequence[RequestRecord], prices: Prices) -> Group:
    group = Group(key=key, requests=len(records))
    for rec in records:
        if rec.status == RequestStatus.OK:
            group.ok += 1
        elif rec.status == RequestStatus.CUT:
            group.cut += 1
        elif rec.status == RequestStatus.CANCELLED:
            group.cancelled += 1
        else:
            group.errors += 1
            name = rec.error_class or "unknown"
            group.error_classes[name] = group.error_classes.get(name, 0) + 1
        group.retries += rec.retries
        group.input_tokens += rec.input_tokens or 0
        group.output_tokens += rec.output_tokens or 0
        cost = record_cost(rec, prices)
        if cost is None:
            group.unpriced += 1
        else:
            group.cost += cost
    # a cut reply was timed whole
    ok = [r for r in records if r.status in (RequestStatus.OK, RequestStatus.CUT)]
    group.ttft_ms = Spread.of(r.ttft_ms for r in ok)
    group.tokens_per_s = Spread.of(r.tokens_per_s for r in ok
                                   if (r.output_tokens or 0) >= TPS_MIN_OUTPUT_TOKENS)
    return group


def day_of(ts: float) -> str:
    """The local calendar day of a timestamp, YYYY-MM-DD."""
    return time.strftime("%Y-%m-%d", time.localtime(ts))


KEYS: dict[str, Callable[[RequestRecord], str]] = {
    "model": lambda r: r.model or "?",
    "transport": lambda r: r.transport or "?",
    "day": lambda r: day_of(r.ts),
    "task": lambda r: r.task or "?",
}


def group_by(records: Sequence[RequestRecord], by: str, prices: Prices) -> list[Group]:
    """One Group per distinct value of `by` (model / transport / day / task), sorted by key."""
    key_of = KEYS[by]
    buckets: dict[str, list[RequestRecord]] = {}
    for rec in records:
        buckets.setdefault(key_of(rec), []).append(rec)
    return [summarize_group(k, buckets[k], prices) for k in sorted(buckets)]


@dataclass(slots=True)
class TurnCost:
    """Cost per applied turn: what the edit requests cost, divided by the turns applied.

    Edit requests that applied nothing (rejected, failed, regenerated) still count in the cost:
    they are the price of the turns that did apply.
    """

    applied_turns: int = 0
    edit_requests: int = 0
    cost: float = 0.0
    tokens: int = 0
    unpriced: int = 0
    prewarm_tokens: int = 0  # input the drafts' pre-warms sent before the edit requests
    # requests that met a draft's pre-warm: "hit" / "prefix" / "miss" (protocol.client)
    prewarm: dict[str, int] = field(default_factory=lambda: dict.fromkeys(PREWARM, 0))
    rolled_back: int = 0  # turns applied, then rolled back (a failing check): not counted
    undone: int = 0  # turns applied, then undone by the user (/undo): not counted

    @property
    def prewarm_per_turn(self) -> float | None:
        return self.prewarm_tokens / self.applied_turns if self.applied_turns else None

    @property
    def cost_per_turn(self) -> float | None:
        return self.cost / self.applied_turns if self.applied_turns else None

    @property
    def tokens_per_turn(self) -> float | None:
        return self.tokens / self.applied_turns if self.applied_turns else None

    def as_dict(self) -> dict[str, object]:
        per = self.cost_per_turn
        return {"applied_turns": self.applied_turns, "edit_requests": self.edit_requests,
                "cost_usd": _usd(self.cost, self.unpriced), "tokens": self.tokens,
                "cost_per_turn_usd": None if per is None else _usd(per, self.unpriced),
                "tokens_per_turn": self.tokens_per_turn, "unpriced_requests": self.unpriced,
                "prewarm_tokens": self.prewarm_tokens,
                "prewarm_tokens_per_turn": self.prewarm_per_turn,
                "prewarm": dict(self.prewarm), "rolled_back_turns": self.rolled_back,
                "undone_turns": self.undone}


def turn_cost(records: Sequence[RequestRecord], prices: Prices,
              rolled_back: Iterable[str] = (), undone: Iterable[str] = ()) -> TurnCost:
    """`rolled_back`: turn ids taken back after their check failed; `undone`: turn ids the
    user undid (/undo). Neither is an applied turn (a turn in both counts as rolled back)."""
    out = TurnCost()
    turns = {r.turn_id for r in records if r.turn_id}
    back = turns & set(rolled_back)
    out.rolled_back = len(back)
    out.undone = len((turns & set(undone)) - back)
    out.applied_turns = len(turns) - out.rolled_back - out.undone
    for rec in records:
        met = rec.extra.get("prewarm")
        if met in out.prewarm:
            out.prewarm[met] += 1
        if rec.task not in ("edit", "repair", "look") and not rec.turn_id:
            continue
        out.edit_requests += 1
        out.tokens += (rec.input_tokens or 0) + (rec.output_tokens or 0)
        warm = rec.extra.get("prewarm_tokens")
        out.prewarm_tokens += warm if isinstance(warm, int) else 0
        cost = record_cost(rec, prices)
        if cost is None:
            out.unpriced += 1
        else:
            out.cost += cost
    return out


@dataclass(slots=True)
class StatsReport:
    total: Group
    groups: dict[str, list[Group]]  # "model" / "transport" / "day" -> groups
    turns: TurnCost
    since: float | None = None
    missing_prices: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, object]:
        return {
            "since": self.since, "tps_min_output_tokens": TPS_MIN_OUTPUT_TOKENS,
            "total": self.total.as_dict(),
            "by": {name: [g.as_dict() for g in groups] for name, groups in self.groups.items()},
            "turns": self.turns.as_dict(), "missing_prices": list(self.missing_prices),
        }


def build_report(records: Sequence[RequestRecord], prices: Prices,
                 by: Sequence[str] = ("model", "transport", "day"),
                 since: float | None = None, rolled_back: Iterable[str] = (),
                 undone: Iterable[str] = ()) -> StatsReport:
    """Everything `spark-pair stats` shows, from the records (already filtered by time)."""
    unknown = [name for name in by if name not in KEYS]
    if unknown:
        raise ValueError(f"cannot group by {', '.join(unknown)}")
    missing = sorted({r.model for r in records if r.model not in prices})
    return StatsReport(
        total=summarize_group("all", records, prices),
        groups={name: group_by(records, name, prices) for name in by},
        turns=turn_cost(records, prices, rolled_back, undone),
        since=since,
        missing_prices=missing,
    )
