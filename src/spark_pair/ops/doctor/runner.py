"""The run of `spark-pair doctor`: the checks in order, each capped in time, a check skipped
when one it needs did not pass, and every result told as soon as it is known."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit

import httpx

from ...base import errors as E
from ...base.errors import SparkPairError, redact
from ...base.transport import Transport
from ...protocol import errors_map, offers
from ...protocol.request import user_agent
from .checks import MODEL_HINT, Checks
from .results import FAIL, PASS, SKIP, DoctorConfig, DoctorReport, DoctorResult, Passed, Skip
from .wire import has_request, link_error, ms

CHECKS: list[tuple[str, str, tuple[str, ...]]] = [
    # id, title, needs
    ("config", "config found", ()),
    ("base_url", "base URL shape", ("config",)),
    ("connect", "DNS / connect / TLS", ("config",)),
    ("auth", "API key accepted", ("connect",)),
    ("models", "model listed (GET /v1/models)", ("auth",)),
    ("request", "plain request with usage", ("models",)),
    ("stream", "streaming request", ("models",)),
    ("ws", "WebSocket handshake and turn", ("models",)),
    ("memory", "two-turn memory (remember 42)", ("request",)),
    ("fallback", "switch to the first fallback", ("models",)),
    ("telemetry", "metrics export (telemetry)", ()),
]


async def run_doctor(cfg: DoctorConfig,
                     on_result: Callable[[DoctorResult], None] | None = None) -> DoctorReport:
    """Run every check in order; `on_result` sees each result as soon as it is known."""
    timeout = httpx.Timeout(cfg.check_timeout_s)
    # no compressed answers (as the client asks): a body is read within the wire's limits
    kw: dict[str, Any] = dict(timeout=timeout, follow_redirects=False,
                              headers={"User-Agent": user_agent(), "Accept-Encoding": "identity"})
    if _plain_http(cfg.base_url):  # no TLS to set up: no CA load (as the model client)
        kw["verify"] = False
    unusable = None
    try:
        http = httpx.AsyncClient(**kw)
    except (OSError, ValueError) as exc:  # the CA bundle (SSL_CERT_FILE): the connect check says
        unusable = errors_map.ca_bundle_failed(exc)
        http = httpx.AsyncClient(verify=False, **kw)  # no https request goes out (it fails)
    async with http:
        checks = Checks(cfg, http)
        checks.unusable_tls = unusable
        try:
            return await _Run(cfg, checks).run(on_result)
        finally:
            await checks.ws.drop()


def _plain_http(url: str | None) -> bool:
    try:
        return urlsplit((url or "").strip()).scheme.lower() == "http"
    except ValueError:  # (the base_url check says what is wrong with it)
        return False


class _Run:
    def __init__(self, cfg: DoctorConfig, checks: Checks) -> None:
        self.cfg = cfg
        self.checks = checks
        self.key = (cfg.api_key or "").strip() or None
        self.timed_out: set[str] = set()  # checks with no complete (non-streamed) answer in time

    async def run(self, on_result: Callable[[DoctorResult], None] | None) -> DoctorReport:
        results: dict[str, DoctorResult] = {}
        stopped: set[str] = set()  # failed, or skipped because a need did not pass
        held: list[DoctorResult] = []  # a timed-out plain request, judged after the stream
        for check_id, title, needs in CHECKS:
            blocked = [n for n in needs if n in stopped]
            if blocked:
                stopped.add(check_id)
                result = DoctorResult(check_id, title, SKIP,
                                      detail=f"skipped: needs '{_title(blocked[0])}' to pass")
            else:
                result = await self._run_one(check_id, title)
                if check_id == "request" and check_id in self.timed_out:
                    held.append(result)  # slow or stalled: the stream check tells
                    continue
                result = self._judge_slow(result)
                if result.status == FAIL:
                    stopped.add(check_id)
            if check_id == "ws" and result.status != PASS:
                await self.checks.ws.drop()  # the memory check must not reuse a stuck socket
            for done in [*(self._judge_slow(h) for h in held), result]:
                if done.status == FAIL:
                    stopped.add(done.id)
                results[done.id] = done
                if on_result is not None:
                    on_result(done)
            held = []
        self._remember()
        return DoctorReport(list(results.values()))

    def _remember(self) -> None:
        """What transport = auto found here, kept for the next run and the app's first turn
        (protocol.offers), which then try no mode the server lacks."""
        found, cache = self.checks.offered(), self.cfg.transport_cache
        if self.cfg.transport == "auto" and found is not None and cache is not None:
            offers.remember(cache, self.checks.base, found)

    async def _run_one(self, check_id: str, title: str) -> DoctorResult:
        check: Callable[[], Awaitable[Passed]] = getattr(self.checks, f"check_{check_id}")
        self.checks.progress = ""
        start = time.perf_counter()
        limit = self.cfg.check_timeout_s
        if check_id == "stream":  # it keeps its own time (slow vs stalled); this is a backstop
            limit = 2 * limit + 1
        elif check_id == "memory":  # two requests, each given the limit
            limit = 2 * limit
        try:
            outcome = await asyncio.wait_for(check(), limit)
        except Skip as exc:
            return DoctorResult(check_id, title, SKIP, ms(start), detail=str(exc))
        except TimeoutError:
            progress = self.checks.progress
            if not progress:
                self.timed_out.add(check_id)
            took = f"{limit:g} s"
            err = E.StreamTimeout(
                f"the stream stalled: {progress} until the {took} limit"
                if progress else f"no complete answer within {took}",
                hint=f"nothing complete within doctor's --check-timeout "
                     f"({self.cfg.check_timeout_s:g} s per request): a stalled server, or a "
                     "proxy that buffers; if the server is just slow, raise --check-timeout")
            return self._failed(check_id, title, start, err)
        except SparkPairError as exc:
            return self._failed(check_id, title, start, exc)
        except httpx.HTTPError as exc:
            return self._failed(check_id, title, start, link_error(exc, str(exc.request.url)
                                                                      if has_request(exc)
                                                                      else "the server"))
        return DoctorResult(check_id, title, PASS, ms(start), detail=self._redact(outcome.detail),
                            data=outcome.data, note=self._redact(outcome.note))

    def _judge_slow(self, result: DoctorResult) -> DoctorResult:
        """A request with no complete answer in time, while the stream check saw tokens arrive:
        a slow server, not a stalled one. The plain request passes with a note; a check whose
        answer was never seen (memory, fallback) is skipped, not failed."""
        if (result.status != FAIL or result.id not in self.timed_out
                or not self.checks.streaming):
            return result
        limit = self.cfg.check_timeout_s * (2 if result.id == "memory" else 1)
        slow = (f"slow: no complete answer within {limit:g} s, while the streaming check saw "
                "tokens arriving; raise --check-timeout")
        if result.id == "request":
            return DoctorResult(result.id, result.title, PASS, result.duration_ms,
                                detail="the server works but is slow (see the streaming check)",
                                note=slow)
        return DoctorResult(result.id, result.title, SKIP, result.duration_ms,
                            detail=f"skipped: {slow}")

    def _failed(self, check_id: str, title: str, start: float,
                exc: SparkPairError) -> DoctorResult:
        data: dict[str, Any] = {}
        for name in ("status", "url", "retry_after"):
            value = getattr(exc, name, None)
            if value is not None:
                data[name] = value
        if isinstance(exc, E.EndpointError) and self._mode_missing(exc):
            exc = errors_map.mode_not_offered(exc, "responses")
        detail, hint = exc.message, exc.hint
        if data.get("retry_after") is not None and "Retry-After" not in detail:
            detail += f" (Retry-After: {data['retry_after']:g} s)"
        if isinstance(exc, E.ModelNotFound) and "spark-pair doctor" in hint:
            hint = MODEL_HINT
        return DoctorResult(check_id, title, FAIL, ms(start), detail=self._redact(detail),
                            hint=self._redact(hint), error_class=exc.kind, data=data)

    def _mode_missing(self, exc: SparkPairError) -> bool:
        """A 404/405 on /v1/responses that the transport setting demands, from a server whose
        API root answers: the server lacks the mode, the URL is not wrong."""
        return (isinstance(exc, E.EndpointError) and exc.status in (404, 405)
                and self.cfg.transport in (Transport.RESPONSES, Transport.WS)
                and self.checks.root_answers
                and (exc.url or "").startswith("http")  # the WS check has its own hint
                and (exc.url or "").endswith("/v1/responses"))

    def _redact(self, text: str) -> str:
        keys = [k for k in (self.cfg.api_key, self.key) if k and len(k.strip()) >= 4]
        return redact(text, *keys)


def _title(check_id: str) -> str:
    return next((title for cid, title, _ in CHECKS if cid == check_id), check_id)
