"""Known request records and prices, for the stats tests."""

from __future__ import annotations

from spark_pair.protocol.records import RequestRecord

DAY1 = 1_767_268_800.0  # 2026-01-01 12:00 UTC
DAY2 = DAY1 + 86400
PRICES = {"spark": (1.0, 4.0), "big": (10.0, 40.0)}


def rec(**kw) -> RequestRecord:
    base = dict(ts=DAY1, model="spark", transport="ws", status="ok", input_tokens=1000,
                output_tokens=500, ttft_ms=100.0, tokens_per_s=1000.0)
    base.update(kw)
    return RequestRecord(**base)


def known_records() -> list[RequestRecord]:
    return [
        rec(ttft_ms=100, tokens_per_s=1000, turn_id="t1"),
        rec(ttft_ms=200, tokens_per_s=1100, transport="chat", retries=2),
        rec(ttft_ms=300, tokens_per_s=900, ts=DAY2, turn_id="t2"),
        rec(status="error", error_class="rate_limit", input_tokens=None, output_tokens=None,
            ttft_ms=None, tokens_per_s=None, retries=4, ts=DAY2),
        rec(model="big", input_tokens=2000, output_tokens=1000, ttft_ms=400, tokens_per_s=50,
            task="bench"),
        rec(model="mystery", status="error", error_class="server", input_tokens=10,
            output_tokens=0, ttft_ms=None, tokens_per_s=None),
    ]
