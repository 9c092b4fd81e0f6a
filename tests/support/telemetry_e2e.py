"""The telemetry walk-through behind scripts/telemetry-e2e.sh: a Pushgateway and a Prometheus
on loopback, the simulator, `spark-pair run` and two `bench` runs (the second slower) with
pushing on, then the series read back through Prometheus's HTTP API, the alert, and doctor on
a live and a closed Pushgateway. Prints what it finds; exits 1 if anything is missing."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from spark_pair.sim.process import SimProcess
from support.promstack import PromStack, free_port, missing
from support.runs import A_PY, cli, env_for, make_repo

DIFF = ("```diff\n--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n def greet(name):\n"
        "-    return 'hello ' + name\n+    return f'hello {name}'\n```\n")


def main() -> int:
    if missing():
        print(f"missing: {', '.join(missing())} (apt-get install prometheus "
              "prometheus-pushgateway)", file=sys.stderr)
        return 1
    failures = 0

    def check(ok: bool, what: str, detail: object = "") -> None:
        nonlocal failures
        failures += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {what}" + (f": {detail}" if detail != "" else ""))

    with tempfile.TemporaryDirectory() as tmp, PromStack() as stack, \
            SimProcess(tps=1200, ttft_ms=150) as sim:
        print(f"Pushgateway {stack.pushgateway}, Prometheus {stack.prometheus}, "
              f"simulator {sim.base_url}")
        conf = ("[telemetry]\nenabled = true\ninstance = \"e2e\"\n"
                f"pushgateway = \"{stack.pushgateway}\"\n")
        repo = make_repo(Path(tmp) / "repo", {"a.py": A_PY, ".spark-pair.toml": conf})
        env = env_for(Path(tmp) / "home", sim)

        def spark(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(cli() + list(args), cwd=repo, env=env, capture_output=True,
                                  text=True, timeout=120)

        sim.configure(replies=[{"match": "GREET", "text": DIFF}])
        t0 = time.monotonic()
        run = spark("run", "GREET with an f-string", "-f", "a.py", "--apply")
        check(run.returncode == 0, f"spark-pair run --apply ({time.monotonic() - t0:.2f} s)",
              run.stderr.strip().splitlines()[-1] if run.stderr.strip() else "")
        for expr in ('spark_pair_turn_ttft_duration_ms_count{instance="e2e"}',
                     'spark_pair_turn_ttft_duration_ms_sum{instance="e2e"}',
                     'spark_pair_token_usage_total{instance="e2e"}',
                     'spark_pair_lines_of_code_count_total{instance="e2e"}'):
            found = stack.wait_for(expr, timeout=20)
            check(bool(found), f"Prometheus has {expr}",
                  ", ".join(f"{_labels(r)} = {r['value'][1]}" for r in found))
        for tps, label in ((1200, "baseline"), (700, "about 40 % slower")):
            sim.configure(tps=tps)
            bench = spark("bench", "--transport", "ws", "--concurrency", "1,2", "--requests",
                          "3", "--json")
            ok = bench.returncode == 0
            p50s = [lv["tokens_per_s"]["p50"] for lv in json.loads(bench.stdout)["levels"]] \
                if ok else []
            check(ok, f"spark-pair bench, sim at {tps} tok/s ({label})",
                  f"p50 tok/s {[round(x) for x in p50s]}" if ok else bench.stderr[-300:])
        slower = max(p50s or [0]) * 1.05  # the second bench's figures, once scraped
        for expr in ('spark_pair_bench_tokens_per_second{instance="e2e",quantile="0.5"} < '
                     f'{slower:.0f}',
                     'spark_pair_bench_baseline_tokens_per_second{instance="e2e",'
                     'quantile="0.5"}'):
            found = stack.wait_for(expr, timeout=20)
            check(bool(found), f"Prometheus has {expr}",
                  ", ".join(f"c={r['metric']['concurrency']} {float(r['value'][1]):.0f}"
                            for r in found))
        end = time.monotonic() + 30
        firing: list[dict] = []
        while not firing and time.monotonic() < end:
            firing = [a for a in stack.alerts() if a["state"] == "firing"
                      and a["labels"].get("instance") == "e2e"]
            time.sleep(0.5)
        check(bool(firing), "the alert SparkPairBenchThroughputDrop fires",
              ", ".join(f"{_labels(a)} {float(a['value']):.0f} tok/s" for a in firing))
        doctor = json.loads(spark("doctor", "--json").stdout)
        tel = next(c for c in doctor["checks"] if c["id"] == "telemetry")
        check(tel["status"] == "pass", "doctor: the Pushgateway is reachable", tel["detail"])
        (repo / ".spark-pair.toml").write_text(conf.replace(
            stack.pushgateway, f"http://127.0.0.1:{free_port()}"))
        doctor = json.loads(spark("doctor", "--json").stdout)
        tel = next(c for c in doctor["checks"] if c["id"] == "telemetry")
        check(tel["status"] == "fail" and bool(tel["hint"]),
              "doctor: a closed port is unreachable, with a hint", tel["hint"])
    print(f"{'all good' if not failures else f'{failures} problem(s)'}")
    return 1 if failures else 0


def _labels(result: dict) -> str:
    m = result.get("metric") or result["labels"]
    keys = ("command", "type", "transport", "concurrency", "quantile")
    return "{" + ",".join(f"{k}={m[k]}" for k in keys if k in m) + "}"


if __name__ == "__main__":
    sys.exit(main())
