"""Cold-start cost of `spark-pair run`, measured on whole processes against the simulator.

    .venv/bin/python benchmarks/bench_run.py [--runs 5] [--tokens 4000] [--tps 1200 5000]
                                             [--transport ws responses chat] [--https]

Each run is a fresh `spark-pair run PROMPT -f big.py --apply` process (text mode: the diff is
printed to stdout, the meter to stderr), in a scratch git repo reset between runs, with Python's
byte-code cache enabled as on an installed system, after one warm-up run. Start-up is
sampled in every run (4 x --runs per transport). Per transport:

- start: process spawn -> the simulator holding the request;
- tail: the simulator's last token -> the process has exited, having written the files,
  committed the journal and stored the request record (targets <= 30 ms for the ~42-hunk
  edit, <= 15 ms for a one-hunk edit);
- over the stream: what a whole one-hunk run adds to the server's own time (start + tail);
- CPU: user + sys of the process (from wait4, outside the process) per 1,000 output tokens,
  for the ~4,000-token edit at each rate (target <= 25 ms); `marginal` is the CPU above a
  one-hunk run's, per 1,000 extra tokens (the per-token path without start-up);
- floor: what this machine charges a Python process that runs none of spark-pair's code:
  the bare interpreter, plus asyncio, plus sleeping through the reply woken once per read
  period (protocol.batches.READ_PERIOD_S), as the paced reads are (and, for comparison,
  woken by time.sleep with no event loop). The CPU target has to fit above it.

With --https the run talks to the simulator through a TLS front on 127.0.0.1 (a CA made for
the run with the openssl command, trusted through SSL_CERT_FILE, and a certificate it signs),
as every cloud user does: TLS set-up and the CA load count as they would.

The machine may be shared: every figure is min / median / max over the runs.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from spark_pair.protocol.batches import READ_PERIOD_S
from spark_pair.sim.process import SimProcess

TTFT_MS = 100.0
TRANSPORTS = ("ws", "responses", "chat")


def file_text(lines: int) -> str:
    return "".join(f"value_{i} = compute({i}, 'item {i:05d}')\n" for i in range(lines))


def diff_text(lines: int, hunks: int | None = None) -> str:
    """A diff changing one line in every fourteen of big.py (hunks of seven lines: three of
    context on each side of the change)."""
    out = ["--- a/big.py\n", "+++ b/big.py\n"]
    for start in list(range(0, lines - 7, 14))[:hunks]:
        out.append(f"@@ -{start + 1},7 +{start + 1},7 @@\n")
        for j in range(start, start + 7):
            line = f"value_{j} = compute({j}, 'item {j:05d}')\n"
            out.append(f"-{line}+{line.replace('compute(', 'compute_fast(')}" if j == start + 3
                       else f" {line}")
    return "".join(out)


def make_repo(root: Path, tokens: int) -> tuple[str, str]:
    """A git repo holding big.py; returns two replies: a diff of about `tokens` tokens and a
    one-hunk diff of the same file."""
    lines = 14
    while len(diff_text(lines)) // 4 < tokens:
        lines += 14
    (root / "big.py").write_text(file_text(lines))
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-q", "-m", "base")
    return diff_text(lines), diff_text(lines, hunks=1)


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def cli() -> list[str]:
    script = Path(sys.executable).parent / "spark-pair"
    return [str(script)] if script.exists() else [
        sys.executable, "-c", "from spark_pair.entry import main; main()"]


def one_run(sim: SimProcess, repo: Path, home: Path, transport: str, prompt: str,
            front: TlsFront | None = None) -> dict[str, float]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("SPARK_PAIR_") and k != "PYTHONDONTWRITEBYTECODE"}
    # byte-code cached as on an installed system (kept out of the source tree)
    env.update(SPARK_PAIR_HOME=str(home), SPARK_PAIR_BASE_URL=sim.base_url,
               SPARK_PAIR_API_KEY="bench-key", PYTHONPYCACHEPREFIX=str(home / "pycache"))
    if front is not None:
        env.update(SPARK_PAIR_BASE_URL=front.base_url, SSL_CERT_FILE=str(front.cert))
    git(repo, "checkout", "-q", "--", "big.py")
    sim.clear_requests()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        spawn = time.time()
        proc = subprocess.Popen(cli() + ["run", prompt, "-f", "big.py", "--apply",
                                         "--transport", transport],
                                cwd=repo, env=env, stdout=out, stderr=err,
                                stdin=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        exited = time.time()
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err.seek(0)
            raise SystemExit(f"run failed ({proc.returncode}): {err.read()[-2000:]!r}")
        out.seek(0)
        if not out.read(1):
            raise SystemExit("run printed no diff")
    entry = next(e for e in sim.requests() if e["transport"] != "models")
    return {"start_ms": (entry["time"] - spawn) * 1000,
            "tail_ms": (exited - entry["last_token_time"]) * 1000,
            "cpu_ms": (usage.ru_utime + usage.ru_stime) * 1000,
            "tokens": entry["output_tokens"]}


def make_ca(folder: Path) -> tuple[Path, Path, Path]:
    """A CA made for this run and a certificate for localhost it signs (as a cloud endpoint's
    chain: clients that refuse a self-signed leaf as its own CA accept it): (CA, leaf, key)."""
    ca, ca_key = folder / "ca.pem", folder / "ca-key.pem"
    leaf, key, csr, ext = (folder / n for n in ("cert.pem", "key.pem", "cert.csr", "ext.cnf"))
    ext.write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n"
                   "extendedKeyUsage=serverAuth\n")
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
    steps = [["req", "-x509", *ec, "-days", "1", "-subj", "/CN=spark-pair bench CA", "-addext",
              "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign",
              "-keyout", str(ca_key), "-out", str(ca)],
             ["req", *ec, "-subj", "/CN=localhost", "-keyout", str(key), "-out", str(csr)],
             ["x509", "-req", "-in", str(csr), "-CA", str(ca), "-CAkey", str(ca_key),
              "-CAcreateserial", "-days", "1", "-extfile", str(ext), "-out", str(leaf)]]
    try:
        for step in steps:
            subprocess.run(["openssl", *step], check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        raise SystemExit(f"--https needs the openssl command to make a certificate: "
                         f"{exc}") from None
    return ca, leaf, key


class TlsFront:
    """TLS in front of the simulator: https://localhost:PORT, each connection piped to it.
    `cert` is the CA to trust (SSL_CERT_FILE)."""

    def __init__(self, sim_url: str, folder: Path) -> None:
        import ssl
        from urllib.parse import urlsplit

        self.cert, leaf, key = make_ca(folder)
        self.ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.ctx.load_cert_chain(leaf, key)
        parts = urlsplit(sim_url)
        self.target = (parts.hostname, parts.port)
        self.loop = asyncio.new_event_loop()
        ready = threading.Event()
        threading.Thread(target=self._serve, args=(ready,), daemon=True).start()
        ready.wait(10)
        self.base_url = f"https://localhost:{self.port}"

    def _serve(self, ready: threading.Event) -> None:
        asyncio.set_event_loop(self.loop)
        server = self.loop.run_until_complete(
            asyncio.start_server(self._pipe, "127.0.0.1", 0, ssl=self.ctx))
        self.port = server.sockets[0].getsockname()[1]
        ready.set()
        self.loop.run_forever()

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection(*self.target)

        async def copy(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            try:
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            except (OSError, ConnectionError):
                pass
            finally:
                dst.close()

        await asyncio.gather(copy(reader, up_writer), copy(up_reader, writer))


FLOOR_CODE = """
import sys
import asyncio
async def wake(n, period):
    for _ in range(n):
        await asyncio.sleep(period)
