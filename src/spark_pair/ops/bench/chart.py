"""The bench chart: an SVG written by hand (no extra needed), or a PNG with matplotlib's Agg
backend (the optional `plot` extra), imported only when a PNG is asked for."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from ...base.errors import UsageError
from .svgchart import COLOURS, write_svg

EXTRA_HINT = ("install the optional extra: pip install 'spark-pair[plot]'; or write an SVG "
              "chart, which needs nothing more: --plot bench.svg")


def is_svg(path: Path) -> bool:
    return path.suffix.lower() == ".svg"


def check_chart_library(path: Path) -> None:
    """A PNG (or any other format) needs matplotlib: a clear error before the sweep if absent."""
    if is_svg(path):
        return
    try:
        found = importlib.util.find_spec("matplotlib") is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        raise UsageError(f"--plot {path}: a {path.suffix or 'PNG'} chart needs matplotlib, "
                         "which is not installed", hint=EXTRA_HINT)


def plot_bench(result: Any, path: Path, title: str = "") -> Path:
    """Write the chart: throughput and per-request tok/s by concurrency, error rate, and (long
    mode) time per 1,000 tokens. `.svg`: by hand; else a PNG with matplotlib.
    `result` is a benchmark.BenchResult."""
    if is_svg(path):
        return write_svg(result, path, title)
    check_chart_library(path)
    import matplotlib

    matplotlib.use("Agg", force=True)
    from matplotlib import pyplot as plt

    long_curves = [lv for lv in result.levels if lv.thousands_s]
    panels = 3 if long_curves else 2
    fig, axes = plt.subplots(1, panels, figsize=(5.2 * panels, 4.4), dpi=100)
    try:
        tput, err = axes[0], axes[1]
        limit = result.plan.max_error_rate
        knees: list[str] = []
        for index, transport in enumerate(result.transports):
            levels = [lv for lv in result.levels if lv.transport == transport]
            xs = [lv.concurrency for lv in levels]
            colour = COLOURS.get(transport, "#7f7f7f")
            tput.plot(xs, [lv.aggregate_tps for lv in levels], "o-", color=colour,
                      label=f"{transport} aggregate")
            p50 = [lv.tokens_per_s.p50 or 0 for lv in levels]
            tput.plot(xs, p50, "s--", color=colour, alpha=0.7, label=f"{transport} per request p50")
            lows = [lv.tokens_per_s.min or 0 for lv in levels]
            highs = [lv.tokens_per_s.max or 0 for lv in levels]
            tput.fill_between(xs, lows, highs, color=colour, alpha=0.12)
            over = [lv for lv in levels if lv.error_rate >= limit]
            if over:
                tput.plot([lv.concurrency for lv in over], [lv.aggregate_tps for lv in over],
                          "x", color="#d62728", markersize=11, zorder=6,
                          label="error rate over the limit" if index == 0 else None)
            knee = result.knee(transport)
            if knee is not None:
                tput.plot([knee.concurrency], [knee.aggregate_tps], "*", color="#d62728",
                          markersize=16, zorder=5)
                knees.append(f"{transport} knee: c={knee.concurrency}, "
                             f"{knee.aggregate_tps:,.0f} tok/s")
            err.plot(xs, [100 * lv.error_rate for lv in levels], "o-", color=colour,
                     label=transport)
        if knees:
            tput.text(0.98, 0.03, "\n".join(knees), transform=tput.transAxes, ha="right",
                      va="bottom", fontsize=9, color="#d62728",
                      bbox={"facecolor": "white", "alpha": 0.8, "edgecolor": "none"})
        tput.set_xscale("log", base=2)
        top = max([lv.aggregate_tps for lv in result.levels]
                  + [lv.tokens_per_s.max or 0 for lv in result.levels] + [1.0])
        tput.set_ylim(0, top * 1.15)
        tput.margins(x=0.08)
        tput.set_xlabel("concurrency")
        tput.set_ylabel("tokens / s")
        tput.set_title("Throughput")
        tput.grid(True, alpha=0.3)
        tput.legend(fontsize=7, loc="upper left")
        threshold = 100 * limit
        err.axhline(threshold, color="#d62728", linestyle=":", label=f"limit {threshold:g}%")
        err.set_xscale("log", base=2)
        err.set_xlabel("concurrency")
        err.set_ylabel("error rate %")
        err.set_ylim(bottom=0, top=max(10.0, *(100 * lv.error_rate for lv in result.levels)) * 1.1)
        err.set_title("Errors")
        err.grid(True, alpha=0.3)
        err.legend(fontsize=8)
        for ax in (tput, err):
            ticks = sorted({lv.concurrency for lv in result.levels})
            ax.set_xticks(ticks, [str(t) for t in ticks])
        if long_curves:
            longp = axes[2]
            for lv in long_curves:
                ks = list(range(1, len(lv.thousands_s) + 1))
                longp.plot(ks, lv.thousands_s, "o-", color=COLOURS.get(lv.transport, "#7f7f7f"),
                           label=f"{lv.transport} c={lv.concurrency}")
            longp.set_ylim(bottom=0)
            longp.set_xlim(left=0)
            longp.set_xlabel("output tokens (thousands)")
            longp.set_ylabel("seconds since request start")
            longp.set_title("Long output: cumulative time")
            longp.grid(True, alpha=0.3)
            longp.legend(fontsize=8)
        fig.suptitle(title or "spark-pair bench")
        fig.tight_layout()
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, format="png")
    finally:
        plt.close(fig)
    return path
