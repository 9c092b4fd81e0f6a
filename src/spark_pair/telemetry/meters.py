"""The OpenTelemetry side: one meter provider per process, its instruments, and the readers
that take the figures away (OTLP every interval, a Prometheus registry for /metrics and the
Pushgateway). Loaded only when telemetry is on (the optional extra spark-pair[otel]).

Recording a point is a few microseconds on the caller's thread; every export (OTLP, the push,
a scrape of /metrics) runs in a thread of its own.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterable
from typing import Any

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
from opentelemetry.sdk.metrics.view import ExplicitBucketHistogramAggregation, View
from opentelemetry.sdk.resources import Resource

from .. import __version__
from ..base.errors import redact
from .options import GRPC, JOB, TelemetryOptions
from .points import BOUNDS, COUNTER, GAUGE, HISTOGRAM, METRICS, Point


class Failures(logging.Handler):
    """What the SDK's exporters log about a failed export: kept for one note, never printed
    (a down collector must not fill a terminal with tracebacks)."""

    def __init__(self, on_first: Callable[[str], None] | None = None) -> None:
        super().__init__(logging.WARNING)
        self.last = ""
        self.first = ""  # of this round (finish clears it): the cause, before "gave up"
        self.count = 0
        self.on_first = on_first

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = record.getMessage().splitlines()[0] if record.getMessage() else ""
        except Exception:  # noqa: BLE001 - a log record that cannot format: still a failure
            text = record.msg if isinstance(record.msg, str) else "export failed"
        self.last = plain_failure(redact(text))
        self.first = self.first or self.last
        self.count += 1
        if self.count == 1 and self.on_first is not None:
            self.on_first(self.last)


_CAUSES = (  # words of the SDK's log line (its HTTP library's error) -> a plain cause
    ("refused", "nothing answers there: connection refused"),
    ("timed out", "no answer in time"),
    ("timeout", "no answer in time"),
    ("name or service not known", "the host name does not resolve"),
    ("nodename nor servname", "the host name does not resolve"),
    ("temporary failure in name resolution", "the host name does not resolve"),
    ("certificate", "its TLS certificate was not accepted"),
    ("reset by peer", "the connection was reset"),
    ("remote end closed", "the connection was closed without an answer"),
)


def plain_failure(text: str) -> str:
    """The cause in a log line of the SDK's exporter, in a few plain words (its own text,
    cut, when no known cause is in it)."""
    low = text.lower()
    for words, cause in _CAUSES:
        if words in low:
            return cause
    said = re.search(r"Transient error (.{1,60}?) encountered", text)
    if said:  # an HTTP status the SDK retries: its reason phrase
        return f"the endpoint answered {said.group(1)}"
    code = re.search(r"\b(?:code|status)[:= ]+(\d{3})\b", text)
    if code:
        return f"the endpoint answered HTTP {code.group(1)}"
    return text if len(text) <= 120 else text[:119] + "…"


def quiet_sdk(handler: Failures) -> None:
    """Route the SDK's own log lines to `handler` only."""
    sdk = logging.getLogger("opentelemetry")
    for old in [h for h in sdk.handlers if isinstance(h, Failures)]:
        sdk.removeHandler(old)
    sdk.addHandler(handler)
    sdk.propagate = False


