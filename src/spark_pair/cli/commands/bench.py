"""`spark-pair bench`: throughput and error-rate sweep over concurrency."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import sys
import time
from pathlib import Path
from typing import Any

import click

from ...base.errors import UsageError
from ...base.exitcodes import ExitCode, report_errors
from ...base.transport import TRANSPORT_CHOICES
from ._common import print_plain as say


def parse_levels(text: str) -> list[int]:
    try:
        levels = [int(x) for x in text.replace(" ", "").split(",") if x]
    except ValueError:
        levels = []
    if not levels or any(n < 1 or n > 256 for n in levels):
        raise UsageError(f"--concurrency {text!r}: give whole numbers from 1 to 256",
                         hint="e.g. --concurrency 1,2,4,8")
    return sorted(set(levels))


def parse_transports(text: str | None, default: str) -> list[str]:
    names = [x.strip() for x in (text or default).split(",") if x.strip()]
    bad = [n for n in names if n not in TRANSPORT_CHOICES]
    if bad or not names:
        raise UsageError(f"--transport {text!r}: unknown transport {', '.join(bad)}",
                         hint="choose from ws, responses, chat, auto (comma-separated)")
    return list(dict.fromkeys(names))


def _n(value: float | None, digits: int = 0) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def render(result: Any, console: Any) -> None:
    from rich.table import Table
    from rich.text import Text

    plan = result.plan
    head = Text.assemble(("spark-pair bench", "bold"), f"  {plan.base_host}  {plan.model}")
    console.print(head)
    say(console, f"{plan.requests} requests per level (at least the level's concurrency), "
                 f"max_tokens {plan.max_tokens}" + (", long output" if plan.long else ""),
        style="dim")
    say(console, "ttft = TTFT ms and tps = tok/s per request; aggr = the level's total tok/s",
        style="dim")
    for transport in result.transports:
        levels = [lv for lv in result.levels if lv.transport == transport]
        table = Table(title=f"transport {transport}", title_justify="left", box=None,
                      pad_edge=False, padding=(0, 1), header_style="bold underline")
        for name in ("conc", "ok", "err%", "ttft50", "ttft95", "tps50", "tps95", "min", "max",
                     "aggr", "retry"):
            table.add_column(name, justify="right", no_wrap=True)
        knee = result.knee(transport)
        console.print()
        for lv in levels:
            mark = "*" if lv is knee else ""
            done = lv.ok + lv.errors
            err = f"{100 * lv.error_rate:.0f}" if done else "-"
            table.add_row(f"{lv.concurrency}{mark}", f"{lv.ok}/{lv.requests}", err,
                          _n(lv.ttft_ms.p50), _n(lv.ttft_ms.p95),
                          _n(lv.tokens_per_s.p50), _n(lv.tokens_per_s.p95),
                          _n(lv.tokens_per_s.min), _n(lv.tokens_per_s.max),
                          _n(lv.aggregate_tps), str(lv.retries))
        console.print(table)
        for lv in levels:
            if lv.error_classes:
                classes = ", ".join(f"{k} {v}" for k, v in sorted(lv.error_classes.items()))
                say(console, f"  c={lv.concurrency} errors: {classes}")
            if lv.cut:
                say(console, f"  c={lv.concurrency}: {lv.cut} request(s) cut by the "
                             f"--max-seconds budget (not counted in err%)", style="yellow")
            if lv.thousands_s:
                steps = [lv.thousands_s[0]] + [
                    b - a for a, b in zip(lv.thousands_s, lv.thousands_s[1:], strict=False)
                ]
                say(console, f"  c={lv.concurrency} seconds per 1,000 tokens: "
                             + " ".join(f"{s:.2f}" for s in steps))
                say(console, f"  c={lv.concurrency} cumulative seconds at each 1,000: "
                             + " ".join(f"{s:.2f}" for s in lv.thousands_s))
        limit = f"{100 * plan.max_error_rate:g}%"
        if knee is not None:
            say(console, f"  knee (*): concurrency {knee.concurrency}, "
                         f"{knee.aggregate_tps:,.0f} tok/s aggregate, error rate "
                         f"{100 * knee.error_rate:.0f}% (limit {limit})")
        else:
            say(console, f"  no level stayed under the {limit} error limit")
    if result.aborted:
        say(console, f"bench stopped: {result.aborted}", style="red")
        if result.abort_hint:
            say(console, f"  fix: {result.abort_hint}", style="yellow", more="     ")
        say(console, "  run `spark-pair doctor` to check the whole set-up", style="yellow")
    if result.truncated:
        say(console, f"stopped early: the --max-seconds budget ({plan.max_seconds:g} s) ran "
                     "out before every request was done; raise --max-seconds", style="yellow")


def render_changes(changes: list[Any], console: Any, baseline: dict[str, Any] | None) -> None:
    from rich.table import Table
    from rich.text import Text

    if baseline is None:
        say(console, "compare: no baseline yet (no earlier run with the same model, host and "
                     "max_tokens); this run becomes the baseline")
        return
    table = Table(box=None, pad_edge=False, padding=(0, 1), header_style="bold underline")
    console.print()
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(baseline.get("started") or 0))
    console.print(Text.assemble(("Change against the baseline", "bold"), f" (run of {when})"))
    say(console, "p50 tok/s per request and error rate; the baseline is the newest earlier run "
                 "that was not a regression, or one set with --set-baseline", style="dim")
    for name in ("transport", "conc", "tps before", "after", "err% before", "after", ""):
        table.add_column(name, justify="right" if name not in ("transport", "") else "left")
    for ch in changes:
        flag = (Text(f"REGRESSION {ch.reason}", style="red") if ch.regression
                else Text("ok", style="green"))
        table.add_row(ch.transport, str(ch.concurrency), _n(ch.tps_before), _n(ch.tps_after),
                      f"{100 * ch.errors_before:.0f}", f"{100 * ch.errors_after:.0f}", flag)
    console.print(table)


def check_plot_path(path: Path) -> None:
    """Fail before the sweep if the chart could not be written there (or drawn at all)."""
    from ...ops.bench.chart import check_chart_library

    check_chart_library(path)
    existed = path.exists()
    try:
        with open(path, "ab"):
            pass
        if not existed:
            path.unlink()
    except OSError as exc:
        raise UsageError(f"--plot {path}: cannot write there ({exc.strerror or exc})",
                         hint="give a file in a folder you can write to, e.g. "
                              "--plot bench.png") from exc


@click.command("bench")
@click.option("--base-url", help="API root URL (overrides SPARK_PAIR_BASE_URL).")
@click.option("--model", help="Model id (overrides config and SPARK_PAIR_MODEL).")
@click.option("--transport", "transport_text",
              help="Transport(s) to measure, comma-separated: ws, responses, chat, auto "
                   "(default: the configured one).")
@click.option("--concurrency", "levels_text", default="1,4,8,16", show_default=True,
              help="Concurrency levels, comma-separated.")
@click.option("--requests", type=click.IntRange(1, 1000), default=8, show_default=True,
              help="Requests per level; a level runs at least as many as its concurrency.")
@click.option("--max-tokens", type=click.IntRange(1, 200_000),
              help="Output cap per request [default: 1024; 8192 with --long].")
@click.option("--long", "long_mode", is_flag=True,
              help="Long-output mode: max_tokens 8192, time per 1,000 tokens (default "
                   "concurrency 1, 3 requests).")
@click.option("--max-error-rate", type=click.FloatRange(0, 1), default=0.05, show_default=True,
              help="Highest error rate (0-1) a level may have to count as the knee.")
@click.option("--max-retries", type=click.IntRange(0, 20),
              help="Retries per request (default: the client's).")
@click.option("--max-seconds", type=click.FloatRange(1, 24 * 3600), default=300.0,
              show_default=True, help="Time budget for the whole sweep.")
@click.option("--json", "as_json", is_flag=True, help="Print the results as one JSON object.")
@click.option("--plot", type=click.Path(dir_okay=False, path_type=Path),
              help="Write a chart to this file: .svg needs nothing more; .png needs the "
                   "optional extra (pip install 'spark-pair[plot]').")
@click.option("--compare", is_flag=True,
              help="Show the change against the baseline run; exit 1 on a regression.")
@click.option("--set-baseline", is_flag=True,
              help="Make this run the baseline, even if it is slower (accept a change).")
@click.option("--no-save", is_flag=True, help="Do not store this run.")
@report_errors
def command(base_url: str | None, model: str | None, transport_text: str | None,
            levels_text: str, requests: int, max_tokens: int | None, long_mode: bool,
            max_error_rate: float, max_retries: int | None, max_seconds: float, as_json: bool,
            plot: Path | None, compare: bool, set_baseline: bool, no_save: bool) -> None:
    """Measure TTFT, tok/s, throughput and errors over a concurrency sweep; find the knee.

    Each level runs --requests requests (at least its concurrency) on that many parallel
    connections. The knee is the level with the highest aggregate throughput whose error rate
    is under --max-error-rate. A reply without any output, or one the server ended early for a
    reason of its own (its context window, a filter, an abort), is an error (kind incomplete);
    one that stops at --max-tokens is not. A request that fails for a set-up reason (key, URL,
    model, connection) stops the sweep at once. Use a separate API key for load tests.

    Baseline: every stored run is compared with the baseline, the newest earlier complete run
    (same model, host and max_tokens) that was not a regression; a regressed run is stored,
    marked, and never becomes the baseline. --set-baseline makes this run the baseline.
    A regression: p50 tok/s more than 10% lower, or a higher error rate, at some level.

    Exit codes: 1 on a regression (with --compare) or a sweep cut short by --max-seconds,
    4 when a set-up error stopped the sweep.
    """
    from ...base.config import load_settings
    from ...base.urls import host_of
    from ...ops.bench.sweep import BenchPlan, baseline_run
    from ...ops.bench.sweep import compare as compare_runs
    from ...protocol import offers
    from ...protocol.client import ClientOptions, ModelClient
    from ...store import RequestStore
    from ._common import flag_overrides

    ctx = click.get_current_context()
    defaulted = {name for name in ("levels_text", "requests")
                 if ctx.get_parameter_source(name) != click.core.ParameterSource.COMMANDLINE}
    if long_mode and "levels_text" in defaulted:
        levels_text = "1"
    if long_mode and "requests" in defaulted:
        requests = 3
    levels = parse_levels(levels_text)
    settings = load_settings(overrides=flag_overrides(base_url, model, None))
    transports = parse_transports(transport_text, settings.session.transport or "auto")
    options = ClientOptions.of(settings, task="bench")
    options = dataclasses.replace(options, fallbacks=[])
    if max_retries is not None:
        options = dataclasses.replace(options, max_retries=max_retries)
    plan = BenchPlan(model=options.model, transports=transports, concurrency=levels,
                     requests=requests,
                     max_tokens=max_tokens or (8192 if long_mode else 1024), long=long_mode,
                     max_seconds=max_seconds, max_error_rate=max_error_rate,
                     base_host=host_of(options.base_url or ""))
    plan_options = dataclasses.replace(options, max_tokens=plan.max_tokens)
    if plot is not None:
        check_plot_path(plot)

    store = RequestStore()
    try:
        def make_client(transport: str) -> Any:
            return ModelClient(dataclasses.replace(plan_options, transport=transport),
                               recorder=store, transport_cache=offers.default_path())

        result = _run_with_progress(plan, make_client, quiet=as_json)
        data = result.as_dict()
        baseline = baseline_run(store.bench_runs(limit=500), data)
        changes = compare_runs(data, baseline) if baseline else []
        regression = any(ch.regression for ch in changes)
        data["regression"] = regression
        data["set_baseline"] = set_baseline
        data["baseline_started"] = baseline.get("started") if baseline else None
        if not no_save and not result.aborted:
            store.save_bench_run(data)
    finally:
        store.close()
    if not result.aborted and (settings.telemetry.enabled
                               or settings.env.get("OTEL_METRICS_EXPORTER")):
        from ...telemetry import export_bench  # pushed and sent before the results show

        export_bench(settings, data, baseline, lambda text: click.echo(
            f"spark-pair: {text}", err=True))

    plot_error = None
    if plot is not None:
        from ...ops.bench.chart import plot_bench

        try:
            plot_bench(result, plot, title=f"spark-pair bench: {plan.model} @ {plan.base_host}")
        except OSError as exc:
            plot_error = UsageError(f"--plot {plot}: the chart could not be written "
                                    f"({exc.strerror or exc})",
                                    hint="the results above are stored; give a writable path "
                                         "to --plot")
    if as_json:
        if compare:
            data["compare"] = [dataclasses.asdict(ch) for ch in changes]
        click.echo(json.dumps(data, indent=2))
    else:
        from rich.console import Console

        console = Console(highlight=False)
        render(result, console)
        if compare:
            render_changes(changes, console, baseline)
        if plot is not None and plot_error is None:
            say(console, f"chart written to {plot}")
    if plot_error is not None:
        raise plot_error
    if result.aborted:
        sys.exit(int(ExitCode.MODEL))
    if (compare and regression) or result.truncated:
        sys.exit(int(ExitCode.FAILURE))


def _run_with_progress(plan: Any, make_client: Any, quiet: bool) -> Any:
    from ...ops.bench.sweep import run_bench

    if quiet:
        return asyncio.run(run_bench(plan, make_client))
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    console = Console(stderr=True)
    with Progress(TextColumn("{task.description}"), BarColumn(bar_width=20),
                  MofNCompleteColumn(), TextColumn("{task.fields[info]}"), console=console,
                  transient=True) as progress:
        tasks: dict[tuple[str, int], Any] = {}

        def on_progress(p: Any) -> None:
            key = (p.transport, p.concurrency)
            if key not in tasks:
                tasks[key] = progress.add_task(f"{p.transport} c={p.concurrency}",
                                               total=p.total, info="")
            rate = p.output_tokens / p.elapsed_s if p.elapsed_s > 0 else 0
            progress.update(tasks[key], completed=p.done,
                            info=f"{p.errors} err  {rate:,.0f} tok/s")

        return asyncio.run(run_bench(plan, make_client, on_progress))
