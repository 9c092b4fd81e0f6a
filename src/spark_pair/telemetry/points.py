"""The figures spark-pair exports, and how each is read from what a turn or a bench leaves.

Pure data: no OpenTelemetry here. Each function returns points (name, value, attributes) built
from an allow-list of fields (model ids, transports, error kinds, counts and times). A prompt,
a reply, a file's path or content, a URL and the key never become a point.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

COUNTER, HISTOGRAM, GAUGE = "counter", "histogram", "gauge"


class Metric(NamedTuple):
    kind: str
    unit: str  # a name that ends in its unit (_ms, _per_second) carries none: Prometheus would
    # add it again
    description: str
    attributes: tuple[str, ...]


P = "spark_pair."
METRICS: dict[str, Metric] = {
    P + "session.count": Metric(COUNTER, "{session}", "Sessions started: a run, a watch, the "
                                "app", ()),
    P + "token.usage": Metric(COUNTER, "{token}", "Tokens sent (type=input) and received "
                              "(type=output)", ("type", "model")),
    P + "cost.usage": Metric(COUNTER, "USD", "Cost of the requests, from [prices]",
                             ("model",)),
    P + "turn.ttft.duration_ms": Metric(HISTOGRAM, "", "Time to the first token of a reply, "
                                        "in milliseconds", ("model", "transport")),
    P + "turn.tokens_per_second": Metric(HISTOGRAM, "", "Output tokens per second while a "
                                         "reply streamed", ("model", "transport")),
    P + "turn.e2e_duration_ms": Metric(HISTOGRAM, "", "A request from sending to its last "
                                       "token, in milliseconds", ("model", "transport")),
    P + "code_edit.decision": Metric(COUNTER, "{hunk}", "What a person made of each proposed "
                                     "hunk: kept, amended, rejected",
                                     ("decision", "unit", "model")),
    P + "lines_of_code.count": Metric(COUNTER, "{line}", "Lines written to files by applied "
                                      "turns (type=added, removed)", ("type",)),
    P + "request.errors": Metric(COUNTER, "{request}", "Requests that failed or were cut "
                                 "short, by error kind", ("class", "transport")),
    P + "ws.reconnects": Metric(COUNTER, "{reconnect}", "Retries of a request on the "
                                "WebSocket", ()),
    P + "bench.tokens_per_second": Metric(GAUGE, "", "tok/s per request in the last bench, at "
                                          "a quantile", ("concurrency", "quantile", "transport",
                                                         "model")),
    P + "bench.baseline_tokens_per_second": Metric(
        GAUGE, "", "The same figure in the bench's baseline run (bench --compare's)",
        ("concurrency", "quantile", "transport", "model")),
}
# histogram bucket bounds (the SDK's default suits milliseconds, not tok/s)
BOUNDS: dict[str, tuple[float, ...]] = {
    P + "turn.ttft.duration_ms": (25, 50, 100, 150, 250, 400, 600, 1000, 1500, 2500, 5000,
                                  10000, 30000),
    P + "turn.tokens_per_second": (25, 50, 100, 200, 400, 600, 800, 1000, 1200, 1500, 2000,
                                   3000, 5000),
    P + "turn.e2e_duration_ms": (100, 250, 500, 1000, 2000, 4000, 8000, 15000, 30000, 60000,
                                 120000),
}
QUANTILES = (("0.5", "p50"), ("0.95", "p95"))


class Point(NamedTuple):
    name: str
    value: float
    attributes: dict[str, str]


def of_session() -> list[Point]:
    return [Point(P + "session.count", 1, {})]


def of_record(rec: Any, prices: Mapping[str, tuple[float, float]] | None = None
              ) -> list[Point]:
    """A request record (store.records.RequestRecord)."""
    model, transport = str(rec.model or "unknown"), str(rec.transport or "unknown")
    out: list[Point] = []
    for kind, tokens in (("input", rec.input_tokens), ("output", rec.output_tokens)):
        if tokens:
            out.append(Point(P + "token.usage", tokens, {"type": kind, "model": model}))
    price = (prices or {}).get(model)
    if price is not None and (rec.input_tokens or rec.output_tokens):
        cost = ((rec.input_tokens or 0) * price[0] + (rec.output_tokens or 0) * price[1]) / 1e6
        out.append(Point(P + "cost.usage", cost, {"model": model}))
    where = {"model": model, "transport": transport}
    if rec.status == "ok":
        for name, value in (("turn.ttft.duration_ms", rec.ttft_ms),
                            ("turn.tokens_per_second", rec.tokens_per_s),
                            ("turn.e2e_duration_ms", rec.duration_ms)):
            if value is not None:
                out.append(Point(P + name, float(value), dict(where)))
    elif rec.status in ("error", "cut"):
        kind = str(rec.error_class or ("incomplete" if rec.status == "cut" else "unknown"))
        out.append(Point(P + "request.errors", 1, {"class": kind, "transport": transport}))
    return out


def of_retry(event: Any) -> list[Point]:
    """A protocol Retrying event: a reconnect when the failed attempt was on the WebSocket."""
    if str(getattr(event, "transport", None) or "") == "ws":
        return [Point(P + "ws.reconnects", 1, {})]
    return []


def of_verdicts(model: str, verdicts: Iterable[Any]) -> list[Point]:
    """A person's verdicts (verdicts.Verdict): one decision per hunk (or whole operation)."""
    counts: dict[str, int] = {}
    for v in verdicts:
        counts[str(v.fate)] = counts.get(str(v.fate), 0) + 1
    return [Point(P + "code_edit.decision", n, {"decision": fate, "unit": "hunk",
                                                 "model": str(model or "unknown")})
            for fate, n in counts.items()]


