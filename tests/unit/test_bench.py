"""bench: knee, comparison, long-output marks, table and chart (pure parts)."""

from __future__ import annotations

import io

from PIL import Image

from spark_pair.ops.bench.chart import plot_bench
from spark_pair.ops.bench.sweep import BenchPlan, BenchResult, LevelResult, compare, thousand_marks
from spark_pair.store.stats import Spread


def level(c: int, aggr: float, errors: int = 0, ok: int = 8, transport: str = "ws",
          tps: float = 1000.0, thousands: list[float] | None = None) -> LevelResult:
    return LevelResult(transport=transport, concurrency=c, requests=ok + errors, ok=ok,
                       errors=errors, error_classes={"rate_limit": errors} if errors else {},
                       retries=errors, ttft_ms=Spread.of([100, 120, 180]),
                       tokens_per_s=Spread.of([tps * 0.9, tps, tps * 1.1]), aggregate_tps=aggr,
                       wall_s=1.0, thousands_s=thousands or [])


def result(levels: list[LevelResult], **plan) -> BenchResult:
    return BenchResult(BenchPlan(model="m", base_host="127.0.0.1:1", **plan), levels,
                       started=1.0, wall_s=4.0)


def test_knee_is_highest_throughput_under_the_error_limit():
    res = result([level(1, 1000), level(4, 3900), level(8, 5200, errors=2, ok=6),
                  level(16, 4000, errors=8, ok=8)])
    assert res.knee("ws").concurrency == 4
    relaxed = result(res.levels, max_error_rate=0.5)
    assert relaxed.knee("ws").concurrency == 8
    assert result([level(1, 10, errors=8, ok=0)]).knee("ws") is None


def test_knee_per_transport():
    res = result([level(1, 900, transport="chat"), level(4, 2000, transport="chat"),
                  level(1, 1100), level(4, 4000)])
    assert res.transports == ["chat", "ws"]
    assert res.knee("chat").aggregate_tps == 2000 and res.knee("ws").aggregate_tps == 4000
    assert res.as_dict()["knee"]["ws"] == {"concurrency": 4, "aggregate_tps": 4000}


def test_compare_flags_a_tok_s_drop_and_more_errors():
    before = result([level(1, 1000, tps=1000), level(4, 4000, tps=1000)]).as_dict()
    same = result([level(1, 1000, tps=950), level(4, 4000, tps=1000)]).as_dict()
    assert not any(ch.regression for ch in compare(same, before))
    slower = result([level(1, 800, tps=850), level(4, 4000, errors=1, ok=7)]).as_dict()
    changes = {ch.concurrency: ch for ch in compare(slower, before)}
    assert changes[1].regression and "tok/s -15%" in changes[1].reason
    assert changes[4].regression and "error rate" in changes[4].reason


def test_compare_ignores_levels_missing_from_the_baseline():
    before = result([level(1, 1000)]).as_dict()
    after = result([level(1, 1000), level(8, 100)]).as_dict()
    assert [ch.concurrency for ch in compare(after, before)] == [1]


def test_thousand_marks_spread_tokens_over_characters():
    # 3,000 tokens over 12,000 characters arriving in 6 deltas of 2,000 chars, one per second
    marks = [(float(i), 2000 * i) for i in range(1, 7)]
    assert thousand_marks(marks, 12_000, 3000) == [2.0, 4.0, 6.0]
    assert thousand_marks(marks, 12_000, 900) == []
    assert thousand_marks([], 0, 5000) == []


def test_table_reads_at_80_columns():
    from rich.console import Console

    from spark_pair.cli.commands.bench import render

    res = result([level(1, 1180.5), level(4, 4400), level(8, 5200, errors=3, ok=5),
                  level(16, 5000, errors=9, ok=7)])
    out = io.StringIO()
    render(res, Console(file=out, width=80, color_system=None))
    text = out.getvalue()
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "knee" in text and "concurrency 4" in text and "rate_limit 3" in text
    assert "…" not in text  # nothing cut off


def test_chart_png_has_content(tmp_path):
    res = result([level(1, 1000), level(4, 3900), level(8, 5200, errors=2, ok=6),
                  level(1, 800, transport="chat"), level(4, 2500, transport="chat")])
    path = plot_bench(res, tmp_path / "out" / "bench.png")
    with Image.open(path) as img:
        assert img.format == "PNG" and img.width >= 800 and img.height >= 300
        colours = img.convert("RGB").getcolors(maxcolors=1_000_000)
    assert colours is not None and len(colours) > 50  # lines, text, markers: not blank


def test_long_mode_chart_has_a_third_panel(tmp_path):
    res = result([level(1, 1000, thousands=[1.0, 2.1, 3.3])], long=True)
    with Image.open(plot_bench(res, tmp_path / "long.png")) as img:
        assert img.width > 1400


def test_svg_chart_needs_no_plotting_library(tmp_path, monkeypatch):
    import sys
    import xml.etree.ElementTree as ET

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as on a lean install
    res = result([level(1, 1000), level(4, 3900), level(8, 5200, errors=2, ok=6),
                  level(1, 800, transport="chat"), level(4, 2500, transport="chat")])
    path = plot_bench(res, tmp_path / "out" / "bench.svg", title="a <title> & more")
    root = ET.parse(path).getroot()  # well-formed XML, text escaped
    ns = "{http://www.w3.org/2000/svg}"
    lines = root.findall(f"{ns}polyline")
    assert len(lines) == 6  # per transport: aggregate, p50 per request, error rate
    texts = [t.text for t in root.iter(f"{ns}text")]
    assert "a <title> & more" in texts and "ws knee: c=4, 3,900 tok/s" in texts
    assert "limit 5%" in texts
    width, height = float(root.get("width")), float(root.get("height"))
    for line in lines:  # every point inside the picture
        for pair in line.get("points").split():
            x, y = map(float, pair.split(","))
            assert 0 <= x <= width and 0 <= y <= height
    long = plot_bench(result([level(1, 1000, thousands=[1.0, 2.1, 3.3])], long=True),
                      tmp_path / "long.svg")
    assert float(ET.parse(long).getroot().get("width")) > width * 1.4  # a third panel