asyncio.run(wake(int(sys.argv[1]), float(sys.argv[2])))
"""
SLEEP_CODE = """
import sys, time
for _ in range(int(sys.argv[1])):
    time.sleep(float(sys.argv[2]))
"""


def process_cpu_ms(args: list[str]) -> float:
    """user + sys of a child process (from wait4), in ms."""
    proc = subprocess.Popen(args, stdin=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{args[:2]} failed")
    return (usage.ru_utime + usage.ru_stime) * 1000


def floor_lines(runs: int, tokens: float, rates: list[float]) -> list[str]:
    """The platform's floor: interpreter, + asyncio, + woken per read period for the reply."""
    bare = [process_cpu_ms([sys.executable, "-c", "pass"]) for _ in range(runs)]
    loop = [process_cpu_ms([sys.executable, "-c", FLOOR_CODE, "0", "0"]) for _ in range(runs)]
    out = [f"floor (no spark-pair code): interpreter {spread(bare)}; with asyncio "
           f"{spread(loop)}"]
    for tps in rates:
        reply_s = TTFT_MS / 1000 + tokens / tps
        wakes = round(reply_s / READ_PERIOD_S)
        woken = [process_cpu_ms([sys.executable, "-c", FLOOR_CODE, str(wakes),
                                 str(READ_PERIOD_S)]) for _ in range(runs)]
        slept = [process_cpu_ms([sys.executable, "-c", SLEEP_CODE, str(wakes),
                                 str(READ_PERIOD_S)]) for _ in range(runs)]
        out.append(f"  woken every {READ_PERIOD_S * 1000:g} ms through a {tokens:.0f}-token reply "
                   f"at {tps:5.0f} tok/s ({reply_s:.2f} s): asyncio {spread(woken)} = "
                   f"{statistics.median(woken) / tokens * 1000:.1f} ms per 1,000 tokens; "
                   f"no event loop (time.sleep) {statistics.median(slept) / tokens * 1000:.1f}")
    return out


