"""What telemetry costs: per request on the turn's thread, and on a whole `spark-pair run`.

1. Recording: microseconds per request record (its points, then the SDK's instruments, with
   an OTLP and a Prometheus reader in place), and per finished turn and verdict set. This is
   all that happens on the event loop; every export runs in a thread of its own.
2. A `spark-pair run` against the simulator, telemetry off and on, exporting over OTLP and
   pushing to a Pushgateway (Debian's, when installed) that is live, down, silent (takes the
   connection, never answers) or answers 500: the median wall seconds of runs interleaved,
   and the delay on the run's exit against telemetry off (bounded by the 1 s exit budget).
Prints the load average next to the figures (the machine is shared).
"""

from __future__ import annotations

import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from support.otlp import OtlpReceiver  # noqa: E402
from support.promstack import free_port, missing  # noqa: E402
from support.runs import A_PY, cli, env_for, make_repo  # noqa: E402

from spark_pair.protocol.records import RequestRecord  # noqa: E402
from spark_pair.sim.process import SimProcess  # noqa: E402
from spark_pair.store.verdicts import Fate, Verdict  # noqa: E402
from spark_pair.telemetry import Telemetry  # noqa: E402
from spark_pair.telemetry.options import TelemetryOptions  # noqa: E402

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


class Silent:
    """An endpoint that takes connections and never answers (a hung collector)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.held: list[socket.socket] = []
        threading.Thread(target=self._take, daemon=True).start()

    def _take(self) -> None:
        while True:
            try:
                self.held.append(self.sock.accept()[0])
            except OSError:
                return


def runs() -> None:
    """`spark-pair run` with telemetry off, then pushing or exporting to endpoints that are
    live, down (port closed), silent (never answer) and erroring (HTTP 500), interleaved."""
    with tempfile.TemporaryDirectory() as tmp, SimProcess(tps=1200, ttft_ms=150) as sim, \
            OtlpReceiver() as live, OtlpReceiver(status=500) as erroring:
        repo = make_repo(Path(tmp) / "repo", {"a.py": A_PY})
        sim.configure(replies=[{"match": "GREET", "text": DIFF}])
        base = env_for(Path(tmp) / "home", sim)
        down, silent = f"http://127.0.0.1:{free_port()}", Silent()
        stack = None
        if not missing():
            from support.promstack import PromStack

            stack = PromStack().__enter__()
        on = {"SPARK_PAIR_TELEMETRY": "1"}
        variants: dict[str, tuple[dict[str, str], str]] = {"off": ({}, "")}
        for name, url in (("live", live.url), ("down", down), ("silent", silent.url),
                          ("500", erroring.url)):
            variants[f"OTLP {name}"] = ({**on, "OTEL_EXPORTER_OTLP_ENDPOINT": url}, "")
        for name, url in (("live", stack.pushgateway if stack else ""), ("down", down),
                          ("silent", silent.url), ("500", erroring.url)):
            if url:
                variants[f"push {name}"] = (on, url)
        times: dict[str, list[float]] = {name: [] for name in variants}
        conf = repo / ".spark-pair.toml"
        try:
            for i in range(RUNS + 1):  # the first round warms the caches
                for name, (extra, push) in variants.items():
                    conf.write_text(f'[telemetry]\npushgateway = "{push}"\n' if push else "")
                    t0 = time.perf_counter()
                    proc = subprocess.run(cli() + ["run", "GREET", "-f", "a.py"], cwd=repo,
                                          env={**base, **extra}, capture_output=True,
                                          text=True, timeout=60)
                    took = time.perf_counter() - t0
                    assert proc.returncode == 0, proc.stderr
                    notes = [x for x in proc.stderr.splitlines() if "telemetry" in x]
                    assert len(notes) == (name.split()[-1] not in ("off", "live")), notes
                    if i:
                        times[name].append(took)
        finally:
            if stack is not None:
                stack.__exit__()
        off = statistics.median(times["off"])
        print(f"spark-pair run, median and max of {RUNS} (interleaved), exit budget 1 s:")
        for name, took in times.items():
            med = statistics.median(took)
            print(f"  {name:12s} {med:.3f} s (max {max(took):.3f})  {(med - off) * 1000:+5.0f} "
                  f"ms vs off")
        print(f"  [{load()}]")


if __name__ == "__main__":
    recording()
    runs()
