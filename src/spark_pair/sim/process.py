"""Run the simulator as a real child process (for tests, demo, doctor and benchmarks)."""

from __future__ import annotations

import atexit
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import time
from typing import Any

import httpx

from ..base.errors import ConnectionFailed

START_TIMEOUT_S = 15.0
STOP_TIMEOUT_S = 5.0
LISTEN_PREFIX = "spark-pair sim listening on "


class SimProcess:
    """`with SimProcess(tps=0, ttft_ms=0) as sim: ... sim.base_url ...`"""

    def __init__(self, *extra_args: str, tps: float | None = 1200, ttft_ms: float | None = 150,
                 env: dict[str, str] | None = None, profile: str | None = None,
                 prefill_tps: float | None = None) -> None:
        """`tps` / `ttft_ms` None: the profile's pacing. `prefill_tps` None: the simulator's
        default, or none with `ttft_ms=0` (a simulator asked to answer at once)."""
        if prefill_tps is None and ttft_ms == 0:
            prefill_tps = 0
        self.args = [sys.executable, "-m", "spark_pair.sim", "--host", "127.0.0.1",
                     "--port", "0"]
        for flag, value in (("--tps", tps), ("--ttft-ms", ttft_ms), ("--profile", profile),
                            ("--prefill-tps", prefill_tps)):
            if value is not None:
                self.args += [flag, str(value)]
        self.args += extra_args
        self.env = env
        self.base_url = ""
        self._proc: subprocess.Popen[bytes] | None = None
        self._stderr: Any = None
        self._http: httpx.Client | None = None

    # ---- life cycle ------------------------------------------------------------------

    def start(self) -> SimProcess:
        if self._proc is not None:
            return self
        self._stderr = tempfile.TemporaryFile()
        env = {**os.environ, **(self.env or {}), "PYTHONUNBUFFERED": "1",
               "SPARK_PAIR_SIM_WATCH_PARENT": "1"}  # it exits if we die without stopping it
        self._proc = subprocess.Popen(self.args, stdout=subprocess.PIPE, stderr=self._stderr,
                                      stdin=subprocess.DEVNULL, env=env, start_new_session=True)
        atexit.register(self.stop)
        try:
            line = self._read_listen_line()
        except BaseException:
            self.stop()
            raise
        self.base_url = line[len(LISTEN_PREFIX):].strip()
        # plain http (the simulator serves no TLS): no CA bundle loaded, 20-40 ms of CPU a start
        self._http = httpx.Client(base_url=self.base_url, timeout=10.0, trust_env=False,
                                  verify=not self.base_url.startswith("http:"))
        return self

    def _read_listen_line(self) -> str:
        assert self._proc is not None and self._proc.stdout is not None
        deadline = time.monotonic() + START_TIMEOUT_S
        buf = b""
        with selectors.DefaultSelector() as sel:
            sel.register(self._proc.stdout, selectors.EVENT_READ)
            while b"\n" not in buf:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise ConnectionFailed(f"the simulator did not start within "
                                           f"{START_TIMEOUT_S:g} s{self._stderr_tail()}")
                if not sel.select(timeout=min(left, 0.2)):
                    if self._proc.poll() is not None:
                        raise self._died()
                    continue
                chunk = os.read(self._proc.stdout.fileno(), 4096)
                if not chunk:
                    self._proc.wait(timeout=STOP_TIMEOUT_S)
                    raise self._died()
                buf += chunk
        line = buf.split(b"\n", 1)[0].decode("utf-8", "replace")
        if not line.startswith(LISTEN_PREFIX):
            raise ConnectionFailed(f"unexpected simulator output: {line!r}{self._stderr_tail()}")
        return line

    def _died(self) -> ConnectionFailed:
        code = self._proc.returncode if self._proc else None
        return ConnectionFailed(f"the simulator exited with code {code} before listening"
                                f"{self._stderr_tail()}", hint="run `spark-pair sim` by hand "
                                "to see the error")

    def _stderr_tail(self) -> str:
        if self._stderr is None:
            return ""
        self._stderr.seek(0)
        text = self._stderr.read()[-2000:].decode("utf-8", "replace").strip()
        return f": {text}" if text else ""

    def stop(self) -> None:
        """Stop the whole process group; reap it (no zombie). Safe to call twice."""
        if self._http is not None:
            self._http.close()
            self._http = None
        proc, self._proc = self._proc, None
        if proc is not None:
            for sig, wait in ((signal.SIGTERM, STOP_TIMEOUT_S), (signal.SIGKILL, STOP_TIMEOUT_S)):
                try:
                    os.killpg(proc.pid, sig)
                except ProcessLookupError:
                    pass
                try:
                    proc.wait(timeout=wait)
                    break
                except subprocess.TimeoutExpired:
                    continue
            if proc.stdout is not None:
                proc.stdout.close()
            atexit.unregister(self.stop)
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def __enter__(self) -> SimProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---- control -----------------------------------------------------------------------

    def _call(self, method: str, path: str, json: Any = None) -> Any:
        if self._http is None:
            raise ConnectionFailed("the simulator is not running", hint="call start() first")
        response = self._http.request(method, path, json=json)
        if response.status_code >= 400:
            raise ValueError(f"simulator refused {method} {path}: {response.text}")
        return response.json()

    def set_faults(self, faults: list[dict[str, Any]]) -> None:
        self._call("POST", "/_sim/faults", {"faults": faults})

    def configure(self, **settings: Any) -> None:
        self._call("POST", "/_sim/config", settings)

    def requests(self) -> list[dict[str, Any]]:
        return self._call("GET", "/_sim/requests")

    def clear_requests(self) -> None:
        self._call("DELETE", "/_sim/requests")

    def reset(self) -> None:
        self._call("POST", "/_sim/reset")

    def stats(self) -> dict[str, Any]:
        return self._call("GET", "/_sim/stats")
