"""`spark-pair stats`: the request log as tables (or JSON): tokens, TTFT, tok/s, errors, cost."""

from __future__ import annotations

import json
import re
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import click

from ...base.errors import UsageError
from ...base.exitcodes import report_errors
from ...store import stats
from ._common import print_plain as say

_AGO_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([mhdw])\s*$")
_UNIT_S = {"m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_since(text: str | None, now: float | None = None) -> float | None:
    """`7d`, `12h`, `30m`, `2w` (ago) or a date `YYYY-MM-DD` (local midnight) -> epoch seconds."""
    if not text or text.strip().lower() == "all":
        return None
    now = time.time() if now is None else now
    match = _AGO_RE.match(text.lower())
    if match:
        return now - float(match.group(1)) * _UNIT_S[match.group(2)]
    try:
        return datetime.strptime(text.strip(), "%Y-%m-%d").timestamp()
    except ValueError:
        raise UsageError(f"--since {text!r} is neither a duration nor a date",
                         hint="use e.g. --since 7d, --since 12h or --since 2026-01-31") from None


def _fmt_num(value: float | int | None, digits: int = 0) -> str:
    if value is None:
        return "-"
    if abs(value) >= 10_000_000:
        return f"{value / 1_000_000:.1f}M"
    if abs(value) >= 100_000:
        return f"{value / 1000:.0f}k"
    return f"{value:,.{digits}f}"


def _fmt_tokens(value: int) -> str:
    if value >= 1_000_000:
        return f"{value / 1_000_000:.1f}M"
    if value >= 10_000:
        return f"{value / 1000:.1f}k"
    return f"{value:,}"


def _fmt_cost(value: float, unpriced: int) -> str:
    if unpriced and not value:
        return "-"
    text = f"${value:.4f}" if value < 1 else f"${value:,.2f}"
    return text + ("*" if unpriced else "")


def _table(title: str, groups: list) -> object:
    from rich.table import Table
    from rich.text import Text

    table = Table(title=title, title_justify="left", box=None, pad_edge=False,
                  padding=(0, 0, 0, 1), header_style="bold underline")
    table.add_column(title.split()[-1], overflow="fold", max_width=22)
    for name in ("reqs", "err%", "cut%", "in", "out", "ttft50", "ttft95", "tps50", "tps95", "cost"):
        table.add_column(name, justify="right", no_wrap=True)
    for g in groups:
        table.add_row(Text(g.key), str(g.requests), f"{100 * g.error_rate:.0f}",
                      f"{100 * g.cut_rate:.0f}",
                      _fmt_tokens(g.input_tokens), _fmt_tokens(g.output_tokens),
                      _fmt_num(g.ttft_ms.p50), _fmt_num(g.ttft_ms.p95),
                      _fmt_num(g.tokens_per_s.p50), _fmt_num(g.tokens_per_s.p95),
                      _fmt_cost(g.cost, g.unpriced))
    return table


def render(report, console) -> None:
    from rich.text import Text

    total = report.total
    since = ("all time" if report.since is None
             else "since " + time.strftime("%Y-%m-%d %H:%M", time.localtime(report.since)))
    console.print(Text.assemble((f"Requests {since}", "bold"),
                                f": {total.requests} ({total.ok} ok, {total.cut} cut, "
                                f"{total.errors} failed, {total.cancelled} stopped), "
                                f"{total.retries} retries"))
    say(console, f"Tokens: {total.input_tokens:,} in, {total.output_tokens:,} out; "
                 f"cost {_fmt_cost(total.cost, total.unpriced)}")
    say(console, "ttft = TTFT ms, tps = tok/s per request (p50 / p95), from replies of "
                 f"{stats.TPS_MIN_OUTPUT_TOKENS}+ output tokens (shorter ones have no steady "
                 "rate); stopped requests (--timeout, Ctrl-C, a cancel, a reply refused while "
                 "it streamed) count their tokens "
                 "but not in TTFT or tok/s; cut = replies the server ended early or without "
                 "any output (not whole answers); * = some requests unpriced", style="dim")
    if total.ttft_ms.count:
        say(console, f"TTFT ms: p50 {_fmt_num(total.ttft_ms.p50)}, "
                      f"p95 {_fmt_num(total.ttft_ms.p95)}, max {_fmt_num(total.ttft_ms.max)}; "
                      f"tok/s: p50 {_fmt_num(total.tokens_per_s.p50)}, "
                      f"p95 {_fmt_num(total.tokens_per_s.p95)}, "
                      f"min {_fmt_num(total.tokens_per_s.min)}")
    if total.error_classes:
        classes = ", ".join(f"{k} {v}" for k, v in sorted(total.error_classes.items(),
                                                          key=lambda kv: -kv[1]))
        say(console, f"Errors by class: {classes}")
    turns = report.turns
    if turns.applied_turns:
        cost = _fmt_cost(turns.cost_per_turn or 0, turns.unpriced)
        priced = "no cost: no [prices] set" if cost == "-" else cost
        say(console, f"Applied turns: {turns.applied_turns}; per turn "
                      f"{_fmt_num(turns.tokens_per_turn)} tokens, {priced} "
                      f"({turns.edit_requests} edit requests)"
                      + _not_counted(turns, " more"))
    else:
        say(console, "Applied turns: none recorded yet (cost per turn needs applied edits)"
                     + _not_counted(turns, ""))
    _prewarm_line(turns, console)
    for name, groups in report.groups.items():
        if groups:
            console.print()
            console.print(_table(f"By {name}", groups))
    if report.missing_prices:
        first = report.missing_prices[0]
        say(console, f"* no price for {', '.join(report.missing_prices)}", style="dim")
        say(console, "  add to config (USD per million tokens), e.g.:", style="dim")
        for line in (f'[prices."{first}"]', "input_per_m = ...", "output_per_m = ..."):
            console.print(Text("    " + line, style="dim"), soft_wrap=True)  # copyable TOML


def _not_counted(turns: stats.TurnCost, more: str) -> str:
    """The turns applied, then rolled back or undone, said after the applied ones."""
    parts = [f"{n}{more} {what}" for n, what in ((turns.rolled_back, "rolled back"),
                                                (turns.undone, "undone")) if n]
    return "; " + ", ".join(parts) + (" (not counted)" if more else "") if parts else ""


def _prewarm_line(turns: stats.TurnCost, console) -> None:
    """Whenever pre-warms were sent or met: their input tokens and what the turns made of them."""
    met = turns.prewarm
    if not turns.prewarm_tokens and not any(met.values()):
        return
    per = turns.prewarm_per_turn
    say(console, f"Pre-warms: sent ~{_fmt_tokens(turns.prewarm_tokens)} input tokens"
                 + (f" (~{_fmt_num(per)} a turn)" if per is not None else "")
                 + f"; requests that met one: {met['hit']} hit, {met['prefix']} prefix "
                   f"(sent whole, the prompt cache holds the rest), {met['miss']} miss")


@click.command("stats")
@click.option("--since", "since_text", default="30d", show_default=True,
              help="Only requests newer than this: 7d, 12h, 30m, a date YYYY-MM-DD, or 'all'.")
@click.option("--by", "by_text", default="model,transport,day", show_default=True,
              help="Groupings to show: any of model, transport, day, task.")
@click.option("--task", help="Only requests of this task label: edit (turns of run and the TUI), "
                             "look (a turn's second look) or bench.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--db", "db_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Request store file (default: the user data folder).")
@report_errors
def command(since_text: str, by_text: str, task: str | None, as_json: bool,
            db_path: Path | None) -> None:
    """Report the request log: requests, tokens, TTFT and tok/s, errors, retries, cost, per
    model the share of proposed hunks kept as is, amended and rejected in review, per model
    the tasks with a check: rounds to green, share escalated, share green after the first turn,
    and per model the form of its diffs: applied as sent, after a tolerance, after the repair
    round, refused.

    A request is ok (a whole reply), cut (the server ended the reply early, at the output limit
    or for a reason of its own, or without any output: err% leaves it out, cut% counts it),
    failed, or stopped (--timeout, Ctrl-C, a cancel, a reply refused while it streamed)."""
    from ...base.config import load_settings
    from ...store import RequestStore

    by = [b.strip() for b in by_text.split(",") if b.strip()]
    bad = [b for b in by if b not in stats.KEYS]
    if bad:
        raise UsageError(f"--by {', '.join(bad)}: unknown grouping",
                         hint="choose from model, transport, day, task")
    since = parse_since(since_text)
    prices = load_settings().prices
    from ...store.forms import form_shares
    from ...store.rounds import task_stats
    from ...store.verdicts import shares

    store = RequestStore(db_path, must_exist=True) if db_path else RequestStore()
    try:
        records = store.records(since=since)
        review = shares(store.verdict_rows(since=since))
        tasks = task_stats(store.round_rows(since=since))
        rolled_back = store.rollbacks(since=since)
        undone = store.undos(since=since)
        forms = form_shares(store.form_rows(since=since))
    finally:
        store.close()
    if task:
        records = [r for r in records if r.task == task]
    report = stats.build_report(records, prices, by=by, since=since, rolled_back=rolled_back,
                                undone=undone)
    if as_json:
        click.echo(json.dumps({**report.as_dict(), "review": [s.as_dict() for s in review],
                               "tasks": [t.as_dict() for t in tasks],
                               "forms": [f.as_dict() for f in forms]}, indent=2))
        return
    from rich.console import Console

    console = Console()
    render(report, console)
    render_review(review, console)
    render_tasks(tasks, console)
    render_forms(forms, console)


def render_forms(forms: list, console) -> None:
    """Per model: of its replies with a diff, the share that applied as sent, after a
    tolerance of the edits engine, after the repair round, or not at all."""
    from rich.text import Text

    from ...store.forms import Form

    console.print()
    if not forms:
        say(console, "Diff form: no replies with a diff recorded yet")
        return
    table = _per_model("Diff form by model (share of replies with a diff)",
                       ("replies", "as sent", "tolerance", "repaired", "refused"))
    for f in forms:
        table.add_row(Text(f.model), str(f.replies),
                      *(f"{100 * f.share(form):.0f}%" for form in Form))
    console.print(table)
    say(console, "as sent = every hunk fitted as written; tolerance = some hunk fitted only "
                 "loosely (spacing, counts, an edge line); repaired = fitted after the repair "
                 "round ([review] repair); refused = did not apply", style="dim")


def render_tasks(tasks: list, console) -> None:
    """Per drafting model: tasks with a check, how many rounds they took to pass, how often
    they went to the stronger model, how often the first turn passed."""
    from rich.text import Text

    console.print()
    if not tasks:
        say(console, "Check and fix: no checked tasks yet (run --check, or alt+t in the app "
                     "with [review] check)")
        return
    table = _per_model("Check and fix by model (tasks it drafted)",
                       ("tasks", "green", "rounds50", "escal%", "1st%"))
    for t in tasks:
        table.add_row(Text(t.model), str(t.tasks), str(t.green), _fmt_num(t.median_rounds, 1),
                      f"{100 * t.share(t.escalated):.0f}%", f"{100 * t.share(t.green_first):.0f}%")
    console.print(table)
    say(console, "rounds50 = median turns to a passing check (1: the first turn passed); "
                 "escal% = tasks sent to [model] stronger; 1st% = green after the first turn",
        style="dim")


def _per_model(title: str, columns: tuple[str, ...]) -> Any:
    """A table with a model column, then right-aligned figures."""
    from rich.table import Table

    table = Table(title=title, title_justify="left", box=None, pad_edge=False,
                  padding=(0, 0, 0, 1), header_style="bold underline")
    table.add_column("model", overflow="fold", max_width=22)
    for name in columns:
        table.add_column(name, justify="right", no_wrap=True)
    return table


def render_review(review: list, console) -> None:
    """Per model: how much of what it proposed a person kept as is, amended or rejected, and
    how many hunks could not apply (the tool left them out; not in the shares)."""
    from rich.text import Text

    from ...store.verdicts import Fate

    console.print()
    if not review:
        say(console, "Review: no reviewed turns yet (the app records what you keep, amend "
                     "and reject, per hunk)")
        return
    table = _per_model("Review by model (share of proposed hunks)",
                       ("turns", "hunks", "kept", "amended", "rejected", "unfit"))
    for s in review:
        table.add_row(Text(s.model), str(s.turns), str(s.proposed),
                      *(f"{100 * s.share(f):.0f}%" for f in (Fate.KEPT, Fate.AMENDED,
                                                             Fate.REJECTED)), str(s.unfit))
    console.print(table)
    if any(s.unfit for s in review):
        say(console, "unfit = hunks that could not apply (their lines are not in the file): "
                     "the tool left them out, no person decided; not in the shares", style="dim")
