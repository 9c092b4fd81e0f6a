"""A small OTLP/HTTP receiver on 127.0.0.1: a real network peer for the exporter. It decodes
each POST to /v1/metrics (protobuf) with the protocol's own message classes and keeps the raw
bodies too (to look for what must never be sent). `status` makes it answer an error."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class OtlpReceiver:
    def __init__(self, status: int = 200) -> None:
        self.status = status
        self.bodies: list[bytes] = []
        self.paths: list[str] = []
        self.headers: list[dict[str, str]] = []
        self.arrived = threading.Condition()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the http.server name
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with receiver.arrived:
                    receiver.paths.append(self.path)
                    receiver.bodies.append(body)
                    receiver.headers.append({k.lower(): v for k, v in self.headers.items()})
                    receiver.arrived.notify_all()
                reply = b"" if receiver.status == 200 else b"refused"
                self.send_response(receiver.status)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> OtlpReceiver:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def wait(self, count: int = 1, timeout: float = 10.0) -> None:
        with self.arrived:
            self.arrived.wait_for(lambda: len(self.bodies) >= count, timeout)

    def points(self) -> list[tuple[str, dict[str, str], float]]:
        """(metric name, attributes, value) of every point received; a histogram's value is
        its count, a counter's and a gauge's their value."""
        from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
            ExportMetricsServiceRequest,
        )

        out = []
        for body in self.bodies:
            request = ExportMetricsServiceRequest()
            request.ParseFromString(body)
            for rm in request.resource_metrics:
                for sm in rm.scope_metrics:
                    for metric in sm.metrics:
                        kind = metric.WhichOneof("data")
                        for dp in getattr(metric, kind).data_points:
                            attrs = {a.key: a.value.string_value for a in dp.attributes}
                            if kind == "histogram":
                                value = float(dp.count)
                            else:
                                value = dp.as_double if dp.HasField("as_double") \
                                    else float(dp.as_int)
                            out.append((metric.name, attrs, value))
        return out

    def resources(self) -> list[dict[str, str]]:
        from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
            ExportMetricsServiceRequest,
        )

        out = []
        for body in self.bodies:
            request = ExportMetricsServiceRequest()
            request.ParseFromString(body)
            out += [{a.key: a.value.string_value for a in rm.resource.attributes}
                    for rm in request.resource_metrics]
        return out
