"""What telemetry costs: per request on the turn's thread, and on a whole `spark-pair run`.

1. Recording: microseconds per request record (its points, then the SDK's instruments, with
   an OTLP and a Prometheus reader in place), and per finished turn and verdict set. This is
   all that happens on the event loop; every export runs in a thread of its own.
2. A `spark-pair run` against the simulator, telemetry off and on (pushing to a Pushgateway on
   loopback when Debian's is installed, else exporting to an OTLP receiver on loopback), runs
   interleaved A/B: the median wall seconds and the difference.
Prints the load average next to the figures (the machine is shared).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from support.otlp import OtlpReceiver  # noqa: E402
from support.promstack import free_port, missing  # noqa: E402
from support.runs import A_PY, cli, env_for, make_repo  # noqa: E402

from spark_pair.ops.telemetry import Telemetry  # noqa: E402
from spark_pair.ops.telemetry.options import TelemetryOptions  # noqa: E402
from spark_pair.sim.process import SimProcess  # noqa: E402
from spark_pair.store.records import RequestRecord  # noqa: E402
from spark_pair.verdicts import Fate, Verdict  # noqa: E402

RECORDS = 20_000
RUNS = 8
DIFF = ("```diff\n--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n def greet(name):\n"
        "-    return 'hello ' + name\n+    return f'hello {name}'\n```\n")


def load() -> str:
    return "load {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def recording() -> None:
    opts = TelemetryOptions(otlp_url=f"http://127.0.0.1:{free_port()}/v1/metrics",
                            pushgateway="http://127.0.0.1:9", interval_s=3600)
    tel = Telemetry(opts, lambda _t: None, command="run", prices={"m": (1.0, 4.0)})
    assert tel.ready(30), "the meters did not load"
    rec = RequestRecord(ts=1.0, model="m", transport="ws", status="ok", input_tokens=900,
                        output_tokens=400, ttft_ms=150.0, duration_ms=480.0,
                        tokens_per_s=1200.0)
    verdicts = [Verdict(0, "a.py", "modify", h, Fate.KEPT) for h in range(4)]
    for _ in range(1000):  # warm
        tel.record(rec)
    t0 = time.perf_counter()
    for _ in range(RECORDS):
        tel.record(rec)
    per_record = (time.perf_counter() - t0) / RECORDS * 1e6
    t0 = time.perf_counter()
    for _ in range(RECORDS):
        tel.record_verdicts("t", "m", verdicts)
    per_verdicts = (time.perf_counter() - t0) / RECORDS * 1e6
    print(f"recording: {per_record:.1f} us per request record (6 points), "
          f"{per_verdicts:.1f} us per turn's verdicts (4 hunks)   [{load()}]")


def runs() -> None:
    with tempfile.TemporaryDirectory() as tmp, SimProcess(tps=1200, ttft_ms=150) as sim:
        repo = make_repo(Path(tmp) / "repo", {"a.py": A_PY})
        sim.configure(replies=[{"match": "GREET", "text": DIFF}])
        base = env_for(Path(tmp) / "home", sim)
        stack = None
        if not missing():
            from support.promstack import PromStack

            stack = PromStack().__enter__()
            on = {**base, "SPARK_PAIR_TELEMETRY": "1", "OTEL_METRICS_EXPORTER": "none"}
            where = "a Pushgateway"
        receiver = OtlpReceiver().__enter__()
        if stack is None:
            on = {**base, "SPARK_PAIR_TELEMETRY": "1", "OTEL_EXPORTER_OTLP_ENDPOINT":
                  receiver.url}
            where = "an OTLP receiver"
        else:
            (repo / ".spark-pair.toml").write_text(
                f'[telemetry]\npushgateway = "{stack.pushgateway}"\n')
            subprocess.run(["git", "add", "."], cwd=repo, check=True)
            subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit",
                            "-qm", "conf"], cwd=repo, check=True)
        times: dict[str, list[float]] = {"off": [], "on": []}
        try:
            for i in range(RUNS * 2 + 2):
                name = "on" if i % 2 else "off"
                env = on if name == "on" else base
                t0 = time.perf_counter()
                proc = subprocess.run(cli() + ["run", "GREET", "-f", "a.py"], cwd=repo,
                                      env=env, capture_output=True, text=True, timeout=60)
                took = time.perf_counter() - t0
                assert proc.returncode == 0, proc.stderr
                assert "telemetry" not in proc.stderr, proc.stderr
                if i >= 2:  # the first pair warms the caches
                    times[name].append(took)
        finally:
            receiver.__exit__()
            if stack is not None:
                stack.__exit__()
        off, on_ = statistics.median(times["off"]), statistics.median(times["on"])
        print(f"spark-pair run, median of {RUNS}: off {off:.3f} s, on (pushing to {where}) "
              f"{on_:.3f} s: +{(on_ - off) * 1000:.0f} ms ({on_ / off:.2f}x)   [{load()}]")


if __name__ == "__main__":
    recording()
    runs()
