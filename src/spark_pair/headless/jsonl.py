"""Session events -> JSON lines (one object per line on stdout). Schema: headless/schema.json,
documented in docs/headless.md. Every line has "type" and "t" (seconds since the run began)."""

from __future__ import annotations

import json
import time
from typing import Any, TextIO

from ..base.errors import SparkPairError, redact
from ..edits.ops import Create, Delete, Operation, op_kind
from ..edits.parse_events import FileStarted, HunkStarted
from ..protocol.events import (
    Completed,
    Failed,
    Metrics,
    ModelChanged,
    Retrying,
    Rewound,
    Started,
    TextDelta,
    TransportChanged,
    Usage,
)
from ..session.events import (
    Applied,
    ContextChosen,
    Decided,
    Looked,
    Refused,
    RepairFinished,
    RepairRetrying,
    SessionEvent,
    Stale,
    TurnResult,
    TurnStarted,
)
from ..store import stats

SCHEMA_VERSION = 1


def _op_fields(op: Operation, hunk_lines: int | None = None) -> dict[str, Any]:
    kind = op_kind(op)
    out: dict[str, Any] = {"op": kind, "path": op.path, "new_path": getattr(op, "dst", None)}
    hunks = getattr(op, "hunks", None) or []
    # a create or delete holds no Hunk objects: count the `hunk` lines its diff had
    out["hunks"] = len(hunks) if hunks or hunk_lines is None else hunk_lines
    out["added"] = sum(h.added for h in hunks)
    out["removed"] = sum(h.removed for h in hunks)
    if isinstance(op, Create):
        out["added"] = op.content.count("\n") + (bool(op.content) and not op.content.endswith("\n"))
    elif isinstance(op, Delete):
        out["removed"] = op.removed
    out["summary"] = op.summary()
    # hunks placed other than exactly as written (edits.placement): a person can look
    out["loose"] = [{"hunk": j, **h.placement.as_json()} for j, h in enumerate(hunks)
                    if h.placement is not None and h.placement.loose]
    return out


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000.0, 1)


def error_fields(error: BaseException) -> dict[str, Any]:
    if isinstance(error, SparkPairError):
        return error.to_dict()
    return {"class": type(error).__name__, "kind": "internal", "message": redact(str(error))}


def _context_file(f: Any) -> dict[str, Any]:
    """A file a request sent (workspace.context.ContextFile, workspace.look.Sent)."""
    return {"path": f.path, "reason": f.reason, "tokens": f.tokens, "shown": f.shown} | (
        {"lines": [list(r) for r in f.regions]} if f.regions else {})


def event_to_dict(event: SessionEvent, *, deltas: bool = False) -> dict[str, Any] | None:
    """One JSON object for a session event, or None when that event is not reported."""
    match event:
        case TurnStarted():
            return {"type": "turn", "turn_id": event.turn_id, "files": list(event.files),
                    "context_tokens": event.context_tokens, "followup": event.followup}
        case ContextChosen():
            return {"type": "context",
                    "files": [_context_file(f) for f in event.files],
                    "withheld": [{"path": p, "reason": why, "named": named}
                                 for p, why, named in event.withheld],
                    "map_tokens": event.map_tokens}
        case Looked():
            return {"type": "look", "asked": list(event.asked),
                    "files": [_context_file(f) for f in event.files],
                    "not_sent": [{"name": n, "reason": why} for n, why in event.refused],
                    "tokens": event.tokens, "first_ms": event.first_ms}
        case Started():
            return {"type": "request", "request_id": event.request_id,
                    "transport": event.transport, "model": event.model,
                    "url": redact(event.url)}
        case TextDelta():
            return {"type": "delta", "text": event.text} if deltas else None
        case Retrying():
            return {"type": "retry", "attempt": event.attempt,
                    "delay_s": round(event.delay_s, 3), "reason": event.reason}
        case RepairRetrying(retry=retry):  # (the line of a retry, after `metrics`)
            return event_to_dict(retry)
        case Rewound():
            return {"type": "rewind", "keep": event.keep, "reason": event.reason}
        case TransportChanged():
            return {"type": "transport_changed", "old": event.old, "new": event.new,
                    "reason": redact(event.reason)}
        case ModelChanged():
            return {"type": "model_changed", "old": event.old, "new": event.new,
                    "reason": redact(event.reason)}
        case Completed():
            return metrics_line(event.metrics, event.retries, event.response_id)
        case Failed():
            return {"type": "error", "retries": event.retries, **error_fields(event.error)}
        case FileStarted():
            return {"type": "file", "index": event.index, "op": event.op_kind,
                    "path": event.path, "new_path": event.new_path}
        case HunkStarted(header=h):
            return {"type": "hunk", "file_index": event.op_index,
                    "hunk_index": event.hunk_index, "old_start": h.old_start,
                    "old_len": h.old_len, "new_start": h.new_start, "new_len": h.new_len,
                    "section": h.section}
        case Stale():
            return {"type": "stale", "path": event.path, "index": event.index}
        case Decided():
            return {"type": "decision", "index": event.index, "path": event.op.path,
                    "decision": event.decision.action, "reason": event.decision.reason}
        case Refused():
            return {"type": "refused", "index": event.index, "path": event.op.path,
                    "reason": redact(event.reason), "kind": event.kind}
        case RepairFinished(outcome=o):
            return {"type": "repair", "outcome": o.verdict, "cause": redact(o.cause),
                    "hunks": [{"index": m.op_index, "hunk": m.hunk_index, "path": m.path,
                               "fixed": m.fixed, "cause": redact(m.cause)} for m in o.mended],
                    "ignored": [redact(n) for n in o.ignored],
                    "output_tokens": o.usage.output_tokens if o.usage else None,
                    "duration_ms": _ms(o.metrics.duration_s) if o.metrics else None}
        case Applied():
            return {"type": "applied", "turn_id": event.turn_id, "changed": list(event.changed),
                    "notes": list(event.notes)}
    return None  # Usage (reported in "usage"), FirstToken (its TTFT is in "metrics"),
    # LineAdded, FileFinished, OperationProposed


