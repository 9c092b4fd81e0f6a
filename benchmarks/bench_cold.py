"""A cold `spark-pair run` over https, side by side with a peer CLI (Codex CLI) and the floor.

    .venv/bin/python benchmarks/bench_cold.py [--runs 3] [--tps 1200] [--ttft-ms 150]
                                              [--tokens 4000] [--transport responses]
                                              [--peer PATH_TO_CODEX] [--before SRC]

Every run is a fresh process against the simulator behind a TLS front on 127.0.0.1 (a CA made
for the run, trusted through SSL_CERT_FILE in a bundle with certifi's roots, so the CA load
costs what a cloud user's does), in a
scratch git repo reset between runs, the runs of each size interleaved (spark-pair, the peer,
the floor, in turn). Per process, from the simulator's request log and wait4:

- start -> request: process spawn -> the simulator holding the request;
- overhead: what the run adds to the stream (its wall time less the server's own, from the
  request to the last token): start-up before the request plus the tail after the last token;
- CPU: user + sys of the process and the children it waited for.

Sizes: a one-hunk edit (small) and a ~`--tokens` edit (large). spark-pair runs
`run PROMPT -f big.py --apply --transport T` (the edit is written); the peer runs
`codex exec PROMPT` with a provider for the front (the reply is printed: the model sends no
tool call, so the peer writes nothing, which only flatters it).

The floor: a Python process that runs no spark-pair code and does what the request needs:
the interpreter, `import asyncio, httpx`, a default TLS context (the CA load), one streamed
POST read to its end. The target for spark-pair's start -> request is <= 130 ms and at most
~10 ms above the floor's; overhead and CPU at most half the peer's.

The peer: --peer, else `codex` on PATH (npm install -g @openai/codex); skipped, with the
reason, when there is none. --before SRC also runs spark-pair from another source tree (SRC holds
its `spark_pair` package, e.g. `git archive main src | tar -x -C /tmp/main` then /tmp/main/src),
interleaved with the others, for a before / after on the same machine at the same time. The
machine may be shared: figures are min / median / max.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import certifi
from bench_run import TlsFront, cli, git, make_repo, spread

from spark_pair.sim.process import SimProcess

MODEL = "gpt-5.3-codex-spark"
PROMPTS = {"small": "EDIT_SMALL_q7x", "large": "EDIT_LARGE_q7x", "floor": "FLOOR_q7x"}
FLOOR_CODE = """
import asyncio, sys
import httpx

async def main(url, prompt, model):
    body = {"model": model, "input": prompt, "stream": True}
    async with httpx.AsyncClient() as http:
        async with http.stream("POST", url, json=body,
                               headers={"Authorization": "Bearer bench-key"}) as resp:
            async for _ in resp.aiter_raw():
                pass