class Meters:
    """The instruments and readers of one process."""

    def __init__(self, opts: TelemetryOptions, *, serve: bool,
                 on_failure: Callable[[str], None] | None = None) -> None:
        self.opts = opts
        self.failures = Failures(on_failure)
        quiet_sdk(self.failures)
        readers: list[Any] = []
        self.otlp: Any = None
        if opts.otlp_url:
            self.otlp = PeriodicExportingMetricReader(
                _otlp_exporter(opts), export_interval_millis=opts.interval_s * 1000,
                export_timeout_millis=max(opts.exit_timeout_s, 1.0) * 1000)
            readers.append(self.otlp)
        self.registry: Any = None
        if opts.pushgateway or (serve and opts.metrics_port):
            from opentelemetry.exporter.prometheus import PrometheusMetricReader
            from prometheus_client import CollectorRegistry

            self.registry = CollectorRegistry(auto_describe=False)
            readers.append(PrometheusMetricReader(registry=self.registry,
                                                  scope_info_enabled=False))
        views = [View(instrument_name=name,
                      aggregation=ExplicitBucketHistogramAggregation(boundaries=bounds))
                 for name, bounds in BOUNDS.items()]
        self.provider = MeterProvider(metric_readers=readers, views=views,
                                      resource=Resource.create(dict(opts.resource)),
                                      shutdown_on_exit=False)
        meter = self.provider.get_meter("spark_pair", __version__)
        self.instruments: dict[str, Any] = {}
        for name, metric in METRICS.items():
            make = getattr(meter, f"create_{metric.kind}")  # counter, histogram, gauge
            self.instruments[name] = make(name, unit=metric.unit,
                                          description=metric.description)
        self.server: Any = None
        if serve and opts.metrics_port:
            self.server = self._serve(opts.metrics_port)

    def add(self, points: Iterable[Point]) -> None:
        for name, value, attributes in points:
            instrument = self.instruments[name]
            kind = METRICS[name].kind
            if kind == COUNTER:
                instrument.add(value, attributes)
            elif kind == HISTOGRAM:
                instrument.record(value, attributes)
            else:
                instrument.set(value, attributes)

    def _serve(self, port: int) -> Any:
        from prometheus_client import start_http_server

        server, _thread = start_http_server(port, addr="127.0.0.1", registry=self.registry)
        return server

    def finish(self, command: str, budget_s: float) -> list[str]:
        """Push to the Pushgateway and send the last OTLP export, within `budget_s` seconds
        (run in a thread of its own by the caller); what went wrong, in a few words each."""
        deadline = time.monotonic() + budget_s
        problems = []
        if self.opts.pushgateway and self.registry is not None:
            try:
                push(self.opts, self.registry, command, budget_s)
            except Exception as exc:  # noqa: BLE001 - any failure is one note, never a crash
                problems.append(f"the push to the Pushgateway {self.opts.pushgateway} failed "
                                f"({_why(exc)})")
        if self.otlp is not None:
            before, self.failures.first = self.failures.count, ""
            left_ms = max(0.0, deadline - time.monotonic()) * 1000
            done = self.provider.force_flush(timeout_millis=max(left_ms, 1))
            if self.failures.count > before or not done:
                reason = self.failures.first if self.failures.count > before else "no answer"
                problems.append(f"the OTLP export to {self.opts.otlp_url} failed ({reason})")
        return problems

    def close(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None


def push(opts: TelemetryOptions, registry: Any, command: str, timeout_s: float) -> None:
    """PUT the registry's figures to the Pushgateway: they replace this command's and
    instance's last ones (a CI job's run or bench lands as one group). Raises on failure."""
    from prometheus_client import push_to_gateway

    push_to_gateway(opts.pushgateway, job=JOB, registry=registry, timeout=timeout_s,
                    grouping_key={"command": command, "instance": opts.instance})


def _otlp_exporter(opts: TelemetryOptions) -> Any:
    timeout = max(opts.exit_timeout_s, 0.5)
    if opts.protocol == GRPC:
        from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import (
            OTLPMetricExporter as GrpcExporter,
        )

        return GrpcExporter(endpoint=opts.otlp_url, insecure=True, headers=opts.headers or None,
                            timeout=timeout)
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter

    return OTLPMetricExporter(endpoint=opts.otlp_url, headers=opts.headers or None,
                              timeout=timeout)


def _why(exc: BaseException) -> str:
    reason = getattr(exc, "reason", None)
    text = str(reason if reason is not None else exc) or type(exc).__name__
    return redact(text.splitlines()[0] if text else type(exc).__name__)[:200]


def collect_once(points: Iterable[Point]) -> Any:
    """The SDK's own reading of `points` (an in-memory reader): the MetricsData an exporter
    would send (doctor's test point, the payload tests)."""
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader

    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader], shutdown_on_exit=False,
                             resource=Resource.create({"service.name": "spark-pair"}))
    meter = provider.get_meter("spark_pair", __version__)
    for name, value, attributes in points:
        metric = METRICS.get(name)
        if metric is None or metric.kind == GAUGE:
            meter.create_gauge(name).set(value, attributes)
        elif metric.kind == COUNTER:
            meter.create_counter(name, unit=metric.unit).add(value, attributes)
        else:
            meter.create_histogram(name).record(value, attributes)
    data = reader.get_metrics_data()
    provider.shutdown()
    return data
