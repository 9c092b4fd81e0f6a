"""What doctor checks and what it finds: plain data, no I/O."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from ...base.errors import SparkPairError


class CheckStatus(StrEnum):
    PASS = "pass"
    FAIL = "fail"
    SKIP = "skip"  # the check does not apply, or one it needs did not pass


PASS, FAIL, SKIP = CheckStatus.PASS, CheckStatus.FAIL, CheckStatus.SKIP



@dataclass
class DoctorConfig:
    """What doctor checks: the effective settings (never printed with the key)."""

    base_url: str | None = None
    api_key: str | None = None
    api_key_env: str = "SPARK_PAIR_API_KEY"
    model: str | None = None
    fallbacks: list[str] = field(default_factory=list)
    transport: str = "auto"
    sources: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    config_error: SparkPairError | None = None
    check_timeout_s: float = 5.0
    stream_tokens: int = 64  # the stream check reads this many tokens at most
    transport_cache: Path | None = None  # what the auto probe remembers per server
    telemetry: Any = None  # telemetry.TelemetryOptions when telemetry is on


def config_from_settings(settings: Any, check_timeout_s: float = 5.0) -> DoctorConfig:
    """DoctorConfig from `config.load_settings()`'s result."""
    from ...protocol import offers

    model = settings.model
    return DoctorConfig(
        base_url=model.base_url, api_key=settings.api_key, api_key_env=settings.key_env,
        model=model.name, fallbacks=list(model.fallbacks or []),
        transport=settings.session.transport or "auto", sources=dict(settings.sources),
        warnings=list(settings.warnings), check_timeout_s=check_timeout_s,
        transport_cache=offers.default_path(), telemetry=_telemetry(settings))


def _telemetry(settings: Any) -> Any:
    """Where telemetry sends to, when it is on (its package loads only then)."""
    if not (settings.telemetry.enabled or settings.env.get("OTEL_METRICS_EXPORTER")):
        return None
    from ...telemetry import options_of

    return options_of(settings)


@dataclass
class DoctorResult:
    id: str
    title: str
    status: CheckStatus
    duration_ms: float = 0.0
    detail: str = ""
    hint: str = ""
    error_class: str | None = None
    data: dict[str, Any] = field(default_factory=dict)
    note: str = ""  # a pass worth knowing about (e.g. a mode this server does not offer)

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "status": self.status,
                "duration_ms": round(self.duration_ms, 1), "detail": self.detail,
                "note": self.note or None, "hint": self.hint, "error_class": self.error_class,
                "data": self.data}


@dataclass
class DoctorReport:
    results: list[DoctorResult]

    @property
    def ok(self) -> bool:
        return all(r.status != FAIL for r in self.results)

    @property
    def first_failure(self) -> DoctorResult | None:
        return next((r for r in self.results if r.status == FAIL), None)

    def as_dict(self) -> dict[str, Any]:
        failed = self.first_failure
        return {"ok": self.ok, "failed_check": failed.id if failed else None,
                "checks": [r.as_dict() for r in self.results]}


class Skip(Exception):
    """Raised by a check that does not apply (not a failure)."""


@dataclass
class Passed:
    """What a check that passed found (one that does not pass raises: Skip, or an error)."""

    detail: str
    data: dict[str, Any] = field(default_factory=dict)
    note: str = ""
