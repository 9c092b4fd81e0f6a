"""The meter against the simulator's pace, and its numbers against `run`'s meter line."""

from __future__ import annotations

import asyncio
import time

import pytest
from support.uiapps import MeterApp

from spark_pair.headless.runner import meter_line
from spark_pair.protocol.client import ClientOptions, ModelClient
from spark_pair.protocol.events import (
    Completed,
    Message,
    Metrics,
    Retrying,
    Started,
    TextDelta,
    TransportChanged,
    TurnRequest,
    Usage,
)
from spark_pair.session.events import TurnResult, TurnStarted
from spark_pair.ui.widgets.meter import Meter, sparkline

MODEL = "gpt-5.3-codex-spark"
FRAME_S = 1 / 30

pytestmark = pytest.mark.xdist_group("timing")  # times paces: the timing tests run one at a time


async def stream_in_frames(base_url: str, meter: Meter, transport: str,
                           ttfts: list[str] | None = None) -> list:
    """Stream one reply; hand the events to the meter in 1/30 s frames, as the app does.
    Returns the live tok/s seen at each frame (and adds the live TTFT field to `ttfts`)."""
    client = ModelClient(ClientOptions(base_url=base_url, api_key="k", model=MODEL,
                                       transport=transport))
    inbox: list = [TurnStarted("t1", "go", [], 1200, False)]
    done = asyncio.Event()

    async def pump() -> None:
        request = TurnRequest("You edit code.", [Message("user", "go")])
        async for event in client.stream(request):
            inbox.append(event)
        done.set()

    task = asyncio.create_task(pump())
    live = []
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        await asyncio.sleep(FRAME_S)
        batch, inbox[:] = list(inbox), []
        meter.feed(batch)
        m = meter.metrics()
        if meter.final is None and m is not None and m.tokens_per_s:
            live.append(m.tokens_per_s)
        if meter.final is None and m is not None and ttfts is not None:
            ttfts.append(meter.parts()[0])
        if done.is_set() and not inbox:
            break
    await task
    await client.aclose()
    return live


@pytest.mark.parametrize("transport", ["ws", "responses"])
async def test_live_rate_follows_the_simulator_pace_within_5_percent(sim, transport) -> None:
    tps = 1000
    sim.configure(tps=tps, ttft_ms=100, tokens=2500)
    app = MeterApp({MODEL: (1.25, 10.0)})
    async with app.run_test(size=(120, 3)) as pilot:
        meter = app.meter
        live = await stream_in_frames(sim.base_url, meter, transport)
        await pilot.pause()
        assert len(live) > 30  # it was live for the whole stream
        # from one second in, the live figure is the server's pace
        settled = live[30:]
        assert all(abs(rate - tps) / tps < 0.05 for rate in settled), (min(settled),
                                                                      max(settled))
        assert abs(live[-1] - tps) / tps < 0.05
        final = meter.metrics()
        assert final is meter.final and abs(final.tokens_per_s - tps) / tps < 0.05
        assert meter.tokens == meter.usage.output_tokens == 2500
        shown = app.meter.render().plain
        # the same numbers, formatted the same way, as the headless run's meter line
        result = TurnResult("t1", "dry_run", usage=meter.usage, metrics=final, model=MODEL,
                            transport=transport)
        ttft, rate = meter_line(result).split(" │ ")[:2]
        assert shown.startswith(f"{ttft} │ {rate} ")
        cost = (meter.usage.input_tokens * 1.25 + 2500 * 10.0) / 1e6
        assert f"${cost:.4f}" in shown and transport in shown
        assert "0 retries" in shown