def spread(values: list[float], unit: str = "ms") -> str:
    return (f"{min(values):6.1f} / {statistics.median(values):6.1f} / {max(values):6.1f} {unit}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=5, help="runs per rate and reply size")
    ap.add_argument("--tokens", type=int, default=4000)
    ap.add_argument("--tps", type=float, nargs="+", default=[1200.0, 5000.0])
    ap.add_argument("--transport", nargs="+", default=list(TRANSPORTS), choices=TRANSPORTS)
    ap.add_argument("--https", action="store_true", help="through a TLS front (see above)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        repo, home = Path(d) / "repo", Path(d) / "home"
        repo.mkdir()
        big, small = make_repo(repo, args.tokens)
        hunks = big.count("\n@@ ")
        print(f"{'https (TLS front), ' if args.https else ''}"
              f"replies: {hunks} hunks ({len(big)} chars) and 1 hunk ({len(small)} chars); "
              f"TTFT {TTFT_MS:g} ms; {args.runs} runs per rate and size; min / median / max; "
              f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        tokens = 0.0
        for transport in args.transport:
            starts: list[float] = []
            tails: dict[str, list[float]] = {"big": [], "small": []}
            over: list[float] = []
            lines = []
            for tps in args.tps:
                with SimProcess(tps=tps, ttft_ms=TTFT_MS) as sim:
                    sim.configure(replies=[{"match": "BIG", "text": big},
                                           {"match": "SMALL", "text": small}])
                    front = TlsFront(sim.base_url, Path(d)) if args.https else None
                    # warm caches (disk, imports)
                    one_run(sim, repo, home, transport, "BIG", front)
                    runs = {size: [one_run(sim, repo, home, transport, size.upper(), front)
                                   for _ in range(args.runs)] for size in ("big", "small")}
                for size, rs in runs.items():
                    starts += [r["start_ms"] for r in rs]
                    tails[size] += [r["tail_ms"] for r in rs]
                over += [r["start_ms"] + r["tail_ms"] for r in runs["small"]]
                per_k = [r["cpu_ms"] / r["tokens"] * 1000 for r in runs["big"]]
                tokens = statistics.median(r["tokens"] for r in runs["big"])
                extra = (statistics.median(r["tokens"] for r in runs["big"])
                         - statistics.median(r["tokens"] for r in runs["small"]))
                marginal = ((statistics.median(r["cpu_ms"] for r in runs["big"])
                             - statistics.median(r["cpu_ms"] for r in runs["small"]))
                            / extra * 1000)
                lines.append(f"  CPU per 1,000 tokens at {tps:5.0f} tok/s: {spread(per_k)}"
                             f"  (target <= 25 ms; marginal {marginal:5.1f} ms; process "
                             f"{statistics.median(r['cpu_ms'] for r in runs['big']):5.0f} ms "
                             f"for {statistics.median(r['tokens'] for r in runs['big']):.0f} "
                             f"tokens)")
            print(f"{transport}:")
            print(f"  start -> request:          {spread(starts)}")
            print(f"  tail, {hunks} hunks:            {spread(tails['big'])}  "
                  f"(target <= 30 ms)")
            print(f"  tail, 1 hunk:              {spread(tails['small'])}  (target <= 15 ms)")
            print(f"  1 hunk, over the stream:   {spread(over)}")
            for line in lines:
                print(line)
        for line in floor_lines(args.runs, tokens, args.tps):
            print(line)


if __name__ == "__main__":
    main()
