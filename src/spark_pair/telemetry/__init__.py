"""Team telemetry: spark-pair's figures into OpenTelemetry (OTLP) and Prometheus.

Off by default (options.py says what turns it on). A runtime feeds a `Telemetry` its request
records, a person's verdicts, the protocol events and each finished turn; `bench` hands over
its results (`export_bench`). Nothing here loads the OpenTelemetry SDK: it loads in a thread
of its own once telemetry is on (meters.py), so a default install, or telemetry off, costs
nothing. docs/telemetry.md lists every figure.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .options import TelemetryOptions, is_on, options_of
from .points import (
    Point,
    of_bench,
    of_record,
    of_result,
    of_retry,
    of_session,
    of_verdicts,
)

__all__ = ["Tee", "Telemetry", "TelemetryOptions", "export_bench", "is_on", "options_of", "start"]

EXTRA_HINT = "pip install 'spark-pair[otel]'"


def missing_extra(exc: ImportError) -> str:
    return (f"telemetry is on but the OpenTelemetry SDK is not installed ({exc.name or exc}); "
            f"install it with: {EXTRA_HINT} (or turn [telemetry] enabled off); continuing "
            "without telemetry")


class Telemetry:
    """One process's figures. Each call turns what it is given into points at once (plain
    Python, microseconds); the SDK's meters take them once loaded (points that come earlier
    wait). `end` sends what is left, within the exit budget. A broken export never raises
    here: it is said once through `warn`."""

    def __init__(self, opts: TelemetryOptions, warn: Callable[[str], None], *,
                 command: str | None, serve: bool = False,
                 prices: Mapping[str, tuple[float, float]] | None = None) -> None:
        self.opts, self.warn, self.command, self.serve = opts, warn, command, serve
        self.prices = dict(prices or {})
        self.meters: Any = None
        self.failed = False  # the meters could not load: nothing more is recorded
        self._held: list[Point] = []
        self._lock = threading.Lock()
        self._ended = False
        self._said = False
        self._loading = threading.Thread(target=self._load, name="spark-pair-telemetry",
                                         daemon=True)
        self._loading.start()

    # ---- what a runtime feeds ---------------------------------------------------------------

    def session_started(self) -> None:
        self._feed(of_session)

    def record(self, rec: Any) -> None:
        """A request record (store.records.Recorder)."""
        self._feed(of_record, rec, self.prices)

    def record_verdicts(self, turn_id: str, model: str, verdicts: Sequence[Any]) -> None:
        """A person's verdicts on a turn (session.VerdictStore)."""
        self._feed(of_verdicts, model, verdicts)

    def retried(self, event: Any) -> None:
        """A protocol Retrying event (the runtime's observer picks it by its type)."""
        self._feed(of_retry, event)

    def finished(self, result: Any) -> None:
        """A finished turn's TurnResult."""
        self._feed(of_result, result)

    def _feed(self, read: Callable[..., list[Point]], *args: Any) -> None:
        try:
            self.add(read(*args))
        except Exception as exc:  # noqa: BLE001 - a figure is never worth failing a turn
            self._say(f"telemetry: a figure could not be recorded ({type(exc).__name__}: "
                      f"{exc}); continuing")

    def add(self, points: list[Point]) -> None:
        if not points or self.failed:
            return
        with self._lock:
            meters = self.meters
            if meters is None:
                self._held.extend(points)
                return
        meters.add(points)

    # ---- loading and ending -----------------------------------------------------------------

    def _load(self) -> None:
        try:
            from .meters import Meters

            meters = Meters(self.opts, serve=self.serve, on_failure=self._export_failed)
        except ImportError as exc:
            self._give_up(missing_extra(exc))
            return
        except OSError as exc:  # the /metrics port is taken
            self._give_up(f"telemetry: cannot serve /metrics on 127.0.0.1:"
                          f"{self.opts.metrics_port} ({exc.strerror or exc}); set another "
                          "[telemetry] metrics_port; continuing without telemetry")
            return
        except Exception as exc:  # noqa: BLE001 - telemetry must never stop a turn
            self._give_up(f"telemetry could not start ({type(exc).__name__}: {exc}); "
                          "continuing without it")
            return
        with self._lock:
            self.meters, held, self._held = meters, self._held, []
        meters.add(held)

    def _give_up(self, text: str) -> None:
        with self._lock:
            self.failed, self._held = True, []
        self._say(text)

    def _say(self, text: str) -> None:
        if not self._said:  # one note per process: a broken export is no news twice
            self._said = True
            self.warn(text)

    def _export_failed(self, reason: str) -> None:
        if not self._ended:  # a periodic export (app, watch): said once, then retried quietly
            self._say(f"telemetry: the export to {self.opts.where} failed ({reason}); "
                      "it is retried each interval; `spark-pair doctor` checks it")

    def ready(self, timeout: float | None = None) -> bool:
        """Wait for the meters to load; whether they did."""
        self._loading.join(timeout)
        return self.meters is not None

    def end(self) -> None:
        """Send what is left (the push of a run or bench, the last OTLP export), waiting at
        most [telemetry] exit_timeout_s; past that it is dropped with one note."""
        if self._ended:
            return
        self._ended = True
        budget = self.opts.exit_timeout_s
        deadline = time.monotonic() + budget
        done = threading.Event()
        problems: list[str] = []

        def finish() -> None:
            try:  # the push and the export get what the SDK's loading left of the budget
                if self.ready(budget):
                    left = max(0.05, deadline - time.monotonic())
                    problems.extend(self.meters.finish(self.command or "", left))
                elif not self.failed:
                    problems.append(f"the OpenTelemetry SDK did not load within {budget:g} s")
            except Exception as exc:  # noqa: BLE001 - one note, never a crash
                problems.append(f"{type(exc).__name__}: {exc}")
            finally:
                done.set()

        if self.command is None and self.opts.otlp_url == "":
            done.set()  # nothing to send: /metrics is read by whoever scrapes it
        else:
            threading.Thread(target=finish, name="spark-pair-telemetry-end", daemon=True).start()
        if not done.wait(budget + 0.1):
            problems.append(f"the export to {self.opts.where} did not finish within "
                            f"{budget:g} s")
        if problems:
            from ..base.errors import redact

            self._said = False
            self._say("telemetry: " + redact("; ".join(problems)) + "; dropped (`spark-pair "
                      "doctor` checks the export)")
        if self.meters is not None:
            self.meters.close()