async def test_the_live_ttft_is_the_final_one_however_slow_the_connection_set_up(sim) -> None:
    """A WebSocket upgrade that takes 0.6 s (a slow TLS handshake or gateway) is no part of
    the TTFT, live or final: the meter shows the client's TTFT from the first token on."""
    sim.configure(tps=1000, ttft_ms=100, tokens=400)  # read at least 0.05 s: a request
    # time-stamped late on a busy machine reads a little under the server's wait
    sim.set_faults([{"kind": "slow_handshake", "seconds": 0.6, "times": -1}])
    app = MeterApp()
    async with app.run_test(size=(120, 3)):
        meter = app.meter
        ttfts: list[str] = []
        await stream_in_frames(sim.base_url, meter, "ws", ttfts)
        final = meter.metrics()
    assert final is meter.final and 0.05 <= final.ttft_s < 0.3, final
    assert len(ttfts) > 3 and set(ttfts) == {f"TTFT {final.ttft_s * 1000:.0f} ms"}, ttfts


async def test_parts_before_and_after_the_stream_and_narrow_widths() -> None:
    t = [100.0]
    meter = Meter({"m": (1.0, 2.0)}, clock=lambda: t[0])
    assert meter.parts()[:3] == ["TTFT -", "- tok/s", "0 tok"]
    meter.feed([TurnStarted("t", "p", [], 4000, False), Started("r", "ws", "m", "u")])
    t[0] = 100.2
    meter.feed([TextDelta("a")])
    for i in range(1, 11):  # 100 tokens a frame, 10 frames a second
        t[0] = 100.2 + i / 10
        meter.feed([TextDelta("x")] * 100)
    parts = meter.parts()
    assert parts[0] == "TTFT 200 ms"
    assert parts[1].startswith("1,000 tok/s ")
    assert set(parts[1][12:]) <= set("▁▂▃▄▅▆▇█")
    assert parts[2] == "1,001 tok" and parts[3] == "in ~4.0k"
    assert parts[4] == f"~${(4000 * 1.0 + 1001 * 2.0) / 1e6:.4f}"
    meter.feed([Retrying(1, 0.5, "dropped"), TransportChanged("ws", "responses", "x")])
    assert meter.parts()[-2:] == ["1 retry, 1 fallback", "responses · m"]
    meter.feed([Usage(4100, 1001), Completed("id", "", Usage(4100, 1001),
                                             Metrics(0.15, 1.2, 1001, 950.0), retries=1)])
    parts = meter.parts()
    assert parts[:4] == ["TTFT 150 ms", parts[1], "1,001 tok", "in 4.1k out 1.0k"]
    assert parts[1].startswith("950 tok/s")  # the client's measurement wins at the end
    assert parts[4] == f"${(4100 * 1.0 + 1001 * 2.0) / 1e6:.4f}"
    meter.reset()
    assert meter.parts()[:3] == ["TTFT -", "- tok/s", "0 tok"]


async def test_a_late_first_frame_with_a_backlog_does_not_inflate_the_live_rate() -> None:
    """The live figure is `run`'s formula (the pace of the arrivals that were not late): the
    screen was busy as the stream began, so its first frame holds the 150 tokens that came in
    the first 150 ms; the frames after it come on time, 50 tokens each at 1,000 tok/s."""
    t = [10.0]
    meter = Meter(clock=lambda: t[0])
    meter.feed([TurnStarted("t", "p", [], 100, False), Started("r", "ws", "m", "u")])
    t[0] = 10.35  # TTFT 200 ms, read 150 ms late
    meter.feed([TextDelta("abcd")] * 150)
    for i in range(1, 9):
        t[0] = 10.35 + i * 0.05
        meter.feed([TextDelta("abcd")] * 50)
    rate = meter.metrics().tokens_per_s
    assert abs(rate - 1000) / 1000 < 0.05, rate  # (first to last frame would read 1,373)


