"""doctor's look at the export: a test point to each place telemetry sends to, and whether it
was taken (the usual complaint about exports is that they fail without a word)."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import httpx

from ..base.errors import SparkPairError
from .options import GRPC, TelemetryOptions
from .points import Point

TEST_METRIC = "spark_pair.doctor.check"
DOCTOR_JOB = "spark-pair-doctor"
OTLP_HINT = ("start the collector (OTLP over HTTP listens on port 4318), or set [telemetry] "
             "otlp_endpoint / OTEL_EXPORTER_OTLP_ENDPOINT to where it listens")
PUSH_HINT = ("start the Pushgateway (it listens on port 9091), or set [telemetry] pushgateway "
             "to where it listens")
# what is read of an answer (a collector's or a Pushgateway's is a few bytes; the rest of a
# broken or hostile one is not read)
MAX_ANSWER_BYTES = 64 << 10


class ExportFailed(SparkPairError):
    kind = "telemetry"


def check_export(opts: TelemetryOptions, timeout_s: float) -> tuple[str, str]:
    """Send a test point to each target (blocking): (what was found, a note). Raises
    ExportFailed, with what worked and a hint for the first target that did not."""
    try:
        import opentelemetry.sdk.metrics  # noqa: F401 - the extra is installed
    except ImportError as exc:
        raise ExportFailed("telemetry is on but the OpenTelemetry SDK is not installed "
                           f"({exc.name or exc})",
                           hint="pip install 'spark-pair[otel]' (or turn [telemetry] enabled "
                                "off)") from exc
    done: list[str] = []
    with httpx.Client(timeout=timeout_s, trust_env=False,
                      headers={"Accept-Encoding": "identity"}) as http:
        for target, send in ((opts.otlp_url, _otlp), (opts.pushgateway, _push)):
            if not target:
                continue
            try:
                done.append(send(opts, http))
            except ExportFailed as exc:
                if done:
                    exc = ExportFailed("\n".join([*done, exc.message]), hint=exc.hint)
                raise exc from None
    note = ""
    if opts.metrics_port:
        note = (f"the app and watch serve /metrics on 127.0.0.1:{opts.metrics_port} "
                "(scrape it there)")
    return "\n".join(done) or "nothing to send to (only /metrics is served)", note


def _otlp(opts: TelemetryOptions, http: httpx.Client) -> str:
    if opts.protocol == GRPC:
        return _otlp_grpc(opts)
    from opentelemetry.exporter.otlp.proto.common.metrics_encoder import encode_metrics
    from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
        ExportMetricsServiceResponse,
    )

    body = encode_metrics(test_data()).SerializeToString()
    url = opts.otlp_url
    headers = {**opts.headers, "Content-Type": "application/x-protobuf"}
    try:
        resp, data = _send(http, "POST", url, content=body, headers=headers)
    except httpx.TimeoutException as exc:
        raise ExportFailed(f"the OTLP endpoint {url} did not answer in time",
                           hint="is it a collector? raise --check-timeout if it is slow") from exc
    except httpx.HTTPError as exc:
        raise ExportFailed(f"nothing answers at the OTLP endpoint {url} ({_why(exc)})",
                           hint=OTLP_HINT) from exc
    if resp.status_code in (401, 403):
        raise ExportFailed(f"the OTLP endpoint {url} refused the test point "
                           f"(HTTP {resp.status_code})",
                           hint="it wants credentials: set OTEL_EXPORTER_OTLP_HEADERS, e.g. "
                                "authorization=Bearer%20TOKEN")
    if resp.status_code == 404:
        raise ExportFailed(f"the OTLP endpoint {url} answered 404 (no such path)",
                           hint="give the collector's root (http://host:4318): spark-pair adds "
                                "/v1/metrics itself")
    if resp.status_code >= 300:
        raise ExportFailed(f"the OTLP endpoint {url} answered HTTP {resp.status_code}: "
                           f"{_excerpt(data)}",
                           hint="check the collector's log; it must take OTLP/HTTP protobuf")
    answer = ExportMetricsServiceResponse()
    try:
        answer.ParseFromString(data)
    except Exception:  # noqa: BLE001 - an empty or odd body after a 2xx still took it
        answer = ExportMetricsServiceResponse()
    rejected = answer.partial_success.rejected_data_points
    if rejected:
        raise ExportFailed(f"the OTLP endpoint {url} rejected the test point: "
                           f"{answer.partial_success.error_message or 'no reason given'}",
                           hint="check the collector's configuration (its metrics pipeline)")
    return f"OTLP {url} took a test point ({TEST_METRIC}, HTTP {resp.status_code})"


def _otlp_grpc(opts: TelemetryOptions) -> str:
    try:
        from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import OTLPMetricExporter
        from opentelemetry.sdk.metrics.export import MetricExportResult
    except ImportError as exc:
        raise ExportFailed("otlp_protocol is grpc but the OTLP gRPC exporter is not installed",
                           hint="pip install opentelemetry-exporter-otlp-proto-grpc, or use "
                                "http/protobuf") from exc
    from .meters import Failures, quiet_sdk

    failures = Failures()
    quiet_sdk(failures)
    exporter = OTLPMetricExporter(endpoint=opts.otlp_url, insecure=True,
                                  headers=opts.headers or None, timeout=opts.exit_timeout_s)
    try:
        result = exporter.export(test_data())
    finally:
        exporter.shutdown()
    if result != MetricExportResult.SUCCESS:
        raise ExportFailed(f"the OTLP gRPC endpoint {opts.otlp_url} did not take the test point"
                           f" ({failures.last or 'no answer'})", hint=OTLP_HINT)
    return f"OTLP grpc {opts.otlp_url} took a test point ({TEST_METRIC})"


def _push(opts: TelemetryOptions, http: httpx.Client) -> str:
    """PUT a test point into a group of its own, then delete that group again."""
    base = opts.pushgateway
    url = f"{base}/metrics/job/{DOCTOR_JOB}/instance/{quote(opts.instance, safe='') or 'x'}"
    body = f"# TYPE {TEST_METRIC.replace('.', '_')} gauge\n{TEST_METRIC.replace('.', '_')} 1\n"
    try:
        resp, data = _send(http, "PUT", url, content=body.encode())
    except httpx.TimeoutException as exc:
        raise ExportFailed(f"the Pushgateway {base} did not answer in time",
                           hint="is it a Pushgateway? raise --check-timeout if it is slow") \
            from exc
    except httpx.HTTPError as exc:
        raise ExportFailed(f"nothing answers at the Pushgateway {base} ({_why(exc)})",
                           hint=PUSH_HINT) from exc
    if resp.status_code == 404:
        raise ExportFailed(f"{base} answered 404: not a Pushgateway's root",
                           hint="give its root URL, e.g. http://127.0.0.1:9091 (no /metrics)")
    if resp.status_code >= 300:
        raise ExportFailed(f"the Pushgateway {base} answered HTTP {resp.status_code}: "
                           f"{_excerpt(data)}", hint="check the Pushgateway's log")
    try:
        _send(http, "DELETE", url)  # leave nothing behind
    except httpx.HTTPError:
        pass
    return f"Pushgateway {base} took a test point (HTTP {resp.status_code})"


def test_data() -> Any:
    """The test point as the SDK's MetricsData."""
    from .meters import collect_once

    return collect_once([Point(TEST_METRIC, 1, {})])


def _why(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text[:200]


def _send(http: httpx.Client, method: str, url: str, **kwargs: Any
          ) -> tuple[httpx.Response, bytes]:
    """One request: its answer and the first MAX_ANSWER_BYTES of its body, as they came."""
    with http.stream(method, url, **kwargs) as resp:
        data = bytearray()
        for chunk in resp.iter_raw():
            data += chunk
            if len(data) >= MAX_ANSWER_BYTES:
                break
    return resp, bytes(data[:MAX_ANSWER_BYTES])


def _excerpt(data: bytes) -> str:
    return data[:200].decode("utf-8", "replace").strip()
