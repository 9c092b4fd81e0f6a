"""What a `spark-pair` process spends starting: CPU and wall time of whole processes.

    .venv/bin/python benchmarks/bench_start.py [--runs 20] [--before SRC] [--only run-http ...]

Each figure is a fresh process (byte code cached, as on an installed system), after one
warm-up, measured from outside with wait4 (user + sys of the process and the children it
waited for):

- run-http / run-ws: `spark-pair run PROMPT -f a.py --apply --transport responses|ws`, one
  one-hunk turn against the simulator (`python -m spark_pair.sim`, unpaced) on 127.0.0.1, in a
  scratch git repo reset between runs;
- doctor: `spark-pair doctor --json` against the same simulator (every check, WebSocket and
  fallback included);
- doctor-endless: the same against tests/support/endless_server.py (post-error: every POST and
  the WebSocket upgrade answered HTTP 500 with a body that never ends), as the tests run it;
- sim: `python -m spark_pair.sim --port 0`: spawn -> its listening line (ready), its CPU at
  that moment (/proc), and its whole CPU once stopped (SIGTERM) straight after;
- version: `spark-pair --version` (the interpreter, click and the command table);
- python: `python -c pass` (the floor no start-up gets under).

--before SRC also runs every program from another source tree (SRC holds its `spark_pair`
package, e.g. `git archive main src | tar -x -C /tmp/main` then /tmp/main/src), interleaved
with this tree's runs, for a before / after on the same machine at the same time. The machine
may be shared: figures are min / median / max; ratios are of the medians.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from spark_pair.sim.process import LISTEN_PREFIX, SimProcess

A_PY = "def greet(name):\n    return 'hello ' + name\n"
REPLY = ("```diff\n--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n def greet(name):\n"
         "-    return 'hello ' + name\n+    return f'hello {name}'\n```\n")
KEY = "bench-start-key"
MODEL = "gpt-5.3-codex-spark"
PROGRAMS = ("python", "version", "sim", "run-http", "run-ws", "doctor", "doctor-endless")
ENDLESS = Path(__file__).resolve().parents[1] / "tests" / "support" / "endless_server.py"
TICK_S = 1 / os.sysconf("SC_CLK_TCK")


def spark_pair() -> list[str]:
    # the console script's own code, run by this interpreter (so PYTHONPATH picks the tree)
    return [sys.executable, "-c", "from spark_pair.entry import main; main()"]


def waited(args: list[str], cwd: Path, env: dict[str, str], code: int = 0) -> dict[str, float]:
    """Run one process to its end (exit `code`): wall and CPU (ms)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        spawn = time.perf_counter()
        proc = subprocess.Popen(args, cwd=cwd, env=env, stdout=out, stderr=err,
                                stdin=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - spawn
        if os.waitstatus_to_exitcode(status) != code:
            err.seek(0)
            out.seek(0)
            raise SystemExit(f"{args[-6:]} failed: {out.read()[-1000:]!r} "
                             f"{err.read()[-2000:]!r}")
    return {"wall": wall * 1000, "cpu": (usage.ru_utime + usage.ru_stime) * 1000}


def proc_cpu_s(pid: int) -> float:
    """user + sys so far of a live process, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * TICK_S


def sim_start(env: dict[str, str], cwd: Path) -> dict[str, float]:
    """The simulator: spawn -> listening, its CPU then, its CPU in all once stopped."""
    args = [sys.executable, "-m", "spark_pair.sim", "--host", "127.0.0.1", "--port", "0",
            "--tps", "0", "--ttft-ms", "0"]
    spawn = time.perf_counter()
    proc = subprocess.Popen(args, cwd=cwd, env={**env, "PYTHONUNBUFFERED": "1"},
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            stdin=subprocess.DEVNULL)
    assert proc.stdout is not None
    line = proc.stdout.readline().decode()
    ready = time.perf_counter() - spawn
    if not line.startswith(LISTEN_PREFIX):
        proc.kill()
        proc.wait()
        raise SystemExit(f"the simulator did not start: {line!r}")
    at_ready = proc_cpu_s(proc.pid)
    proc.send_signal(signal.SIGTERM)
    _, _, usage = os.wait4(proc.pid, 0)
    proc.stdout.close()
    return {"wall": ready * 1000, "cpu_ready": at_ready * 1000,
            "cpu": (usage.ru_utime + usage.ru_stime) * 1000}


def make_repo(root: Path) -> Path:
    root.mkdir()
    (root / "a.py").write_text(A_PY)
    for args in (["init", "-q"], ["add", "."],
                 ["-c", "user.name=b", "-c", "user.email=b@b", "-c", "commit.gpgsign=false",
                  "commit", "-q", "-m", "base"]):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)
    return root


def programs(sim: SimProcess, repo: Path) -> dict[str, Callable[[dict[str, str]],
                                                                dict[str, float]]]:
    def run(transport: str) -> Callable[[dict[str, str]], dict[str, float]]:
        def one(env: dict[str, str]) -> dict[str, float]:
            subprocess.run(["git", "checkout", "-q", "--", "a.py"], cwd=repo, check=True)
            return waited(spark_pair() + ["run", "make greet use an f-string", "-f", "a.py",
                                          "--apply", "--transport", transport], repo, env)
        return one

    return {
        "python": lambda env: waited([sys.executable, "-c", "pass"], repo, env),
        "version": lambda env: waited(spark_pair() + ["--version"], repo, env),
        "sim": lambda env: sim_start(env, repo),
        "run-http": run("responses"),
        "run-ws": run("ws"),
        "doctor": lambda env: waited(spark_pair() + ["doctor", "--json"], repo, env),
        "doctor-endless": lambda env: endless_doctor(repo, env),
    }


def endless_doctor(repo: Path, env: dict[str, str]) -> dict[str, float]:
    """doctor --json against a server whose answers never end (it fails: exit 1)."""
    server = subprocess.Popen([sys.executable, str(ENDLESS), "post-error", MODEL],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        base = f"http://127.0.0.1:{int(server.stdout.readline())}"
        return waited(spark_pair() + ["doctor", "--json", "--check-timeout", "5"], repo,
                      {**env, "SPARK_PAIR_BASE_URL": base}, code=1)
    finally:
        server.kill()
        server.wait(10)
        if server.stdout is not None:
            server.stdout.close()


def spread(values: list[float]) -> str:
    return f"{min(values):7.1f} / {statistics.median(values):7.1f} / {max(values):7.1f} ms"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=20, help="runs per program and tree")
    ap.add_argument("--before", type=Path, metavar="SRC",
                    help="also run every program from this source tree (the folder holding "
                         "spark_pair), for a before / after")
    ap.add_argument("--only", nargs="+", choices=PROGRAMS, default=list(PROGRAMS))
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        root = Path(d)
        repo, home = make_repo(root / "repo"), root / "home"
        home.mkdir()
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("SPARK_PAIR_", "OPENAI_"))
               and k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")}
        trees = {}
        if args.before is not None:
            trees["before"] = {**env, "PYTHONPATH": str(args.before.resolve()),
                               "PYTHONPYCACHEPREFIX": str(home / "pycache-before")}
        trees["after"] = {**env, "PYTHONPYCACHEPREFIX": str(home / "pycache")}
        with SimProcess(tps=0, ttft_ms=0) as sim:
            sim.configure(api_key=KEY, replies=[{"match": "f-string", "text": REPLY},
                                                {"match": "What number", "text": "42"}])
            for tree in trees.values():
                tree.update(SPARK_PAIR_HOME=str(home), SPARK_PAIR_BASE_URL=sim.base_url,
                            SPARK_PAIR_API_KEY=KEY, SPARK_PAIR_MODEL=MODEL)
            table = programs(sim, repo)
            results: dict[tuple[str, str], list[dict[str, float]]] = {}
            for name in args.only:
                for i in range(args.runs + 1):  # the first round warms caches: not counted
                    for tree, tree_env in trees.items():
                        figures = table[name](tree_env)
                        if i:
                            results.setdefault((name, tree), []).append(figures)
    report(results, args.only, list(trees), args.runs)


def report(results: dict[tuple[str, str], list[dict[str, float]]], names: list[str],
           trees: list[str], runs: int) -> None:
    print(f"{runs} runs each after one warm-up, min / median / max; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    for name in names:
        print(f"{name}:")
        labels = [("cpu", "CPU"), ("wall", "wall" if name != "sim" else "spawn -> ready")]
        if name == "sim":
            labels.insert(1, ("cpu_ready", "CPU at ready"))
        for what, label in labels:
            for tree in trees:
                values = [r[what] for r in results[(name, tree)]]
                line = f"  {label:15} {tree:6} {spread(values)}"
                if tree == "after" and "before" in trees:
                    before = statistics.median(r[what] for r in results[(name, "before")])
                    line += f" | after / before {statistics.median(values) / before:.2f}x"
                print(line)


if __name__ == "__main__":
    main()
