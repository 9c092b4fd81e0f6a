"""Debian's Prometheus and Pushgateway as real processes on loopback, for the telemetry tests
and scripts/telemetry-e2e.sh: a Pushgateway, and a Prometheus that scrapes it (and any other
/metrics target given) every second, with the shipped alert rules loaded."""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

RULES = Path(__file__).resolve().parents[2] / "docs" / "telemetry" / "alerts.yml"
BINARIES = ("prometheus", "prometheus-pushgateway", "promtool")
INSTALL_HINT = "apt-get install prometheus prometheus-pushgateway (or scripts/telemetry-e2e.sh)"


def missing() -> list[str]:
    return [b for b in BINARIES if shutil.which(b) is None]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PromStack:
    def __init__(self, extra_targets: tuple[str, ...] = ()) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="spark-pair-prom-"))
        self.push_port, self.prom_port = free_port(), free_port()
        self.pushgateway = f"http://127.0.0.1:{self.push_port}"
        self.prometheus = f"http://127.0.0.1:{self.prom_port}"
        self.extra_targets = extra_targets
        self.procs: list[subprocess.Popen[bytes]] = []
        # one client for every query and poll, no CA bundle (plain http): a client a call cost
        # 20-40 ms of CPU, polled four times a second
        self.http = httpx.Client(trust_env=False, verify=False, timeout=5.0)

    def __enter__(self) -> PromStack:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        targets = ", ".join(f"'{t}'" for t in (f"127.0.0.1:{self.push_port}",
                                               *self.extra_targets))
        shutil.copy(RULES, self.dir / "alerts.yml")
        (self.dir / "prometheus.yml").write_text(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
            "rule_files: ['alerts.yml']\n"
            "scrape_configs:\n  - job_name: spark-pair\n    honor_labels: true\n"
            f"    static_configs:\n      - targets: [{targets}]\n")
        # in memory only: Debian's default keeps every group in /var/lib/prometheus, so a
        # Pushgateway would start with the groups of earlier (or concurrent) runs
        self._spawn(["prometheus-pushgateway", "--persistence.file=",
                     f"--web.listen-address=127.0.0.1:{self.push_port}"], "pushgateway.log")
        self._spawn(["prometheus", f"--config.file={self.dir / 'prometheus.yml'}",
                     f"--storage.tsdb.path={self.dir / 'data'}",
                     f"--web.listen-address=127.0.0.1:{self.prom_port}"], "prometheus.log")
        self._ready(f"{self.pushgateway}/-/ready")
        self._ready(f"{self.prometheus}/-/ready")

    def _spawn(self, args: list[str], log: str) -> None:
        out = open(self.dir / log, "wb")  # noqa: SIM115 - kept open for the process's life
        self.procs.append(subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT,
                                           stdin=subprocess.DEVNULL, cwd=self.dir,
                                           start_new_session=True))
        out.close()

    def _ready(self, url: str, timeout: float = 30.0) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if any(p.poll() is not None for p in self.procs):
                raise RuntimeError(f"a Prometheus process exited:\n{self.logs()}")
            try:
                if self.http.get(url, timeout=1.0).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"{url} not ready within {timeout:g} s:\n{self.logs()}")

    def logs(self) -> str:
        return "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-2000:]}"
                         for p in sorted(self.dir.glob("*.log")))

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self.procs = []
        self.http.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def query(self, expr: str) -> list[dict[str, Any]]:
        """An instant query through Prometheus's HTTP API: its result vector."""
        resp = self.http.get(f"{self.prometheus}/api/v1/query", params={"query": expr})
        resp.raise_for_status()
        body = resp.json()
        assert body["status"] == "success", body
        return list(body["data"]["result"])

    def wait_for(self, expr: str, timeout: float = 30.0) -> list[dict[str, Any]]:
        """The query's result once it is not empty (Prometheus scrapes every second)."""
        end = time.monotonic() + timeout
        while True:
            result = self.query(expr)
            if result or time.monotonic() > end:
                return result
            time.sleep(0.25)

    def alerts(self) -> list[dict[str, Any]]:
        resp = self.http.get(f"{self.prometheus}/api/v1/alerts")
        resp.raise_for_status()
        return list(resp.json()["data"]["alerts"])
