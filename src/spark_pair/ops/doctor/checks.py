"""The checks of `spark-pair doctor`, run in order with a time cap each."""

from __future__ import annotations

import asyncio
import json
import socket
import ssl
import time
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit

import httpx

from ...base import errors as E
from ...base.errors import SparkPairError, redact
from ...base.urls import WHITESPACE_NOTE
from ...protocol import errors_map, offers
from ...protocol.chat import USAGE_GRACE_S
from ...protocol.request import CONNECT_STAGGER_S, user_agent
from ...protocol.sse import iter_sse_batches
from .results import FAIL, PASS, SKIP, CheckResult, DoctorConfig, DoctorReport, Outcome, Skip
from .wire import (
    DROP_HINT,
    api_url,
    buffered,
    has_request,
    http_error,
    judge_stream,
    link_error,
    ms,
    parse_event,
    probe_url,
    proxy_for,
    request_body,
    responses_text,
    url_problems,
    ws_url,
)

MEMORY_NUMBER = "42"
REMEMBER_PROMPT = f"Remember the number {MEMORY_NUMBER}. Reply only with OK."
RECALL_PROMPT = "What number did I ask you to remember? Reply with the number only."
STREAM_PROMPT = "Count from 1 to 40, separated by spaces."
PING_PROMPT = "Reply with the single word: ready"
WS_BETA = "responses_websockets=2026-02-06"
MODEL_HINT = ("check the id for typos or a preview suffix; set [model] name to an id that "
              "GET /v1/models lists (shown above), and list others in [model] fallbacks")
# what OpenSSL says when the other end answers a TLS hello in plain HTTP
PLAIN_HTTP_REASONS = {"WRONG_VERSION_NUMBER", "RECORD_LAYER_FAILURE", "HTTP_REQUEST",
                      "PACKET_LENGTH_TOO_LONG"}
HTML_HINT = ("an HTML page is a web site, a login page or a proxy's error page, not the API: "
             "base_url must be the API root (e.g. https://host/api); check any proxy")


# ---- the run -----------------------------------------------------------------------------

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
                     on_result: Callable[[CheckResult], None] | None = None) -> DoctorReport:
    """Run every check in order; `on_result` sees each result as soon as it is known."""
    return await _Doctor(cfg).run(on_result)


