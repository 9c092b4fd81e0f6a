"""End-to-end overhead of `spark-pair run --json` against the simulator's own stream time.

    .venv/bin/python benchmarks/bench_run.py [--runs 3] [--tokens 4000] [--tps 1200 5000]

For a reply that is a ~4,000-token unified diff, at each simulated rate:
- stream time: the simulator's paced duration (TTFT + tokens / tok/s, it does not drift);
- turn time: from the `request` JSON line to the `end` JSON line (client streaming, incremental
  parsing, decisions, JSON output, rendering the result);
- overhead = (turn time - stream time) / stream time (target <= 5 %);
- start-up: process spawn to the simulator logging the request (target <= 300 ms).
Runs are dry runs in a scratch git repo (nothing written), after one warm-up run, with Python's
byte-code cache enabled as on an installed system. Prints one line per rate.
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

TTFT_MS = 100.0


def file_text(lines: int) -> str:
    return "".join(f"value_{i} = compute({i}, 'item {i:05d}')\n" for i in range(lines))


def diff_text(lines: int) -> str:
    """A diff changing one line in every eight of big.py (hunks with real context)."""
    out = ["--- a/big.py\n", "+++ b/big.py\n"]
    for start in range(0, lines - 4, 8):
        out.append(f"@@ -{start + 1},4 +{start + 1},4 @@\n")
        for j in range(start, start + 4):
            line = f"value_{j} = compute({j}, 'item {j:05d}')\n"
            out.append(f"-{line}+{line.replace('compute(', 'compute_fast(')}" if j == start + 1
                       else f" {line}")
    return "".join(out)


def make_repo(root: Path, tokens: int) -> str:
    """A git repo holding big.py; returns the reply: a diff of about `tokens` tokens."""
    lines = 8
    while len(diff_text(lines)) // 4 < tokens:
        lines += 8
    (root / "big.py").write_text(file_text(lines))
    for args in (["init", "-q"], ["add", "."], ["-c", "user.name=b", "-c", "user.email=b@b",
                                                 "commit", "-q", "-m", "base"]):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)
    return diff_text(lines)


def cli() -> list[str]:
    script = Path(sys.executable).parent / "spark-pair"
    return [str(script)] if script.exists() else [
        sys.executable, "-c", "from spark_pair.cli import main; main()"]


def one_run(sim: SimProcess, repo: Path, home: Path, transport: str) -> dict[str, float]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("SPARK_PAIR_") and k != "PYTHONDONTWRITEBYTECODE"}
    # byte-code cached as on an installed system (kept out of the source tree)
    env.update(SPARK_PAIR_HOME=str(home), SPARK_PAIR_BASE_URL=sim.base_url,
               SPARK_PAIR_API_KEY="bench-key", PYTHONPYCACHEPREFIX=str(home / "pycache"))
    sim.clear_requests()
    spawn = time.time()
    proc = subprocess.run(cli() + ["run", "BENCH", "-f", "big.py", "--json", "--no-meter",
                                   "--transport", transport], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise SystemExit(f"run failed ({proc.returncode}): {proc.stderr[-2000:]}")
    lines = [json.loads(x) for x in proc.stdout.splitlines()]
    req = next(x for x in lines if x["type"] == "request")
    end = lines[-1]
    metrics = next(x for x in lines if x["type"] == "metrics")
    first = min(e["time"] for e in sim.requests() if e["transport"] != "models")
    return {"turn_s": end["t"] - req["t"], "startup_s": first - spawn,
            "tokens": metrics["output_tokens"], "client_stream_s": metrics["duration_ms"] / 1000}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--tokens", type=int, default=4000)
    ap.add_argument("--tps", type=float, nargs="+", default=[1200.0, 5000.0])
    ap.add_argument("--transport", default="ws", choices=["ws", "responses", "chat"])
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        repo, home = Path(d) / "repo", Path(d) / "home"
        repo.mkdir()
        diff = make_repo(repo, args.tokens)
        n_tokens = -(-len(diff) // 4)
        print(f"reply: {n_tokens} tokens ({len(diff)} chars), TTFT {TTFT_MS:g} ms, "
              f"transport {args.transport}, {args.runs} runs per rate")
        for tps in args.tps:
            with SimProcess(tps=tps, ttft_ms=TTFT_MS) as sim:
                sim.configure(replies=[{"match": "BENCH", "text": diff}])
                one_run(sim, repo, home, args.transport)  # warm caches (disk, imports)
                runs = [one_run(sim, repo, home, args.transport) for _ in range(args.runs)]
            stream_s = TTFT_MS / 1000 + (n_tokens - 1) / tps
            turn = statistics.median(r["turn_s"] for r in runs)
            start = statistics.median(r["startup_s"] for r in runs)
            over = (turn - stream_s) / stream_s * 100
            print(f"{tps:>6.0f} tok/s: stream {stream_s * 1000:7.1f} ms  turn {turn * 1000:7.1f} ms"
                  f"  overhead {over:5.1f} % (target <= 5 %)  start-up to first request "
                  f"{start * 1000:5.0f} ms (target <= 300 ms)")


if __name__ == "__main__":
    main()