asyncio.run(main(*sys.argv[1:4]))
"""
CODEX_CONFIG = """model = "{model}"
model_provider = "bench"
[model_providers.bench]
name = "bench"
base_url = "{base}/v1"
env_key = "BENCH_KEY"
wire_api = "responses"
"""


def measured(sim: SimProcess, args: list[str], cwd: Path, env: dict[str, str],
             prompt: str) -> dict[str, float]:
    """One process: start -> request, overhead over the stream, CPU (ms)."""
    sim.clear_requests()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        spawn = time.time()
        proc = subprocess.Popen(args, cwd=cwd, env=env, stdout=out, stderr=err,
                                stdin=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        exited = time.time()
        if os.waitstatus_to_exitcode(status) != 0:
            err.seek(0)
            raise SystemExit(f"{args[0]} failed: {err.read()[-2000:]!r}")
    entry = next(e for e in sim.requests() if e["transport"] not in ("models",)
                 and prompt in str(e.get("body")))
    stream_s = entry["last_token_time"] - entry["time"]
    return {"start": (entry["time"] - spawn) * 1000,
            "over": (exited - spawn - stream_s) * 1000,
            "cpu": (usage.ru_utime + usage.ru_stime) * 1000}


def find_peer(given: str | None) -> tuple[str | None, str]:
    """The peer's command, or None and why it is skipped."""
    path = given or shutil.which("codex")
    if path is None:
        return None, "no `codex` on PATH and no --peer (npm install -g @openai/codex)"
    try:
        version = subprocess.run([path, "--version"], capture_output=True, text=True,
                                 timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"{path} does not run: {exc}"
    return path, version or path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=3, help="runs per size and program")
    ap.add_argument("--tps", type=float, default=1200.0)
    ap.add_argument("--ttft-ms", type=float, default=150.0)
    ap.add_argument("--tokens", type=int, default=4000, help="the large edit's size")
    ap.add_argument("--transport", default="responses", choices=("ws", "responses", "chat"))
    ap.add_argument("--peer", help="the codex command (default: codex on PATH)")
    ap.add_argument("--before", type=Path, metavar="SRC",
                    help="also run spark-pair from this source tree (the folder holding "
                         "spark_pair), for a before / after")
    args = ap.parse_args()
    peer, about = find_peer(args.peer)
    with tempfile.TemporaryDirectory() as d:
        root = Path(d)
        repo, home, codex_home = root / "repo", root / "home", root / "codex"
        for folder in (repo, home, codex_home):
            folder.mkdir()
        large, small = make_repo(repo, args.tokens)
        with SimProcess(tps=args.tps, ttft_ms=args.ttft_ms) as sim:
            sim.configure(replies=[{"match": PROMPTS["large"], "text": large},
                                   {"match": PROMPTS["small"], "text": small},
                                   {"match": PROMPTS["floor"], "text": small}])
            front = TlsFront(sim.base_url, root)
            bundle = root / "bundle.pem"  # a whole root store, as a cloud user's TLS loads
            bundle.write_bytes(Path(certifi.where()).read_bytes() + front.cert.read_bytes())
            (codex_home / "config.toml").write_text(
                CODEX_CONFIG.format(model=MODEL, base=front.base_url))
            env = {k: v for k, v in os.environ.items()
                   if not k.startswith(("SPARK_PAIR_", "OPENAI_", "CODEX_"))
                   and k != "PYTHONDONTWRITEBYTECODE"}
            env.update(SSL_CERT_FILE=str(bundle), SPARK_PAIR_HOME=str(home),
                       SPARK_PAIR_BASE_URL=front.base_url, SPARK_PAIR_API_KEY="bench-key",
                       SPARK_PAIR_MODEL=MODEL, PYTHONPYCACHEPREFIX=str(home / "pycache"),
                       CODEX_HOME=str(codex_home), BENCH_KEY="bench-key")
            programs = {
                "spark-pair": lambda size: cli() + ["run", PROMPTS[size], "-f", "big.py",
                                                    "--apply", "--transport", args.transport],
                "floor": lambda size: [sys.executable, "-c", FLOOR_CODE,
                                       f"{front.base_url}/v1/responses", PROMPTS["floor"], MODEL],
            }
            envs = {name: env for name in ("spark-pair", "floor", "peer")}
            if args.before is not None:
                programs["before"] = programs["spark-pair"]
                envs["before"] = {**env, "PYTHONPATH": str(args.before.resolve()),
                                  "PYTHONPYCACHEPREFIX": str(home / "pycache-before")}
            if peer is not None:
                programs["peer"] = lambda size: [peer, "exec", "--skip-git-repo-check",
                                                 PROMPTS[size]]
            results: dict[tuple[str, str], list[dict[str, float]]] = {}
            for size in ("small", "large"):
                for _ in range(args.runs + 1):  # the first round warms caches: not counted
                    for name, command in programs.items():
                        if name == "floor" and size == "large":
                            continue
                        git(repo, "checkout", "-q", "--", "big.py")
                        prompt = PROMPTS["floor" if name == "floor" else size]
                        results.setdefault((name, size), []).append(
                            measured(sim, command(size), repo, envs[name], prompt))
        report(results, args, about if peer else f"skipped: {about}", large.count("\n@@ "))


def report(results: dict[tuple[str, str], list[dict[str, float]]], args: argparse.Namespace,
           peer: str, hunks: int) -> None:
    def figures(name: str, size: str, what: str) -> list[float]:
        return [r[what] for r in results.get((name, size), [])[1:]]

    print(f"https (TLS front, CA made for the run); the stream at {args.tps:g} tok/s, TTFT "
          f"{args.ttft_ms:g} ms; spark-pair over {args.transport}; the large edit {hunks} hunks; "
          f"{args.runs} runs each (after one warm-up), min / median / max; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(f"peer: {peer}")
    floor = figures("floor", "small", "start")
    print(f"floor (python + asyncio + httpx + TLS context + one POST): start -> request "
          f"{spread(floor)}; CPU {spread(figures('floor', 'small', 'cpu'))}")
    for size in ("small", "large"):
        print(f"{size} edit:")
        for what, label in (("start", "start -> request"), ("over", "overhead over stream"),
                            ("cpu", "CPU")):
            ours, theirs = figures("spark-pair", size, what), figures("peer", size, what)
            line = f"  {label:22} spark-pair {spread(ours)}"
            if theirs:
                ratio = statistics.median(ours) / statistics.median(theirs)
                worst = max(a / b for a, b in zip(ours, theirs, strict=False))
                line += f" | peer {spread(theirs)} | ratio {ratio:.2f}x (worst run {worst:.2f}x)"
            if what == "start" and floor:
                above = statistics.median(ours) - statistics.median(floor)
                line += f" | above the floor {above:+.0f} ms"
            print(line)
            before = figures("before", size, what)
            if before:
                print(f"  {'':22} before     {spread(before)} | after / before "
                      f"{statistics.median(ours) / statistics.median(before):.2f}x")
    print("targets: start -> request <= 130 ms and <= floor + ~10 ms; overhead and CPU "
          "<= 0.5x the peer's")


if __name__ == "__main__":
    main()
