"""What `spark-pair run --apply --commit` adds over `run --apply`, on whole processes against the
simulator, with the message request to the model and without it (`[git] message = "template"`).

    .venv/bin/python benchmarks/bench_commit.py [--runs 7] [--ttft-ms 100] [--tps 1200]

Each run is a fresh process in a fresh scratch git repository (made before the clock starts,
with a staged change of the person's in another file, so the separate index has something to
leave alone), editing one hunk of a 200-line file. The three kinds of run take turns, so a busy
moment of a shared machine falls on all of them alike. The simulator answers the edit and the
message request with the same TTFT and pace. Reported: min / median / max wall time per kind,
what --commit adds (median differences), and that as a share of the plain run; then the same
from the run's own clock (--json: its `applied` line to its `end` line, where the commit is
made), which a busy machine disturbs less than whole processes.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from spark_pair.sim.process import SimProcess

LINES = 200
EDIT = ("```diff\n--- a/big.py\n+++ b/big.py\n@@ -100,3 +100,3 @@\n value_99 = 99\n"
        "-value_100 = 100\n+value_100 = 100 * 2\n value_101 = 101\n```\n")
MESSAGE = "Double value_100\n\nThe next step reads it twice."
KINDS = {"apply": ([], None), "commit (message from the model)": (["--commit"], "model"),
         "commit (template, no request)": (["--commit"], "template")}
GIT_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}


def cli() -> list[str]:
    script = Path(sys.executable).parent / "spark-pair"
    return [str(script)] if script.exists() else [
        sys.executable, "-c", "from spark_pair.entry import main; main()"]


def scratch(parent: Path, n: int, message: str | None) -> Path:
    root = parent / f"r{n}"
    root.mkdir()
    (root / "big.py").write_text("".join(f"value_{i} = {i}\n" for i in range(LINES)))
    (root / "notes.txt").write_text("first\n")
    if message is not None:
        (root / ".spark-pair.toml").write_text(f'[git]\nmessage = "{message}"\n')
    env = {**os.environ, **GIT_ENV}
    for args in (["init", "-q"], ["config", "user.name", "Bench"],
                 ["config", "user.email", "bench@example.invalid"], ["add", "."],
                 ["commit", "-qm", "base"]):
        subprocess.run(["git", *args], cwd=root, check=True, env=env, capture_output=True)
    (root / "notes.txt").write_text("first\nstaged\n")
    subprocess.run(["git", "add", "notes.txt"], cwd=root, check=True, env=env)
    return root


def one(root: Path, home: Path, sim: SimProcess, extra: list[str]) -> tuple[float, float]:
    """(the process's wall time, its `applied` line to its `end` line), in ms."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPARK_PAIR_", "OPENAI_"))}
    env.update(GIT_ENV, SPARK_PAIR_HOME=str(home), SPARK_PAIR_BASE_URL=sim.base_url,
               SPARK_PAIR_API_KEY="sk-bench-key", SPARK_PAIR_TRANSPORT="ws")
    t0 = time.perf_counter()
    proc = subprocess.run([*cli(), "run", "DOUBLE value_100", "-f", "big.py", "--apply",
                           "--no-meter", "--json", *extra], cwd=root, env=env, capture_output=True,
                          text=True, timeout=120)
    took = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"run failed ({proc.returncode}): {proc.stderr.strip()}")
    if extra and "committed " not in proc.stderr:
        raise SystemExit(f"no commit was made: {proc.stderr.strip()}")
    t = {line["type"]: line["t"] for line in map(json.loads, proc.stdout.splitlines())}
    return took * 1000, (t["end"] - t["applied"]) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--ttft-ms", type=float, default=100.0)
    parser.add_argument("--tps", type=float, default=1200.0)
    args = parser.parse_args()
    times: dict[str, list[float]] = {k: [] for k in KINDS}
    tails: dict[str, list[float]] = {k: [] for k in KINDS}
    with tempfile.TemporaryDirectory() as tmp, SimProcess(tps=args.tps,
                                                          ttft_ms=args.ttft_ms) as sim:
        sim.configure(replies=[{"match": "Write the commit message", "text": MESSAGE},
                               {"match": "DOUBLE", "text": EDIT}])
        base = Path(tmp)
        n = 0
        for i in range(args.runs + 1):  # the first round warms the caches; not counted
            for kind, (extra, message) in KINDS.items():
                n += 1
                took, tail = one(scratch(base, n, message), base / "home", sim, extra)
                if i:
                    times[kind].append(took)
                    tails[kind].append(tail)
    print(f"run --apply vs --apply --commit: {args.runs} runs each, one hunk, "
          f"TTFT {args.ttft_ms:g} ms, {args.tps:g} tok/s (simulator, ws)")
    whole = statistics.median(times["apply"])
    report("whole process, ms", times, whole)
    report("applied -> end (the run's clock), ms", tails, whole)


def report(title: str, times: dict[str, list[float]], whole: float) -> None:
    """min / median / max per kind; what --commit adds over `apply`, and that as a share of a
    whole plain run (`whole` ms)."""
    plain = statistics.median(times["apply"])
    print(f"\n{title:34} {'min':>8} {'median':>8} {'max':>8}    added    share")
    for kind, values in times.items():
        med = statistics.median(values)
        added = "" if kind == "apply" else f"{med - plain:+7.0f} ms {(med - plain) / whole:+6.0%}"
        print(f"{kind:34} {min(values):8.0f} {med:8.0f} {max(values):8.0f}   {added}")
    model = statistics.median(times["commit (message from the model)"])
    template = statistics.median(times["commit (template, no request)"])
    print(f"the message request alone: {model - template:+.0f} ms; "
          f"the commit without it: {template - plain:+.0f} ms")


if __name__ == "__main__":
    main()
