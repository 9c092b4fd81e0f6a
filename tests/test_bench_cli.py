"""`spark-pair bench` end to end: JSON, the PNG chart, the stored run and --compare."""

from __future__ import annotations

import json

from click.testing import CliRunner
from PIL import Image

MODEL = "gpt-5.3-codex-spark"


def test_cli_json_plot_store_and_compare(sim, tmp_path, monkeypatch):
    from spark_pair.cli import main

    sim.configure(tps=4000, ttft_ms=5, tokens=200)
    monkeypatch.setenv("SPARK_PAIR_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("SPARK_PAIR_BASE_URL", sim.base_url)
    monkeypatch.setenv("SPARK_PAIR_MODEL", MODEL)
    monkeypatch.setenv("SPARK_PAIR_API_KEY", "sk-bench-test-key-000")
    png = tmp_path / "chart.png"
    args = ["bench", "--transport", "chat,ws", "--concurrency", "1,2", "--requests", "2",
            "--json", "--plot", str(png)]
    first = CliRunner().invoke(main, args)
    assert first.exit_code == 0, first.output
    data = json.loads(first.output)
    assert [lv["concurrency"] for lv in data["levels"]] == [1, 2, 1, 2]
    assert data["knee"]["chat"] is not None and data["knee"]["ws"] is not None
    assert "sk-bench-test-key-000" not in first.output
    with Image.open(png) as img:
        assert img.format == "PNG" and img.width >= 800
        assert len(img.convert("RGB").getcolors(maxcolors=1_000_000)) > 50

    sim.configure(tps=1000)  # 4x slower than the stored baseline: a regression
    second = CliRunner().invoke(main, args[:-2] + ["--compare"])
    assert second.exit_code == 1, second.output
    data = json.loads(second.output)
    assert data["regression"] is True
    assert any(ch["regression"] and "tok/s" in ch["reason"] for ch in data["compare"])