def metrics_line(m: Metrics, retries: int, response_id: str | None) -> dict[str, Any]:
    """The `metrics` line: of a whole reply, or (partial) of one stopped before its end."""
    return {"type": "metrics", "ttft_ms": _ms(m.ttft_s), "duration_ms": _ms(m.duration_s),
            "output_tokens": m.output_tokens,
            "tokens_per_s": None if m.tokens_per_s is None else round(m.tokens_per_s, 1),
            "retries": retries, "response_id": response_id, "partial": m.partial,
            "attempt": m.attempt, "connect_ms": _ms(m.connect_s)}


def result_lines(result: TurnResult, prices: dict[str, tuple[float, float]] | None = None,
                 hunk_lines: dict[int, int] | None = None) -> list[dict[str, Any]]:
    """The per-operation lines (decision and outcome) and the usage line of a finished turn.
    `hunk_lines`: file index -> the `hunk` lines emitted for it (operation i is file i)."""
    lines: list[dict[str, Any]] = []
    if result.metrics is not None and result.metrics.partial:  # no reply's end: measured so far
        lines.append(metrics_line(result.metrics, result.retries, result.response_id))
    for i, op in enumerate(result.operations):
        d = result.decisions[i] if i < len(result.decisions) else None
        counted = None if hunk_lines is None else hunk_lines.get(i, 0)
        lines.append({"type": "operation", "index": i, **_op_fields(op, counted),
                      "decision": d.action if d else None, "reason": d.reason if d else None,
                      "outcome": result.outcomes[i] if i < len(result.outcomes) else "not_applied"})
    u = result.usage
    if u is not None:
        lines.append({"type": "usage", "model": result.model, "input_tokens": u.input_tokens,
                      "output_tokens": u.output_tokens, "estimated": u.estimated,
                      "cost_usd": cost_usd(prices, result.model, u)})
    return lines


def cost_usd(prices: dict[str, tuple[float, float]] | None, model: str, usage: Usage
             ) -> float | None:
    cost = stats.cost_usd(model, usage.input_tokens, usage.output_tokens, prices or {})
    return None if cost is None else round(cost, 6)


class JsonLines:
    """Writes one compact JSON object per line and flushes it."""

    def __init__(self, out: TextIO, t0: float | None = None) -> None:
        self.out = out
        self.t0 = time.monotonic() if t0 is None else t0

    def write(self, obj: dict[str, Any]) -> None:
        line = {"type": obj["type"], "t": round(time.monotonic() - self.t0, 4)}
        line.update(obj)
        text = json.dumps(line, ensure_ascii=False, separators=(",", ":"))
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate from a broken reply: \uXXXX escapes
            text = json.dumps(line, separators=(",", ":"))
        self.out.write(text + "\n")
        self.out.flush()