class Tee:
    """The request log and the telemetry as one recorder (what session.TurnRecorder stores
    into): records and verdicts go to both."""

    def __init__(self, store: Any, telemetry: Telemetry) -> None:
        self.store, self.telemetry = store, telemetry

    def record(self, rec: Any) -> None:
        self.store.record(rec)
        self.telemetry.record(rec)

    def record_verdicts(self, turn_id: str, model: str, verdicts: Sequence[Any]) -> None:
        self.store.record_verdicts(turn_id, model, verdicts)
        self.telemetry.record_verdicts(turn_id, model, verdicts)


def start(settings: Any, warn: Callable[[str], None], *, command: str | None,
          serve: bool = False) -> Telemetry | None:
    """The process's telemetry, or None when it is off (then nothing is loaded or sent)."""
    opts = options_of(settings, warn)
    if opts is None:
        return None
    return Telemetry(opts, warn, command=command, serve=serve,
                     prices=getattr(settings, "prices", None))


def export_bench(settings: Any, data: Mapping[str, Any], baseline: Mapping[str, Any] | None,
                 warn: Callable[[str], None]) -> None:
    """A finished bench's figures (and its baseline's): pushed and exported before it exits."""
    tel = start(settings, warn, command="bench")
    if tel is not None:
        tel.add(of_bench(data, baseline))
        tel.end()