def of_result(result: Any) -> list[Point]:
    """A finished turn (session_events.TurnResult): the lines its applied operations wrote."""
    added = removed = 0
    for op, decision, outcome in zip(result.operations, result.decisions, result.outcomes,
                                     strict=False):
        if str(outcome) != "applied":
            continue
        a, r = _lines(op, decision)
        added, removed = added + a, removed + r
    return [Point(P + "lines_of_code.count", n, {"type": kind})
            for kind, n in (("added", added), ("removed", removed)) if n]


def _lines(op: Any, decision: Any) -> tuple[int, int]:
    hunks = getattr(op, "hunks", None)
    if hunks is not None:  # a modify or a rename: the chosen hunks, as a person left them
        chosen = range(len(hunks)) if decision is None or decision.hunks is None \
            else decision.hunks
        own = dict(decision.amended) if decision is not None else {}
        picked = [own.get(i, hunks[i]) for i in chosen if i < len(hunks)]
        return sum(h.added for h in picked), sum(h.removed for h in picked)
    content = getattr(op, "content", None)
    if content is not None:  # a create
        text = decision.content if decision is not None and decision.content is not None \
            else content
        return text.count("\n") + (bool(text) and not text.endswith("\n")), 0
    lines = getattr(op, "lines", None)  # a delete (the lines it shows, if any)
    return 0, len(lines or ())


def of_bench(data: Mapping[str, Any], baseline: Mapping[str, Any] | None) -> list[Point]:
    """A bench run and its baseline (benchmark.BenchResult.as_dict() form)."""
    model = str((data.get("plan") or {}).get("model") or "unknown")
    out: list[Point] = []
    for name, run in (("bench.tokens_per_second", data),
                      ("bench.baseline_tokens_per_second", baseline)):
        for level in (run or {}).get("levels", []):
            spread = level.get("tokens_per_s") or {}
            for quantile, key in QUANTILES:
                value = spread.get(key)
                if value is not None:
                    out.append(Point(P + name, float(value), {
                        "concurrency": str(level["concurrency"]), "quantile": quantile,
                        "transport": str(level["transport"]), "model": model}))
    return out
