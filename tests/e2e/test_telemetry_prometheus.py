"""Telemetry against the real engines: Debian's Prometheus and Pushgateway on loopback
(tests/support/promstack.py). `run` and `bench` push when they end, `watch` serves /metrics,
Prometheus scrapes both, the shipped alert rule fires on a slower bench, and doctor says
whether the Pushgateway took its test point. Skipped, with the reason, without the binaries."""

from __future__ import annotations

import json
import signal
import subprocess
import time
import uuid
from pathlib import Path

import httpx
import pytest
from support.promstack import INSTALL_HINT, RULES, PromStack, free_port, missing
from support.runs import A_NEW, A_PY, cli, env_for, make_repo

from spark_pair.sim.process import SimProcess

pytestmark = [
    pytest.mark.skipif(bool(missing()), reason=f"needs {', '.join(missing())}: {INSTALL_HINT}"),
    pytest.mark.xdist_group("prometheus"),  # one stack per worker: these share it
]
DIFF = ("```diff\n--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n def greet(name):\n"
        "-    return 'hello ' + name\n+    return f'hello {name}'\n```\n")
ALERT = "SparkPairBenchThroughputDrop"


@pytest.fixture(scope="module")
def stack():
    with PromStack() as running:
        yield running


def project(tmp_path: Path, **telemetry: object) -> tuple[Path, str]:
    """A repository whose .spark-pair.toml turns telemetry on; its own instance label."""
    instance = f"e2e-{uuid.uuid4().hex[:8]}"
    lines = ["[telemetry]", "enabled = true", f'instance = "{instance}"',
             "exit_timeout_s = 10"]  # room for the push on a busy machine
    lines += [f"{k} = {json.dumps(v)}" for k, v in telemetry.items()]
    repo = make_repo(tmp_path / "repo", {"a.py": A_PY, ".spark-pair.toml": "\n".join(lines)})
    return repo, instance


def command(repo: Path, sim: SimProcess, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cli() + list(args), cwd=repo, env=env_for(repo.parent / "home", sim),
                          capture_output=True, text=True, timeout=120)


def bench(repo: Path, sim: SimProcess) -> dict:
    proc = command(repo, sim, "bench", "--transport", "ws", "--concurrency", "1",
                   "--requests", "3", "--json")
    assert proc.returncode == 0, proc.stderr
    assert "telemetry" not in proc.stderr, proc.stderr
    return json.loads(proc.stdout)


def test_run_and_bench_land_in_prometheus_and_the_alert_fires(stack, sim, tmp_path):
    repo, instance = project(tmp_path, pushgateway=stack.pushgateway)
    sim.configure(replies=[{"match": "GREET", "text": DIFF}], tps=1200)
    proc = command(repo, sim, "run", "GREET with an f-string", "-f", "a.py", "--apply")
    assert proc.returncode == 0, proc.stderr
    assert (repo / "a.py").read_text() == A_NEW
    assert "telemetry" not in proc.stderr, proc.stderr
    ttft = stack.wait_for(f'spark_pair_turn_ttft_duration_ms_count{{instance="{instance}"}}')
    assert len(ttft) == 1, stack.logs()
    labels = ttft[0]["metric"]
    assert (labels["job"], labels["command"], labels["transport"]) == ("spark-pair", "run", "ws")
    assert float(ttft[0]["value"][1]) == 1
    added = stack.wait_for(f'spark_pair_lines_of_code_count_total{{instance="{instance}"}}')
    assert {r["metric"]["type"]: float(r["value"][1]) for r in added} == {"added": 1,
                                                                          "removed": 1}

    sim.configure(tps=1200)  # the baseline
    first = bench(repo, sim)
    p50 = first["levels"][0]["tokens_per_s"]["p50"]
    tps = stack.wait_for(f'spark_pair_bench_tokens_per_second{{instance="{instance}",'
                         'quantile="0.5",concurrency="1",transport="ws"}')
    assert len(tps) == 1 and float(tps[0]["value"][1]) == pytest.approx(p50)
    assert stack.query(f'spark_pair_bench_baseline_tokens_per_second{{instance="{instance}"}}'
                       ) == []  # no earlier run: no baseline yet

    sim.configure(tps=700)  # about 40 % slower than the baseline
    second = bench(repo, sim)
    assert second["regression"] is True
    base = stack.wait_for(f'spark_pair_bench_baseline_tokens_per_second{{instance='
                          f'"{instance}",quantile="0.5"}}')
    assert float(base[0]["value"][1]) == pytest.approx(p50)
    firing = wait_alert(stack, instance)
    assert firing is not None, (stack.alerts(), stack.logs())
    assert (firing["labels"]["concurrency"], firing["labels"]["transport"]) == ("1", "ws")


