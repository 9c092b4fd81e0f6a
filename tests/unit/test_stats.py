"""stats: aggregation over known records (percentiles, groups, errors, cost, cost per turn)."""

from __future__ import annotations

import pytest
from support.records import PRICES, known_records, rec

from spark_pair.base.errors import UsageError
from spark_pair.cli.commands.stats import parse_since
from spark_pair.store.stats import Spread, build_report, percentile, record_cost


def test_percentile_interpolates():
    assert percentile([], 50) is None
    assert percentile([5.0], 95) == 5.0
    assert percentile([1, 2, 3, 4], 50) == 2.5
    assert percentile([10, 20, 30, 40, 50], 95) == pytest.approx(48.0)
    assert percentile([3, 1, 2], 0) == 1 and percentile([3, 1, 2], 100) == 3


def test_spread_ignores_missing_values():
    s = Spread.of([None, 100.0, 300.0, None])
    assert (s.count, s.min, s.max, s.p50) == (2, 100.0, 300.0, 200.0)


def test_cost_from_price_table():
    assert record_cost(rec(), PRICES) == pytest.approx((1000 * 1 + 500 * 4) / 1e6)
    assert record_cost(rec(model="unknown"), PRICES) is None


def test_totals_match_known_records():
    report = build_report(known_records(), PRICES)
    t = report.total
    assert (t.requests, t.ok, t.errors, t.cancelled) == (6, 4, 2, 0)
    assert t.error_classes == {"rate_limit": 1, "server": 1}
    assert t.retries == 6
    assert t.input_tokens == 1000 * 3 + 2000 + 10
    assert t.output_tokens == 500 * 3 + 1000
    # TTFT / tok/s only over successful requests: [100, 200, 300, 400] and [1000, 1100, 900, 50]
    assert t.ttft_ms.p50 == 250 and t.ttft_ms.min == 100 and t.ttft_ms.max == 400
    assert t.ttft_ms.p95 == pytest.approx(385.0)
    assert t.tokens_per_s.p50 == 950 and t.tokens_per_s.min == 50
    spark_cost = 3 * (1000 * 1 + 500 * 4) / 1e6  # the failed spark request has no tokens
    big_cost = (2000 * 10 + 1000 * 40) / 1e6
    assert t.cost == pytest.approx(spark_cost + big_cost)
    assert t.unpriced == 1 and report.missing_prices == ["mystery"]


def test_groups_by_model_transport_day():
    report = build_report(known_records(), PRICES)
    by_model = {g.key: g for g in report.groups["model"]}
    assert sorted(by_model) == ["big", "mystery", "spark"]
    assert by_model["spark"].requests == 4 and by_model["spark"].errors == 1
    assert by_model["big"].cost == pytest.approx(0.06)
    by_transport = {g.key: g.requests for g in report.groups["transport"]}
    assert by_transport == {"chat": 1, "ws": 5}
    days = report.groups["day"]
    assert len(days) == 2 and [g.requests for g in days] == [4, 2]
    assert days[0].key < days[1].key


def test_cost_per_applied_turn_counts_all_edit_requests():
    report = build_report(known_records(), PRICES)
    turns = report.turns
    assert turns.applied_turns == 2
    # edit requests: every record but the bench one (5); the mystery model has no price
    assert turns.edit_requests == 5 and turns.unpriced == 1
    assert turns.cost == pytest.approx(3 * 0.003)
    assert turns.cost_per_turn == pytest.approx(0.0045)


def test_undone_and_rolled_back_turns_are_counted_apart_from_the_applied_ones():
    records = [rec(turn_id=t, task="edit") for t in ("t1", "t2", "t3", "t4")]
    turns = build_report(records, PRICES, rolled_back={"t2", "t3"}, undone={"t3", "t4", "x"})
    # t3 was rolled back (its undo is that roll back): counted once, as rolled back
    got = turns.turns.as_dict()
    assert (got["applied_turns"], got["rolled_back_turns"], got["undone_turns"]) == (1, 2, 1)
    assert got["cost_per_turn_usd"] == pytest.approx(4 * 0.003)  # all four requests paid


def test_no_turns_gives_no_cost_per_turn():
    report = build_report([rec()], PRICES)
    assert report.turns.applied_turns == 0 and report.turns.cost_per_turn is None
    assert report.as_dict()["turns"]["cost_per_turn_usd"] is None


def test_unknown_grouping_is_refused():
    with pytest.raises(ValueError):
        build_report([], PRICES, by=["colour"])


def test_parse_since():
    assert parse_since("all") is None
    assert parse_since("2d", now=1000_000.0) == 1000_000.0 - 2 * 86400
    assert parse_since("90m", now=10_000.0) == 10_000.0 - 5400
    assert parse_since("2026-01-02") is not None
    with pytest.raises(UsageError):
        parse_since("yesterday")


def test_tiny_replies_are_left_out_of_the_tok_s_percentiles():
    records = [rec(output_tokens=3, tokens_per_s=15.0) for _ in range(8)]
    records += [rec(output_tokens=800, tokens_per_s=1200.0), rec(output_tokens=50,
                                                                tokens_per_s=1000.0)]
    report = build_report(records, PRICES)
    tps = report.total.tokens_per_s
    assert (tps.count, tps.min, tps.p50) == (2, 1000.0, 1100.0)
    assert report.total.ok == 10 and report.total.ttft_ms.count == 10  # still counted there
    assert report.as_dict()["tps_min_output_tokens"] == 50


def test_a_cost_nothing_priced_is_null_not_zero():
    """Requests of a model without a price: the JSON cost is unknown (null), as the text's `-`;
    one priced request makes it a number again."""
    unpriced = [rec(turn_id="t1", task="edit", model="unknown")]
    got = build_report(unpriced, PRICES).as_dict()
    assert got["total"]["cost_usd"] is None and got["total"]["unpriced_requests"] == 1
    assert got["turns"]["cost_usd"] is None and got["turns"]["cost_per_turn_usd"] is None
    mixed = build_report([*unpriced, rec(turn_id="t1", task="edit")], PRICES).as_dict()
    assert mixed["total"]["cost_usd"] == pytest.approx(0.003)