class _Doctor:
    def __init__(self, cfg: DoctorConfig) -> None:
        self.cfg = cfg
        self.key = (cfg.api_key or "").strip() or None
        self.base = probe_url(cfg.base_url or "")  # what the client uses
        self.available: list[str] = []
        self.root_answers = False  # GET /v1/models answered with a model list: the URL is right
        self.progress = ""
        self.timed_out: set[str] = set()  # checks with no complete (non-streamed) answer in time
        self.streaming = False  # the stream check saw tokens arriving: the server works
        self.ws: Any = None
        self.ws_ok = False  # the WS check passed: the memory check uses a fresh socket
        self.models_error: SparkPairError | None = None  # GET /v1/models failed, not the key
        self.request_api: str | None = None  # the API the plain request found working, when
        # the usual one redirects and the transport setting does not demand it
        self.http: httpx.AsyncClient | None = None

    async def run(self, on_result: Callable[[CheckResult], None] | None) -> DoctorReport:
        results: dict[str, CheckResult] = {}
        timeout = httpx.Timeout(self.cfg.check_timeout_s)
        try:
            async with httpx.AsyncClient(timeout=timeout, follow_redirects=False,
                                         headers={"User-Agent": user_agent()}) as http:
                self.http = http
                stopped: set[str] = set()  # failed, or skipped because a need did not pass
                held: list[CheckResult] = []  # a timed-out plain request, judged after the stream
                for check_id, title, needs in CHECKS:
                    blocked = [n for n in needs if n in stopped]
                    if blocked:
                        stopped.add(check_id)
                        result = CheckResult(check_id, title, SKIP,
                                             detail=f"skipped: needs '{_title(blocked[0])}' "
                                                    "to pass")
                    else:
                        result = await self._run_one(check_id, title)
                        if check_id == "request" and check_id in self.timed_out:
                            held.append(result)  # slow or stalled: the stream check tells
                            continue
                        result = self._judge_slow(result)
                        if result.status == FAIL:
                            stopped.add(check_id)
                    if check_id == "ws" and result.status != PASS:
                        await self._drop_ws()  # the memory check must not reuse a stuck socket
                    for done in [*(self._judge_slow(h) for h in held), result]:
                        if done.status == FAIL:
                            stopped.add(done.id)
                        results[done.id] = done
                        if on_result is not None:
                            on_result(done)
                    held = []
        finally:
            await self._drop_ws()
        return DoctorReport(list(results.values()))

    async def _drop_ws(self) -> None:
        """Close the open WebSocket (bounded), or drop it if it does not close in time."""
        ws, self.ws = self.ws, None
        if ws is None:
            return
        try:
            await asyncio.wait_for(ws.close(), 1.0)
        except Exception:  # noqa: BLE001 - closing is best effort
            transport = getattr(ws, "transport", None)
            if transport is not None:
                transport.abort()

    async def _run_one(self, check_id: str, title: str) -> CheckResult:
        check: Callable[[], Awaitable[Outcome]] = getattr(self, f"check_{check_id}")
        self.progress = ""
        start = time.perf_counter()
        limit = self.cfg.check_timeout_s
        if check_id == "stream":  # it keeps its own time (slow vs stalled); this is a backstop
            limit = 2 * limit + 1
        elif check_id == "memory":  # two requests, each given the limit
            limit = 2 * limit
        try:
            outcome = await asyncio.wait_for(check(), limit)
        except Skip as exc:
            return CheckResult(check_id, title, SKIP, ms(start), detail=str(exc))
        except TimeoutError:
            if not self.progress:
                self.timed_out.add(check_id)
            took = f"{limit:g} s"
            err = E.StreamTimeout(
                f"the stream stalled: {self.progress} until the {took} limit"
                if self.progress else f"no complete answer within {took}",
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
        return CheckResult(check_id, title, PASS, ms(start), detail=self._redact(outcome.detail),
                           data=outcome.data, note=self._redact(outcome.note))

    def _judge_slow(self, result: CheckResult) -> CheckResult:
        """A request with no complete answer in time, while the stream check saw tokens arrive:
        a slow server, not a stalled one. The plain request passes with a note; a check whose
        answer was never seen (memory, fallback) is skipped, not failed."""
        if result.status != FAIL or result.id not in self.timed_out or not self.streaming:
            return result
        limit = self.cfg.check_timeout_s * (2 if result.id == "memory" else 1)
        slow = (f"slow: no complete answer within {limit:g} s, while the streaming check saw "
                "tokens arriving; raise --check-timeout")
        if result.id == "request":
            return CheckResult(result.id, result.title, PASS, result.duration_ms,
                               detail="the server works but is slow (see the streaming check)",
                               note=slow)
        return CheckResult(result.id, result.title, SKIP, result.duration_ms,
                           detail=f"skipped: {slow}")

    def _failed(self, check_id: str, title: str, start: float,
                exc: SparkPairError) -> CheckResult:
        data: dict[str, Any] = {}
        for name in ("status", "url", "retry_after"):
            value = getattr(exc, name, None)
            if value is not None:
                data[name] = value
        if self._mode_missing(exc):
            exc = errors_map.mode_not_offered(exc, "responses")
        detail, hint = exc.message, exc.hint
        if data.get("retry_after") is not None and "Retry-After" not in detail:
            detail += f" (Retry-After: {data['retry_after']:g} s)"
        if isinstance(exc, E.ModelNotFound) and "spark-pair doctor" in hint:
            hint = MODEL_HINT
        return CheckResult(check_id, title, FAIL, ms(start), detail=self._redact(detail),
                           hint=self._redact(hint), error_class=exc.kind, data=data)

    def _mode_missing(self, exc: SparkPairError) -> bool:
        """A 404/405 on /v1/responses that the transport setting demands, from a server whose
        API root answers: the server lacks the mode, the URL is not wrong."""
        return (isinstance(exc, E.EndpointError) and exc.status in (404, 405)
                and self.cfg.transport in ("responses", "ws") and self.root_answers
                and (exc.url or "").startswith("http")  # the WS check has its own hint
                and (exc.url or "").endswith("/v1/responses"))

    def _redact(self, text: str) -> str:
        keys = [k for k in (self.cfg.api_key, self.key) if k and len(k.strip()) >= 4]
        return redact(text, *keys)

    async def check_telemetry(self) -> Outcome:
        if self.cfg.config_error is not None:
            raise Skip("skipped: the config did not load")
        if self.cfg.telemetry is None:
            raise Skip("skipped: telemetry is off ([telemetry] enabled; docs/telemetry.md)")
        from ...telemetry.check import check_export

        detail, note = await asyncio.to_thread(check_export, self.cfg.telemetry,
                                               self.cfg.check_timeout_s)
        return Outcome(detail, note=note)

    # ---- helpers ------------------------------------------------------------------------

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        if self.key:
            headers["Authorization"] = f"Bearer {self.key}"
        return headers

    def auth_hint(self) -> str:
        """Why a key is refused, judged from what the key looks like."""
        raw, env = self.cfg.api_key, self.cfg.api_key_env
        noted = self._key_notes()
        if noted:
            return noted[0] + "; if that is not it: is it the right key for this base URL?"
        if not raw or not raw.strip():
            return (f"no key was sent: the env var {env} is empty or not exported in this shell "
                    f"(`export {env}=...`), or [model] api_key_env names another variable")
        if raw != raw.strip():
            return (f"the key in {env} has leading/trailing whitespace or a newline; spark-pair "
                    "stripped it and the server still refused it: re-copy the key")
        if raw.lower().startswith("bearer "):
            return f"the key in {env} starts with 'Bearer '; store only the key itself"
        return (f"the key from {env} was sent and refused: is it the right key for this base "
                "URL (not another provider's), not deleted, not out of credit?")

    def _key_notes(self) -> list[str]:
        """The config loader's warnings about the key's shape (whitespace, 'Bearer ')."""
        return [w for w in self.cfg.warnings if w.startswith("the key")]

    async def _post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        assert self.http is not None
        url = api_url(self.base, path)
        resp = await self.http.post(url, json=body, headers=self._headers())
        if resp.status_code != 200:
            raise self._http_error(resp, resp.text, url, body.get("model", ""))
        return self._json(resp, url)

    def _json(self, resp: httpx.Response, url: str) -> dict[str, Any]:
        """The JSON object of a 200 answer; an HTML page or other body is a clear error."""
        ctype = resp.headers.get("content-type", "")
        if "html" in ctype.lower():
            raise self._html_error(resp, url)
        try:
            data = resp.json()
        except ValueError:
            data = None
        if not isinstance(data, dict):
            raise E.ProtocolError(f"{url} answered with {ctype or 'no content type'}, not a "
                                  f"JSON object: {E.excerpt(resp.text, 200)}", url=url,
                                  status=resp.status_code, body=resp.text)
        return data

    def _html_error(self, resp: httpx.Response, url: str) -> E.ProtocolError:
        return E.ProtocolError(
            f"{url} answered HTTP {resp.status_code} with an HTML page "
            f"({resp.headers.get('content-type', '')}), not JSON: {E.excerpt(resp.text, 200)}",
            url=url, status=resp.status_code, body=resp.text, hint=HTML_HINT)

    def _http_error(self, resp: httpx.Response, body: str, url: str,
                    model: str = "") -> E.ModelError:
        ctype = resp.headers.get("content-type", "").lower()
        status = resp.status_code
        moved = 300 <= status < 400  # a redirect's page says less than its Location
        if "html" in ctype and not moved and status not in (401, 403, 429) and status < 500:
            return self._html_error(resp, url)
        return http_error(resp.status_code, body, url, resp.headers.get("content-type", ""),
                          resp.headers, self.cfg.api_key, model or self.cfg.model or "",
                          self.auth_hint())

    def _event_error(self, event: dict[str, Any], url: str) -> E.ModelError:
        err = errors_map.error_object(
            event.get("error") or (event.get("response") or {}).get("error") or {})
        status = event.get("status") if isinstance(event.get("status"), int) else None
        out = errors_map.error_from_event(err, url, status=status, model=self.cfg.model or "",
                                          api_key=self.cfg.api_key)
        if isinstance(out, E.AuthError):
            out.hint = self.auth_hint()
        return out

    def _request_api(self) -> str:
        if self.request_api is not None:
            return self.request_api
        return "responses" if self.cfg.transport == "responses" else "chat"

    async def _ask(self, model: str, messages: list[dict[str, str]],
                   max_tokens: int = 32) -> tuple[str, dict[str, Any] | None]:
        """One non-streaming request: (text, usage)."""
        if self._request_api() == "chat":
            data = await self._post("/v1/chat/completions",
                                    request_body("chat", model, messages, max_tokens,
                                                 stream=False))
            try:
                text = data["choices"][0]["message"]["content"] or ""
            except (KeyError, IndexError, TypeError):
                raise E.ProtocolError("the chat completion has no choices[0].message.content",
                                      body=json.dumps(data)) from None
            return text, data.get("usage")
        data = await self._post("/v1/responses",
                                request_body("responses", model, messages, max_tokens,
                                             stream=False))
        return responses_text(data), data.get("usage")

    # ---- the checks -----------------------------------------------------------------------

    async def check_config(self) -> Outcome:
        cfg = self.cfg
        if cfg.config_error is not None:
            raise cfg.config_error
        if not cfg.base_url:
            raise E.ConfigError("no base URL is set", hint="set [model] base_url in "
                                "~/.config/spark-pair/config.toml or SPARK_PAIR_BASE_URL")
        if not cfg.model:
            raise E.ConfigError("no model is set", hint="set [model] name or SPARK_PAIR_MODEL")
        lines = []
        for name, value in (("model.base_url", cfg.base_url), ("model.name", cfg.model),
                            ("model.fallbacks", ", ".join(cfg.fallbacks) or "(none)"),
                            ("session.transport", cfg.transport)):
            lines.append(f"{name} = {value}  [{cfg.sources.get(name, 'default')}]")
        key = cfg.api_key
        state = (f"set, {len(key.strip())} chars" if key and key.strip() else "not set")
        lines.append(f"api key from env {cfg.api_key_env}: {state}")
        remembered = self._remembered()
        if remembered is not None:
            hours = remembered.age_s() / 3600
            lines.append(f"remembered for this server: transport = auto uses "
                         f"{remembered.transport} (found {hours:.1f} h ago; probed again after "
                         "a day or when it fails)")
        # base URL corrections are reported once, by the base URL check
        lines.extend(f"warning: {w}" for w in cfg.warnings if not w.startswith("base_url"))
        return Outcome("\n".join(lines), {
            "sources": dict(cfg.sources), "warnings": list(cfg.warnings),
            "remembered_transport": remembered.transport if remembered else None})

    def _remembered(self) -> offers.Remembered | None:
        if self.cfg.transport_cache is None:
            return None
        return offers.recall(self.cfg.transport_cache, self.base)

    async def check_base_url(self) -> Outcome:
        url = self.cfg.base_url or ""
        # the config loader may have corrected the value already and left a warning
        own = url_problems(url)
        problems = own + [w for w in self.cfg.warnings if w.startswith("base_url")]
        notes = [p for p in problems if p == WHITESPACE_NOTE]  # corrected, nothing to fix
        problems = [p for p in problems if p != WHITESPACE_NOTE]
        if problems:
            where = self.cfg.sources.get("model.base_url", "the config")
            text = "; ".join(dict.fromkeys(problems))
            raise E.EndpointError(
                f"base URL {url.strip()!r}: {text}" if own else text, url=url,
                hint=f"fix model.base_url in {where}: give the API root (e.g. "
                     f"https://host/api), spark-pair appends /v1/...; this run uses {self.base}")
        return Outcome(f"{self.base} (requests go to {api_url(self.base, '/v1/...')})",
                       note="; ".join(dict.fromkeys(notes)))

    async def check_connect(self) -> Outcome:
        parts = urlsplit(self.base)
        host = parts.hostname
        if not host or parts.scheme not in ("http", "https"):
            raise E.ConnectionFailed(f"cannot tell the host from {self.cfg.base_url!r}",
                                     hint="fix the base URL first")
        port = parts.port or (443 if parts.scheme == "https" else 80)
        target, via = host, ""
        proxy = proxy_for(parts.scheme, host)
        if proxy:
            p = urlsplit(proxy)
            target, port, via = p.hostname or "", p.port or 8080, f" via proxy {p.hostname}"
        loop = asyncio.get_running_loop()
        t0 = time.perf_counter()
        try:
            infos = await loop.getaddrinfo(target, port, type=socket.SOCK_STREAM)
        except socket.gaierror as exc:
            raise E.ConnectionFailed(f"cannot resolve {target!r}{via}: {exc.strerror or exc}",
                                     hint="check the host name for typos, your DNS, VPN or "
                                          "container network") from exc
        dns_ms = ms(t0)
        t1 = time.perf_counter()
        use_tls = parts.scheme == "https" and not proxy
        try:
            ctx = ssl.create_default_context() if use_tls else None
            # every address the name has, the next one when one fails or hangs (as a request)
            reader, writer = await asyncio.open_connection(
                target, port, ssl=ctx, server_hostname=host if use_tls else None,
                happy_eyeballs_delay=CONNECT_STAGGER_S)
        except ssl.SSLError as exc:
            plain = getattr(exc, "reason", "") in PLAIN_HTTP_REASONS
            hint = (f"the server speaks plain HTTP on port {port}, not TLS: use "
                    f"http://{parts.netloc} in base_url" if plain else
                    "a TLS-intercepting proxy or a wrong certificate: set SSL_CERT_FILE to "
                    "your CA bundle")
            raise E.ConnectionFailed(f"TLS handshake with {host}:{port} failed: {exc}",
                                     hint=hint) from exc
        except ConnectionRefusedError as exc:
            raise E.ConnectionFailed(f"connection refused by {target}:{port}{via}: nothing "
                                     "listens there") from exc
        except OSError as exc:
            raise E.ConnectionFailed(f"cannot connect to {target}:{port}{via}: "
                                     f"{exc.strerror or exc}") from exc
        connect_ms = ms(t1)
        address = (writer.get_extra_info("peername") or (infos[0][4][0],))[0]
        writer.close()
        try:
            await asyncio.wait_for(writer.wait_closed(), 1.0)
        except (TimeoutError, OSError, ssl.SSLError):
            pass
        del reader
        tls = " with TLS" if use_tls else ""
        return Outcome(f"{target} -> {address}:{port}{via}: resolve {dns_ms:.0f} ms, "
                       f"connect{tls} {connect_ms:.0f} ms",
                       {"dns_ms": round(dns_ms, 1), "connect_ms": round(connect_ms, 1),
                        "address": address, "port": port, "tls": use_tls,
                        "proxy": bool(proxy)})

    async def check_auth(self) -> Outcome:
        assert self.http is not None
        url = api_url(self.base, "/v1/models")
        resp = await self.http.get(url, headers=self._headers())
        try:
            if resp.status_code != 200:
                raise self._http_error(resp, resp.text, url)
            data = self._json(resp, url)
            items = data.get("data")
            if not isinstance(items, list):
                raise E.ProtocolError("GET /v1/models has no 'data' list", url=url,
                                      body=resp.text)
        except E.AuthError:
            raise
        except SparkPairError as exc:  # the answer says nothing about the key
            self.models_error = exc
            raise Skip(f"skipped: GET /v1/models answered HTTP {resp.status_code}, which says "
                       "nothing about the key (see the next check)") from None
        self.available = [str(m.get("id")) for m in items if isinstance(m, dict)]
        self.root_answers = True
        who = f"key from {self.cfg.api_key_env}" if self.key else "no key (none required)"
        note = ""
        raw = self.cfg.api_key or ""
        if self.key and raw != raw.strip():
            note = "; note: the key has surrounding whitespace (stripped)"
        for warning in self._key_notes():
            note += f"; note: {warning}"
        return Outcome(f"{who} accepted{note}", {"models": len(self.available)})

    async def check_models(self) -> Outcome:
        if self.models_error is not None:
            raise self.models_error
        model = self.cfg.model or ""
        shown = ", ".join(self.available[:8]) + (" ..." if len(self.available) > 8 else "")
        if model not in self.available:
            near = [m for m in self.available if model.split("-")[0] in m][:3]
            raise E.ModelNotFound(
                f"model {model!r} is not offered here; available: {shown or '(none)'}",
                hint=(f"set [model] name to one of the listed ids (e.g. {near[0]!r}); "
                      if near else "") + MODEL_HINT)
        missing = [f for f in self.cfg.fallbacks if f not in self.available]
        extra = f"; fallbacks missing: {', '.join(missing)}" if missing else ""
        return Outcome(f"{model} is listed ({len(self.available)} models){extra}",
                       {"available": self.available, "missing_fallbacks": missing})

    async def check_request(self) -> Outcome:
        ask = [{"role": "user", "content": PING_PROMPT}]
        note = ""
        try:
            text, usage = await self._ask(self.cfg.model or "", ask)
        except E.Redirected as exc:
            api = self._request_api()
            if self.cfg.transport == api:  # the API the setting demands: a failure
                raise
            self.request_api = "responses" if api == "chat" else "chat"
            try:
                text, usage = await self._ask(self.cfg.model or "", ask)
            except SparkPairError:
                self.request_api = None
                raise exc from None  # no way around it: the redirect is the finding
            note = _worked_around(exc, api, self.request_api, self.cfg.transport)
        if not usage:
            raise E.ProtocolError("the answer carries no 'usage': token counts and cost "
                                  "cannot be tracked", hint="some gateways strip usage; "
                                  "spark-pair then estimates tokens (costs are approximate)")
        tin = usage.get("input_tokens", usage.get("prompt_tokens"))
        tout = usage.get("output_tokens", usage.get("completion_tokens"))
        return Outcome(f"{self._request_api()}: {len(text)} chars, usage {tin} in / {tout} out",
                       {"api": self._request_api(), "input_tokens": tin, "output_tokens": tout},
                       note=note)

    async def check_stream(self) -> Outcome:
        api = "chat" if self.cfg.transport == "chat" else "responses"
        note = ""
        try:
            stats = await self._stream(api)
        except E.EndpointError as exc:
            if self.cfg.transport != "auto" or api == "chat":
                raise
            api = "chat"  # no Responses API here: auto uses Chat Completions
            note = (_worked_around(exc, "responses", api, "auto")
                    if isinstance(exc, E.Redirected) else
                    f"this server does not offer the Responses API (HTTP {exc.status}); "
                    "transport = auto uses chat completions")
            stats = await self._stream(api)
        if buffered(stats):  # a buffer holds back every stream; a client that stalled, one
            stats = await self._stream(api)
        outcome = judge_stream(api, stats)
        self.streaming = True
        outcome.note = "; ".join(n for n in (note, outcome.note) if n)
        return outcome

    async def _stream(self, api: str) -> dict[str, Any]:
        """Stream a short reply; read at most `stream_tokens` deltas. Slow is not stalled:
        reading stops at the check timeout while deltas still arrive (the rate is measured);
        only no data at all for the check timeout is a stall."""
        assert self.http is not None
        messages = [{"role": "user", "content": STREAM_PROMPT}]
        path = "/v1/chat/completions" if api == "chat" else "/v1/responses"
        body = request_body(api, self.cfg.model or "", messages, self.cfg.stream_tokens,
                            stream=True)
        url = api_url(self.base, path)
        limit = self.cfg.check_timeout_s
        start = time.perf_counter()
        times: list[float] = []
        usage: dict[str, Any] | None = None
        reads = 0  # the network reads that carried deltas (a buffered stream needs few)
        ended = "end"  # end | tokens (read enough) | limit (slow: still arriving at the limit)
        async with self.http.stream("POST", url, json=body, headers=self._headers()) as resp:
            ctype = resp.headers.get("content-type", "")
            if resp.status_code != 200 or "text/event-stream" not in ctype:
                raw = (await resp.aread()).decode("utf-8", "replace")
                if resp.status_code == 200 and "json" in ctype:
                    raise E.ProtocolError("asked for a stream, got one JSON body: the server or "
                                          "a proxy ignores stream=true", url=url, body=raw)
                raise self._http_error(resp, raw, url)
            batches = aiter(iter_sse_batches(resp.aiter_bytes()))
            last = start  # when data last arrived
            finished = None  # when a chat reply's finish reason came
            done = False
            while not done:
                now = time.perf_counter()
                if times and now - start >= limit:
                    ended = "limit"
                    break
                wait = limit - (now - last)
                if finished is not None:  # only its usage is awaited (see USAGE_GRACE_S)
                    wait = min(wait, finished + USAGE_GRACE_S - now)
                try:
                    batch = await asyncio.wait_for(anext(batches), wait)
                except StopAsyncIteration:
                    break
                except TimeoutError:
                    if finished is not None:
                        break  # the reply ended; its stream was left open
                    got = f"{len(times)} deltas arrived, then nothing" if times else "nothing"
                    raise E.StreamTimeout(
                        f"the stream stalled: {got} for {limit:g} s",
                        hint=f"no data within doctor's --check-timeout ({limit:g} s): a stalled "
                             "server, or a proxy that buffers; a server that needs longer "
                             "before its first token: raise --check-timeout") from None
                last = time.perf_counter()
                before = len(times)
                for data in batch:  # the events one network read completed
                    if not data or data.isspace():
                        continue  # an empty `data:` line (a proxy's keep-alive)
                    event = parse_event(data, url)
                    if event is None:
                        done = True
                        break
                    if "error" in event and event.get("type") is None:
                        raise self._event_error(event, url)
                    if api == "chat":
                        choices = event.get("choices") or []
                        if choices and (choices[0].get("delta") or {}).get("content"):
                            times.append(last - start)
                        if event.get("usage"):
                            usage = event["usage"]
                        if finished is None and any(c.get("finish_reason") for c in choices):
                            finished = last
                        done = finished is not None and bool(usage)
                    else:
                        kind = event.get("type")
                        if kind == "response.output_text.delta":
                            times.append(last - start)
                        elif kind in ("error", "response.failed"):
                            raise self._event_error(event, url)
                        elif kind in ("response.completed", "response.incomplete"):
                            usage = (event.get("response") or {}).get("usage")
                            done = True
                    if len(times) > self.cfg.stream_tokens:
                        ended = "tokens"  # the server ignores the token limit: enough was read
                        done = True
                    if done:
                        break
                reads += len(times) > before
        return {"times": times, "reads": reads, "usage": usage,
                "total_s": time.perf_counter() - start, "ended": ended, "limit_s": limit}

    async def check_ws(self) -> Outcome:
        if self.cfg.transport in ("chat", "responses"):
            raise Skip(f"skipped: transport is {self.cfg.transport} (WebSocket mode not used)")
        from websockets.exceptions import InvalidHandshake, InvalidStatus, WebSocketException

        url = ws_url(self.base, "/v1/responses")
        t0 = time.perf_counter()
        try:
            await self._ws_connect(url)
        except InvalidStatus as exc:
            status = exc.response.status_code
            body = exc.response.body.decode("utf-8", "replace") if exc.response.body else ""
            if status in (401, 403) or 300 <= status < 400:
                raise http_error(status, body, url, headers=exc.response.headers,
                                 api_key=self.cfg.api_key, auth_hint=self.auth_hint()) from exc
            if self.cfg.transport == "auto":  # not offered here: auto uses HTTP streaming
                return Outcome(f"WebSocket mode refused at {url} (HTTP {status})",
                               {"offered": False, "status": status},
                               note="this server does not offer the WebSocket mode; transport "
                                    "= auto streams over HTTP instead (remembered per server)")
            raise E.EndpointError(
                f"WebSocket mode refused at {url} (HTTP {status})", status=status, url=url,
                hint="this server does not offer the Responses WebSocket mode, and "
                     "[session] transport = \"ws\" demands it: set transport = \"auto\" "
                     "(falls back to HTTP streaming) or \"chat\"") from exc
        except (InvalidHandshake, WebSocketException, OSError) as exc:
            raise E.ConnectionFailed(f"WebSocket handshake with {url} failed: {exc}",
                                     url=url) from exc
        handshake_ms = ms(t0)
        t1 = time.perf_counter()
        text, _, ttft = await self._ws_turn(
            {"input": [{"role": "user", "content": PING_PROMPT}]}, url)
        turn_ms = ms(t1)
        await self._drop_ws()  # the memory check opens its own connection
        self.ws_ok = True
        ttft_txt = f", TTFT {ttft * 1000:.0f} ms" if ttft is not None else ""
        return Outcome(f"handshake {handshake_ms:.0f} ms; turn {turn_ms:.0f} ms{ttft_txt}, "
                       f"{len(text)} chars",
                       {"handshake_ms": round(handshake_ms, 1), "turn_ms": round(turn_ms, 1)})

    async def _ws_connect(self, url: str) -> None:
        from ...protocol.responses_ws import connect  # never follows a redirect

        headers = {"openai-beta": WS_BETA}
        if self.key:
            headers["Authorization"] = f"Bearer {self.key}"
        self.ws = await connect(url, additional_headers=headers, user_agent_header=user_agent(),
                                open_timeout=self.cfg.check_timeout_s, max_size=2**24,
                                happy_eyeballs_delay=CONNECT_STAGGER_S)

    async def _ws_turn(self, extra: dict[str, Any], url: str,
                       model: str | None = None) -> tuple[str, str | None, float | None]:
        """One response.create on the open socket: (text, response id, ttft seconds)."""
        message = {"type": "response.create", "model": model or self.cfg.model,
                   "max_output_tokens": 32, **extra}
        start = time.perf_counter()
        await self.ws.send(json.dumps(message))
        parts: list[str] = []
        ttft = None
        for _ in range(100_000):  # bounded; the check's timeout bounds the time
            event = json.loads(await self.ws.recv())
            kind = event.get("type")
            if kind == "response.output_text.delta":
                if ttft is None:
                    ttft = time.perf_counter() - start
                parts.append(event.get("delta") or "")
                self.progress = f"{len(parts)} deltas arrived, then nothing"
            elif kind in ("error", "response.failed"):
                raise self._event_error(event, url)
            elif kind in ("response.completed", "response.incomplete"):  # 32 tokens may cut it
                response = event.get("response") or {}
                return "".join(parts) or responses_text(response), response.get("id"), ttft
        raise E.ProtocolError("the WebSocket turn never completed", url=url)

    async def check_memory(self) -> Outcome:
        first = {"role": "user", "content": REMEMBER_PROMPT}
        second = {"role": "user", "content": RECALL_PROMPT}
        if self.ws_ok:
            reply2, how, chained = await self._ws_memory(first, second)
        else:
            model = self.cfg.model or ""
            reply1, _ = await self._ask(model, [first])
            reply2, _ = await self._ask(model, [first, {"role": "assistant", "content": reply1},
                                                second])
            how, chained = f"{self._request_api()}, full history resent", False
        if MEMORY_NUMBER not in reply2:
            asked = f"asked to recall {MEMORY_NUMBER}, the model answered " \
                    f"{E.excerpt(reply2, 80)!r}"
            if chained:
                raise E.ProtocolError(
                    f"{asked} ({how})",
                    hint="the server drops the conversation (previous_response_id not kept? "
                         "transport = \"chat\" resends the whole history instead), or the "
                         "model is too weak to recall (set [model] name to a stronger one)")
            raise E.ProtocolError(
                f"{asked}, with the first turn in the request ({how})",
                hint="the server got the whole conversation, so the model did not use it: a "
                     "model too weak to recall (set [model] name to a stronger one), or a "
                     "server that cuts the prompt to a small context window")
        return Outcome(f"{how}: recalled {MEMORY_NUMBER}", {"via": how})

    async def _ws_memory(self, first: dict[str, str],
                         second: dict[str, str]) -> tuple[str, str, bool]:
        """Two turns on a fresh socket, chained; if the server closes the socket after the
        first turn, reconnect once and resend the history (as the client does). Returns the
        second reply, how it was asked, and whether it was chained (not resent)."""
        from websockets.exceptions import ConnectionClosed

        url = ws_url(self.base, "/v1/responses")
        try:
            await self._ws_connect(url)
            reply1, rid, _ = await self._ws_turn({"input": [first]}, url)
            if not rid:
                raise E.ProtocolError("the first WS turn returned no response id", url=url)
            try:
                reply2, _, _ = await self._ws_turn(
                    {"input": [second], "previous_response_id": rid}, url)
                return reply2, "ws, chained with previous_response_id", True
            except (ConnectionClosed, E.BadRequest) as exc:
                if isinstance(exc, E.BadRequest) and "connection" not in exc.message.lower():
                    raise
            await self._drop_ws()
            await self._ws_connect(url)
            history = [first, {"role": "assistant", "content": reply1}, second]
            reply2, _, _ = await self._ws_turn({"input": history}, url)
            return reply2, "ws, the server closed the socket after one turn; reconnected, " \
                           "history resent", False
        except ConnectionClosed as exc:
            raise E.StreamDropped(f"the server closed the WebSocket during the memory check "
                                  f"({exc})", url=url, hint=DROP_HINT) from exc
        finally:
            await self._drop_ws()
    async def check_fallback(self) -> Outcome:
        if not self.cfg.fallbacks:
            raise Skip("skipped: no fallbacks configured ([model] fallbacks)")
        target = self.cfg.fallbacks[0]
        missing = [f for f in self.cfg.fallbacks if f not in self.available]
        if missing:  # any missing fallback fails: the switch would fail when it is needed
            names = ", ".join(repr(f) for f in missing)
            raise E.ModelNotFound(f"fallback model{'s' if len(missing) > 1 else ''} {names} "
                                  f"not offered here",
                                  hint="fix [model] fallbacks: list only ids that "
                                       "GET /v1/models shows")
        t0 = time.perf_counter()
        text, _ = await self._ask(target, [{"role": "user", "content": PING_PROMPT}])
        return Outcome(f"{target} answered in {ms(t0):.0f} ms ({len(text)} chars)",
                       {"model": target})


API_NAMES = {"chat": "chat completions", "responses": "the Responses API"}


def _worked_around(exc: E.Redirected, api: str, other: str, transport: str) -> str:
    """The note for a redirect on `api` that `other` works around (never followed)."""
    where = f"to {exc.target}" if exc.target else "without a Location"
    return (f"{API_NAMES[api]} redirects (HTTP {exc.status} {where}; not followed); "
            f"{API_NAMES[other]} answers, and transport = {transport} uses it")


def _title(check_id: str) -> str:
    return next((title for cid, title, _ in CHECKS if cid == check_id), check_id)
