"""Where the figures go: [telemetry] and the standard OTEL_* variables, resolved once.

Telemetry is on with `[telemetry] enabled = true`, SPARK_PAIR_TELEMETRY=1, or the standard
OTEL_METRICS_EXPORTER=otlp (or prometheus); OTEL_SDK_DISABLED=true turns it off whatever
else says. OTEL_EXPORTER_OTLP_ENDPOINT alone does not turn it on: it is often set for other
programs of the same shell.
"""

from __future__ import annotations

import re
import socket
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlsplit

from .. import __version__
from ..base.errors import add_secret

HTTP, GRPC = "http/protobuf", "grpc"
DEFAULT_OTLP = "http://localhost:4318"
METRICS_PATH = "/v1/metrics"
JOB = "spark-pair"  # the Pushgateway's job label
_TRUE = ("1", "true", "yes", "on")


@dataclass(frozen=True, slots=True)
class TelemetryOptions:
    otlp_url: str = ""  # http: the full metrics URL (.../v1/metrics); grpc: host:port; "": none
    protocol: str = HTTP
    headers: dict[str, str] = field(default_factory=dict)  # OTLP request headers (secrets)
    interval_s: float = 10.0
    metrics_port: int = 0
    pushgateway: str = ""
    instance: str = ""
    exit_timeout_s: float = 1.0
    resource: dict[str, str] = field(default_factory=dict)

    @property
    def where(self) -> str:
        """Where the figures go, in a few words (for notes and doctor)."""
        parts = []
        if self.otlp_url:
            parts.append(f"OTLP {self.protocol} {self.otlp_url}")
        if self.pushgateway:
            parts.append(f"Pushgateway {self.pushgateway}")
        if self.metrics_port:
            parts.append(f"/metrics on 127.0.0.1:{self.metrics_port}")
        return re.sub(r"//[^/@\s]+@", "//***@", ", ".join(parts)) or "nowhere"  # no password


def is_on(settings: Any) -> bool:
    env: Mapping[str, str] = settings.env
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() in _TRUE:
        return False
    return bool(settings.telemetry.enabled) or any(
        name in ("otlp", "prometheus") for name in _names(env.get("OTEL_METRICS_EXPORTER", "")))


def options_of(settings: Any, warn: Callable[[str], None] | None = None
               ) -> TelemetryOptions | None:
    """The export set-up, or None when telemetry is off."""
    if not is_on(settings):
        return None
    tel, env = settings.telemetry, settings.env
    say = warn or (lambda _text: None)
    protocol = (tel.otlp_protocol or env.get("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "")
                or env.get("OTEL_EXPORTER_OTLP_PROTOCOL", "")).strip().lower() or HTTP
    if protocol not in (HTTP, GRPC):
        say(f"telemetry: OTLP protocol {protocol!r} is not offered; using {HTTP}")
        protocol = HTTP
    interval = tel.interval_s
    if env.get("OTEL_METRIC_EXPORT_INTERVAL", "").strip():
        try:
            interval = max(0.1, float(env["OTEL_METRIC_EXPORT_INTERVAL"]) / 1000)
        except ValueError:
            say("telemetry: OTEL_METRIC_EXPORT_INTERVAL is not a number of milliseconds; "
                f"using {interval:g} s")
    return TelemetryOptions(
        otlp_url=_otlp_url(tel, env, protocol), protocol=protocol, headers=_headers(env),
        interval_s=interval, metrics_port=tel.metrics_port,
        pushgateway=tel.pushgateway.strip().rstrip("/"),
        instance=tel.instance.strip() or socket.gethostname(),
        exit_timeout_s=tel.exit_timeout_s, resource=_resource(env))


def _names(text: str) -> list[str]:
    return [x.strip().lower() for x in text.split(",") if x.strip()]


def _otlp_url(tel: Any, env: Mapping[str, str], protocol: str) -> str:
    """The OTLP target: [telemetry] otlp_endpoint (a base), the signal's own variable (a full
    URL), the shared one (a base); with none, the SDK's default unless a Prometheus path is
    set. OTEL_METRICS_EXPORTER without otlp (none, prometheus) means no OTLP."""
    chosen = _names(env.get("OTEL_METRICS_EXPORTER", ""))
    if chosen and "otlp" not in chosen and not tel.otlp_endpoint.strip():
        return ""
    full = env.get("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "").strip()
    base = tel.otlp_endpoint.strip() or ("" if full else env.get(
        "OTEL_EXPORTER_OTLP_ENDPOINT", "").strip())
    if not base and not full:
        if tel.pushgateway.strip() or tel.metrics_port:
            return ""
        base = DEFAULT_OTLP
    if protocol == GRPC:
        url = urlsplit(base or full)
        return url.netloc or (base or full)
    if base:
        base = base.rstrip("/")
        return base if base.endswith(METRICS_PATH) else base + METRICS_PATH
    return full


def _headers(env: Mapping[str, str]) -> dict[str, str]:
    """OTEL_EXPORTER_OTLP_HEADERS ("k=v,k2=v2", values URL-encoded); each value is treated as
    a secret (scrubbed from every message)."""
    out = {}
    for var in ("OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_METRICS_HEADERS"):
        for item in env.get(var, "").split(","):
            name, sep, value = item.partition("=")
            if sep and name.strip():
                out[unquote(name.strip()).lower()] = unquote(value.strip())
    for value in out.values():
        add_secret(value)
        add_secret(value.split()[-1] if value.split() else "")  # the token of "Bearer TOKEN"
    return out


def _resource(env: Mapping[str, str]) -> dict[str, str]:
    """service.name and .version, then OTEL_RESOURCE_ATTRIBUTES, then OTEL_SERVICE_NAME."""
    out = {"service.name": "spark-pair", "service.version": __version__}
    for item in env.get("OTEL_RESOURCE_ATTRIBUTES", "").split(","):
        name, sep, value = item.partition("=")
        if sep and name.strip():
            out[unquote(name.strip())] = unquote(value.strip())
    if env.get("OTEL_SERVICE_NAME", "").strip():
        out["service.name"] = env["OTEL_SERVICE_NAME"].strip()
    return out