async def test_after_a_retry_the_live_rate_is_the_new_attempts_and_the_final_ttft_says_whose(
        ) -> None:
    """100 tokens at 1,000 tok/s, a drop, 1.5 s of backoff and reconnect, then the rest of the
    reply at the same pace: the live figure is the new attempt's pace (over both, the wait
    counted in, it read ~250), and the final TTFT names the attempt it belongs to."""
    t = [10.0]
    meter = Meter(clock=lambda: t[0])
    meter.feed([TurnStarted("t", "p", [], 100, False), Started("r", "ws", "m", "u")])
    t[0] = 10.15
    for _ in range(10):
        meter.feed([TextDelta("abcd")] * 10)
        t[0] += 0.010
    meter.feed([Retrying(1, 1.2, "dropped")])
    assert meter.metrics().tokens_per_s is None  # nothing of the new attempt yet
    t[0] += 1.5
    for _ in range(40):
        meter.feed([TextDelta("abcd")] * 10)
        t[0] += 0.010
    live = meter.metrics()
    assert live.output_tokens == 500 and abs(live.tokens_per_s - 1000) / 1000 < 0.05, live
    meter.feed([Completed("id", "", Usage(100, 500), Metrics(0.2, 2.05, 500, 1000.0, attempt=2),
                          retries=1)])
    parts = meter.parts()
    assert parts[0] == "TTFT 200 ms (attempt 2)" and parts[1].startswith("1,000 tok/s")


async def test_no_price_no_cost_and_a_narrow_meter_drops_the_least_important() -> None:
    app = MeterApp()
    async with app.run_test(size=(40, 3)) as pilot:
        meter = app.meter
        meter.feed([TurnStarted("t", "p", [], 10, False), Started("r", "ws", "m", "u"),
                    TextDelta("a"), TextDelta("b")])
        await pilot.pause()
        assert not any("$" in p for p in meter.parts())
        shown = meter.render().plain
        assert shown.startswith("TTFT ") and len(shown) <= 38


def test_sparkline_scales_to_the_highest_bar() -> None:
    assert sparkline([0, 50, 100]) == "▁▅█"
    assert sparkline([0, 0]) == "▁▁"


async def test_an_80_column_meter_shortens_the_sparkline_and_keeps_the_transport() -> None:
    t = [100.0]
    app = MeterApp({"m": (1.0, 2.0)})
    async with app.run_test(size=(80, 3)) as pilot:
        meter = app.meter
        meter.clock = lambda: t[0]
        meter.feed([TurnStarted("t", "p", [], 4000, False), Started("r", "ws", "m", "u")])
        for i in range(1, 41):  # 4 s of frames: a full sparkline, rising
            t[0] = 100.0 + i / 10
            meter.feed([TextDelta("x")] * (10 * i))
        meter.feed([Retrying(4, 0.5, "dropped"), TransportChanged("ws", "responses", "x")])
        await pilot.pause()
        full = " │ ".join(meter.parts())
        assert len(full) > 78 and full.endswith(" │ responses · m")
        shown = meter._line()
        assert len(shown) <= 78 and shown.endswith(" │ 4 retries, 1 fallback │ responses · m")
        bars = shown.split(" │ ")[1].split(" ")[-1]  # the room left: the newest bars
        assert 0 < len(bars) < 12 and set(bars) <= set("▁▂▃▄▅▆▇█") and bars[-1] == "█"
        assert "$" not in shown and "in ~" not in shown  # cost and usage went first


async def test_a_narrow_meter_drops_a_quiet_retry_count_before_the_cost() -> None:
    """With no retry, "0 retries" says least: it goes before the cost does."""
    t = [100.0]
    app = MeterApp({"m": (1.0, 2.0)})
    async with app.run_test(size=(64, 3)) as pilot:
        meter = app.meter
        meter.clock = lambda: t[0]
        meter.feed([TurnStarted("t", "p", [], 4000, False), Started("r", "ws", "m", "u")])
        t[0] = 101.0
        meter.feed([TextDelta("x")] * 50)
        await pilot.pause()
        fields = " │ ".join(text for _, text in meter._fields())
        assert "0 retries" in fields and "$" in fields and len(fields) > meter.size.width
        shown = meter._line()
        assert "0 retries" not in shown and "$" in shown and shown.endswith(" │ ws · m")
