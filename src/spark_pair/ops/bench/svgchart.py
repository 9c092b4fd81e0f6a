"""The bench chart as SVG, written by hand: no plotting library needed (`bench --plot x.svg`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from ...base.transport import Transport

COLOURS = {Transport.WS: "#1f77b4", Transport.RESPONSES: "#2ca02c", Transport.CHAT: "#ff7f0e"}
RED, GREY = "#d62728", "#7f7f7f"
PANEL_W, PANEL_H = 420, 300
MARGIN_L, MARGIN_T, MARGIN_B, GAP = 64, 56, 96, 40


@dataclass
class Series:
    label: str
    colour: str
    points: list[tuple[float, float]]
    dashed: bool = False


@dataclass
class Panel:
    title: str
    x_label: str
    y_label: str
    series: list[Series] = field(default_factory=list)
    log_x: bool = True
    x_ticks: list[float] = field(default_factory=list)
    y_top: float = 1.0
    limit: float | None = None  # a dotted horizontal line (the error-rate limit)
    marks: list[tuple[float, float, str]] = field(default_factory=list)  # (x, y, text): knees


def bench_svg(result: Any, title: str = "") -> str:
    """The SVG text: throughput and per-request tok/s by concurrency, error rate, and (long
    mode) time per 1,000 tokens. `result` is a benchmark.BenchResult."""
    levels = result.levels
    ticks = sorted({float(lv.concurrency) for lv in levels}) or [1.0]
    tput = Panel("Throughput", "concurrency", "tokens / s", x_ticks=ticks)
    errors = Panel("Errors", "concurrency", "error rate %", x_ticks=ticks,
                   limit=100 * result.plan.max_error_rate)
    for transport in result.transports:
        mine = [lv for lv in levels if lv.transport == transport]
        colour = COLOURS.get(transport, GREY)
        tput.series.append(Series(f"{transport} aggregate", colour,
                                  [(lv.concurrency, lv.aggregate_tps) for lv in mine]))
        tput.series.append(Series(f"{transport} per request p50", colour,
                                  [(lv.concurrency, lv.tokens_per_s.p50 or 0) for lv in mine],
                                  dashed=True))
        errors.series.append(Series(transport, colour,
                                    [(lv.concurrency, 100 * lv.error_rate) for lv in mine]))
        knee = result.knee(transport)
        if knee is not None:
            tput.marks.append((knee.concurrency, knee.aggregate_tps,
                               f"{transport} knee: c={knee.concurrency}, "
                               f"{knee.aggregate_tps:,.0f} tok/s"))
    tput.y_top = 1.15 * max([lv.aggregate_tps for lv in levels]
                            + [lv.tokens_per_s.p50 or 0 for lv in levels] + [1.0])
    errors.y_top = 1.1 * max([10.0] + [100 * lv.error_rate for lv in levels])
    panels = [tput, errors]
    long_levels = [lv for lv in levels if lv.thousands_s]
    if long_levels:
        longp = Panel("Long output: cumulative time", "output tokens (thousands)",
                      "seconds since request start", log_x=False)
        for lv in long_levels:
            longp.series.append(Series(f"{lv.transport} c={lv.concurrency}",
                                       COLOURS.get(lv.transport, GREY),
                                       [(k + 1, s) for k, s in enumerate(lv.thousands_s)]))
        most = max(len(lv.thousands_s) for lv in long_levels)
        longp.x_ticks = [float(k) for k in range(0, most + 1, max(1, most // 6))]
        longp.y_top = 1.1 * max(s for lv in long_levels for s in lv.thousands_s)
        panels.append(longp)
    width = len(panels) * (MARGIN_L + PANEL_W + GAP) + GAP
    height = MARGIN_T + PANEL_H + MARGIN_B
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           _text(width / 2, 24, title or "spark-pair bench", size=15, anchor="middle")]
    for i, panel in enumerate(panels):
        panel.y_top = nice_top(panel.y_top)
        out.extend(_panel(panel, GAP + i * (MARGIN_L + PANEL_W + GAP) + MARGIN_L, MARGIN_T))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def nice_top(value: float) -> float:
    """The axis top at or above `value` whose fifths are round numbers."""
    raw = max(value, 1e-9) / 5
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10)
                if m * magnitude >= raw * (1 - 1e-9))
    return 5 * step


def write_svg(result: Any, path: Path, title: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(bench_svg(result, title), encoding="utf-8")
    return path


def _panel(p: Panel, left: float, top: float) -> list[str]:
    xs = p.x_ticks or [x for s in p.series for x, _ in s.points] or [1.0]
    lo, hi = min(xs), max(xs)
    scale = (lambda v: math.log2(max(v, 1e-9))) if p.log_x else float
    span = scale(hi) - scale(lo)
    pad = 0.06 * PANEL_W

    def px(x: float) -> float:
        if not span:  # one level: in the middle
            return left + PANEL_W / 2
        return left + pad + (scale(x) - scale(lo)) / span * (PANEL_W - 2 * pad)

    def py(y: float) -> float:
        return top + PANEL_H - max(0.0, min(y, p.y_top)) / p.y_top * PANEL_H

    out = [f'<rect x="{left}" y="{top}" width="{PANEL_W}" height="{PANEL_H}" fill="none" '
           'stroke="#333"/>', _text(left + PANEL_W / 2, top - 8, p.title, size=13,
                                    anchor="middle")]
    for k in range(6):  # horizontal grid and y labels
        value = p.y_top * k / 5
        y = py(value)
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + PANEL_W}" y2="{y:.1f}" '
                   'stroke="#ddd"/>')
        out.append(_text(left - 6, y + 4, f"{value:,.0f}" if p.y_top >= 5 else f"{value:g}",
                         anchor="end"))
    for x in p.x_ticks:
        out.append(_text(px(x), top + PANEL_H + 16, f"{x:g}", anchor="middle"))
    out.append(_text(left + PANEL_W / 2, top + PANEL_H + 34, p.x_label, anchor="middle"))
    out.append(_text(left - 48, top + PANEL_H / 2, p.y_label, anchor="middle",
                     rotate=True))
    if p.limit is not None:
        y = py(p.limit)
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + PANEL_W}" y2="{y:.1f}" '
                   f'stroke="{RED}" stroke-dasharray="2,3"/>')
        out.append(_text(left + PANEL_W - 4, y - 4, f"limit {p.limit:g}%", anchor="end",
                         colour=RED))
    for s in p.series:
        points = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in s.points)
        dash = ' stroke-dasharray="6,4"' if s.dashed else ""
        out.append(f'<polyline points="{points}" fill="none" stroke="{s.colour}" '
                   f'stroke-width="2"{dash}/>')
        out.extend(f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3" fill="{s.colour}"/>'
                   for x, y in s.points)
    for n, (x, y, label) in enumerate(p.marks):
        out.append(f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="7" fill="none" '
                   f'stroke="{RED}" stroke-width="2"/>')
        out.append(_text(left + PANEL_W - 6, top + PANEL_H - 8 - 14 * n, label, anchor="end",
                         colour=RED))
    for n, s in enumerate(p.series):  # the legend, under the panel
        y = top + PANEL_H + 52 + 14 * (n // 2)
        x = left + (n % 2) * PANEL_W / 2
        dash = ' stroke-dasharray="6,4"' if s.dashed else ""
        out.append(f'<line x1="{x:.1f}" y1="{y - 4}" x2="{x + 18:.1f}" y2="{y - 4}" '
                   f'stroke="{s.colour}" stroke-width="2"{dash}/>')
        out.append(_text(x + 24, y, s.label))
    return out


def _text(x: float, y: float, text: str, size: int = 11, anchor: str = "start",
          colour: str = "#222", rotate: bool = False) -> str:
    turn = f' transform="rotate(-90 {x:.1f} {y:.1f})"' if rotate else ""
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" '
            f'fill="{colour}"{turn}>{escape(text)}</text>')
