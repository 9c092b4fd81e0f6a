"""`spark-pair doctor` against a server whose answers never end: it reads no more of an
answer than the wire's limits (protocol.limits), ends with a clear message, and its memory
stays bounded. The server is a real process on 127.0.0.1 (tests/support/endless_server.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.runs import cli

SERVER = Path(__file__).parents[1] / "support" / "endless_server.py"
MODEL = "gpt-5.3-codex-spark"
# doctor's own peak (Python, httpx, websockets, a 16 MiB answer read whole): far below what an
# unbounded read of the server's 8 GiB answer holds within the check timeout
MAX_RSS_MIB = 200
# (the WebSocket upgrade is answered HTTP 500 with the endless body: the check ends on the
# answer it cannot read, not at its timeout having read gigabytes)
UPGRADE = "did not receive a valid HTTP response (body too large"


def doctor(base_url: str, home: Path, **more: str) -> tuple[int, dict, str, float]:
    """Run doctor --json; (exit code, its report, stderr, peak RSS in MiB)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SPARK_PAIR_", "OPENAI_", "OTEL_"))}
    env.update(SPARK_PAIR_HOME=str(home), SPARK_PAIR_BASE_URL=base_url, SPARK_PAIR_MODEL=MODEL,
               SPARK_PAIR_API_KEY="sk-test-endless-key", **more)
    out, err = home / "out", home / "err"
    with open(out, "wb") as stdout, open(err, "wb") as stderr:
        proc = subprocess.Popen([*cli(), "doctor", "--json", "--check-timeout", "5"], env=env,
                                stdout=stdout, stderr=stderr, cwd=home)
        try:
            _, status, usage = os.wait4(proc.pid, 0)  # the usage of this process alone
        except BaseException:
            proc.kill()
            raise
        proc.returncode = os.waitstatus_to_exitcode(status)
    rss_mib = usage.ru_maxrss / 1024  # KiB on Linux
    return proc.returncode, json.loads(out.read_text()), err.read_text(), rss_mib


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ru_maxrss in KiB")
@pytest.mark.parametrize("mode, said", [
    ("models", {"models": "more than 16 MiB (spark-pair's limit)"}),
    ("post-error", {"request": "server error 500", "stream": "server error 500",
                    "telemetry": "answered HTTP 500",  # (doctor's test point to a collector)
                    "ws": UPGRADE}),
    ("post-json", {"request": "more than 16 MiB (spark-pair's limit)",
                   "stream": "got one JSON body", "ws": UPGRADE}),
    ("post-sse", {"request": "more than 16 MiB (spark-pair's limit)",
                  "stream": "more than 8 MiB (spark-pair's limit)", "ws": UPGRADE}),
])
def test_an_answer_that_never_ends_is_read_only_so_far(tmp_path, mode, said):
    server = subprocess.Popen([sys.executable, str(SERVER), mode, MODEL],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        home = tmp_path / "home"
        home.mkdir()
        base = f"http://127.0.0.1:{port}"
        telemetry = ({"SPARK_PAIR_TELEMETRY": "1", "OTEL_EXPORTER_OTLP_ENDPOINT": base}
                     if "telemetry" in said else {})
        code, report, stderr, rss_mib = doctor(base, home, **telemetry)
    finally:
        server.kill()
        server.wait(10)
        if server.stdout is not None:
            server.stdout.close()
    results = {r["id"]: r for r in report["checks"]}
    assert code == 1 and report["failed_check"] == next(iter(said)), report
    for check, text in said.items():
        assert results[check]["status"] == "fail" and results[check]["hint"], results[check]
        assert text in results[check]["detail"], results[check]
    if "ws" in said:  # not taken for a link problem
        assert "no real reply is this large" in results["ws"]["hint"], results["ws"]
        assert len(results[check]["detail"]) < 1000  # an excerpt, not the body
    assert "Traceback" not in stderr
    assert rss_mib < MAX_RSS_MIB, f"doctor held {rss_mib:.0f} MiB"