def wait_alert(stack: PromStack, instance: str, timeout: float = 30.0) -> dict | None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        for alert in stack.alerts():
            if (alert["labels"].get("alertname") == ALERT and alert["state"] == "firing"
                    and alert["labels"].get("instance") == instance):
                return alert
        time.sleep(0.25)
    return None


def test_doctor_says_whether_the_pushgateway_took_its_test_point(stack, sim, tmp_path):
    repo, _ = project(tmp_path, pushgateway=stack.pushgateway)
    proc = command(repo, sim, "doctor", "--json")
    check = next(r for r in json.loads(proc.stdout)["checks"] if r["id"] == "telemetry")
    assert check["status"] == "pass", check
    assert "took a test point" in check["detail"]
    groups = httpx.get(f"{stack.pushgateway}/api/v1/metrics", timeout=5, trust_env=False)
    assert "spark-pair-doctor" not in groups.text  # its group was deleted again

    closed = f"http://127.0.0.1:{free_port()}"
    (repo / ".spark-pair.toml").write_text(f'[telemetry]\nenabled = true\npushgateway = '
                                           f'"{closed}"\n')
    proc = command(repo, sim, "doctor", "--json")
    report = json.loads(proc.stdout)
    check = next(r for r in report["checks"] if r["id"] == "telemetry")
    assert check["status"] == "fail" and closed in check["detail"], check
    assert "start the Pushgateway" in check["hint"]
    assert report["exit_code"] == 1 and proc.returncode == 1
    text = command(repo, sim, "doctor")
    assert "metrics export (telemetry)" in text.stdout and "fix: start the Pushgateway" \
        in text.stdout.replace("\n    ", " ").replace("\n         ", " ")
    assert "Traceback" not in text.stderr


def test_watch_serves_metrics_that_prometheus_scrapes(sim, tmp_path):
    port = free_port()
    repo, instance = project(tmp_path, metrics_port=port)
    with PromStack(extra_targets=(f"127.0.0.1:{port}",)) as own:
        proc = subprocess.Popen(cli() + ["watch"], cwd=repo,
                                env=env_for(repo.parent / "home", sim), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        try:
            found = own.wait_for(f'spark_pair_session_count_total{{instance="127.0.0.1:{port}"}}')
            assert found and float(found[0]["value"][1]) == 1, own.logs()
            served = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=5, trust_env=False)
            assert "spark_pair_session_count_total 1.0" in served.text
        finally:
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=30)
        assert "Traceback" not in err, err
        assert "telemetry" not in err, err


def test_the_shipped_alert_rule_passes_promtool(tmp_path):
    check = subprocess.run(["promtool", "check", "rules", str(RULES)], capture_output=True,
                           text=True, timeout=60)
    assert check.returncode == 0, check.stdout + check.stderr
    tests = subprocess.run(["promtool", "test", "rules", "alerts.test.yml"], cwd=RULES.parent,
                           capture_output=True, text=True, timeout=60)
    assert tests.returncode == 0, tests.stdout + tests.stderr
    assert "SUCCESS" in tests.stdout + tests.stderr
    broken = tmp_path / "alerts.yml"  # the rule with its threshold moved: the test must see it
    broken.write_text(RULES.read_text().replace("< 0.9 *", "< 0.8 *"))
    (tmp_path / "alerts.test.yml").write_text((RULES.parent / "alerts.test.yml").read_text())
    moved = subprocess.run(["promtool", "test", "rules", "alerts.test.yml"], cwd=tmp_path,
                           capture_output=True, text=True, timeout=60)
    assert moved.returncode != 0
