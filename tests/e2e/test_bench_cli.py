"""`spark-pair bench` end to end: JSON, the PNG chart, the stored run and --compare."""

from __future__ import annotations

import json

from click.testing import CliRunner
from PIL import Image

MODEL = "gpt-5.3-codex-spark"


def test_cli_json_plot_store_and_compare(sim, tmp_path, monkeypatch):
    from spark_pair.cli.main import main

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


def bench_env(sim, tmp_path, monkeypatch):
    monkeypatch.setenv("SPARK_PAIR_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("SPARK_PAIR_BASE_URL", sim.base_url)
    monkeypatch.setenv("SPARK_PAIR_MODEL", MODEL)
    monkeypatch.setenv("SPARK_PAIR_API_KEY", "sk-bench-test-key-000")


def bench(*args: str, columns: str = "80"):
    from spark_pair.cli.main import main

    return CliRunner().invoke(main, ["bench", "--transport", "chat", *args],
                              env={"COLUMNS": columns})


def test_a_regressed_run_never_becomes_the_baseline(sim, tmp_path, monkeypatch):
    from spark_pair.store import RequestStore

    bench_env(sim, tmp_path, monkeypatch)
    args = ["--concurrency", "1", "--requests", "1", "--json", "--compare"]
    sim.configure(tps=4000, ttft_ms=0, tokens=200)
    assert bench(*args).exit_code == 0
    sim.configure(tps=1000)
    slow = bench(*args)
    assert slow.exit_code == 1 and json.loads(slow.stdout)["regression"] is True
    again = bench(*args)  # still compared with the fast run, not the regressed one
    assert again.exit_code == 1, again.output
    assert json.loads(again.stdout)["regression"] is True
    accepted = bench(*args, "--set-baseline")  # the user accepts the slower speed
    assert accepted.exit_code == 1
    after = bench(*args)
    assert after.exit_code == 0, after.output
    with RequestStore(tmp_path / "home" / "data" / "requests.sqlite3") as store:
        runs = store.bench_runs()
    assert [r["regression"] for r in runs] == [False, True, True, True, False]
    assert runs[1]["set_baseline"] is True


def test_compare_text_names_the_baseline(sim, tmp_path, monkeypatch):
    bench_env(sim, tmp_path, monkeypatch)
    sim.configure(tps=4000, ttft_ms=0, tokens=100)
    first = bench("--concurrency", "1", "--requests", "1", "--compare")
    assert first.exit_code == 0 and "no baseline yet" in first.stdout
    second = bench("--concurrency", "1", "--requests", "1", "--compare")
    assert "Change against the baseline" in second.stdout
    assert "--set-baseline" in second.stdout


def test_an_unwritable_plot_path_fails_before_the_sweep(sim, tmp_path, monkeypatch):
    bench_env(sim, tmp_path, monkeypatch)
    result = bench("--concurrency", "1", "--requests", "1", "--plot",
                   str(tmp_path / "no-such-dir" / "x.png"))
    assert result.exit_code == 2, result.output
    assert "cannot write there" in result.output and "Traceback" not in result.output
    assert not isinstance(result.exception, OSError)
    assert sim.requests() == []  # nothing was sent


def test_markup_like_model_id_and_hint_text_are_printed_plainly(sim, tmp_path, monkeypatch):
    bench_env(sim, tmp_path, monkeypatch)
    result = bench("--model", "nope[/b]", "--concurrency", "1,4", "--requests", "4")
    assert result.exit_code == 4, result.output
    assert "nope[/b]" in result.stdout
    assert "bench stopped" in result.stdout
    assert "[model] fallbacks" in result.stdout.replace("\n", " ").replace("   ", " ")
    assert len(sim.requests()) == 1
    lines = result.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80
    start = next(i for i, line in enumerate(lines) if line.startswith("bench stopped"))
    assert all(line.startswith(" ") for line in lines[start + 1:])  # wrapped with an indent


def test_a_level_cut_by_the_budget_is_not_shown_as_0_errors(sim, tmp_path, monkeypatch):
    bench_env(sim, tmp_path, monkeypatch)
    sim.configure(tps=50, ttft_ms=0, tokens=400)  # 8 s per request, budget 1 s
    result = bench("--concurrency", "1", "--requests", "1", "--max-seconds", "1")
    assert result.exit_code == 1, result.output
    row = next(line for line in result.stdout.splitlines() if " 0/1 " in line)
    assert row.split()[:3] == ["1", "0/1", "-"]  # err%: nothing finished, not 0
    assert "cut by the --max-seconds budget" in result.stdout


def test_a_png_chart_without_matplotlib_says_how_to_get_it(sim, tmp_path, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as on a lean install
    bench_env(sim, tmp_path, monkeypatch)
    result = bench("--concurrency", "1", "--requests", "1", "--plot", str(tmp_path / "x.png"))
    assert result.exit_code == 2, result.output
    text = " ".join(result.output.split())
    assert "needs matplotlib" in text and "pip install 'spark-pair[plot]'" in text
    assert "--plot bench.svg" in text
    assert sim.requests() == []  # said before the sweep, not after it

    svg = tmp_path / "x.svg"
    result = bench("--concurrency", "1", "--requests", "1", "--plot", str(svg))
    assert result.exit_code == 0, result.output
    assert svg.read_text().startswith("<svg")
