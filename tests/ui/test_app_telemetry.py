"""The app with telemetry on: it serves Prometheus /metrics on its loopback port, and what a
person made of each proposed hunk is counted there (code_edit.decision) along with the turn's
figures. Read over HTTP, as a scraper would."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import httpx
from support.apps import all_proposed, make_app, review, turn_over, until
from support.promstack import free_port

from spark_pair.sim.process import SimProcess
from spark_pair.ui.review_state import Mark


def scrape(port: int) -> str:
    resp = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=5, trust_env=False)
    resp.raise_for_status()
    return resp.text


def figure(text: str, name: str, **labels: str) -> float:
    """The value of the one series `name` whose labels include `labels` (0 when absent)."""
    found = 0.0
    for line in text.splitlines():
        m = re.fullmatch(rf"{name}\{{(.*)\}} (\S+)", line) or re.fullmatch(rf"{name} (\S+)",
                                                                         line)
        if m is None:
            continue
        have = dict(re.findall(r'(\w+)="([^"]*)"', m.group(1))) if m.lastindex == 2 else {}
        if all(have.get(k) == v for k, v in labels.items()):
            found += float(m.group(m.lastindex))
    return found


async def test_the_app_serves_metrics_with_a_persons_hunk_decisions(
        repo: Path, demo_sim: SimProcess) -> None:
    port = free_port()
    app = make_app(repo, demo_sim, **{"telemetry.enabled": "true",
                                      "telemetry.metrics_port": str(port)})
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: all_proposed(app), "every proposal")
        await pilot.press("alt+shift+a", "alt+shift+r")  # modifies kept, the rest rejected
        await until(pilot, lambda: turn_over(app), "the end of the turn")
        entries = review(app).review.entries.values()
        kept = sum(m is Mark.ACCEPTED for e in entries for m in (e.hunks or [e.mark]))
        rejected = sum(m is Mark.REJECTED for e in entries for m in (e.hunks or [e.mark]))
        assert kept and rejected
        text = await asyncio.to_thread(scrape, port)  # (off the app's loop, as a scraper)
    assert figure(text, "spark_pair_session_count_total") == 1
    assert figure(text, "spark_pair_code_edit_decision_total", decision="kept",
                  unit="hunk", model="gpt-5.3-codex-spark") == kept
    assert figure(text, "spark_pair_code_edit_decision_total", decision="rejected") == rejected
    assert figure(text, "spark_pair_turn_ttft_duration_ms_count") >= 1
    assert figure(text, "spark_pair_lines_of_code_count_total", type="added") > 0
    assert "inventory" not in text and "127.0.0.1" not in text  # no path, no host
