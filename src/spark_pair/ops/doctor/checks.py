"""The checks of `spark-pair doctor`, each a method: what it asks the server and what
the answer means (the probes talk to the server; runner.py runs the checks in order)."""

from __future__ import annotations

import asyncio
import socket
import ssl
import time
from typing import Any
from urllib.parse import urlsplit

import httpx

from ...base import errors as E
from ...base.errors import SparkPairError
from ...base.transport import Transport
from ...base.urls import WHITESPACE_NOTE
from ...protocol import errors_map, offers
from ...protocol.request import CONNECT_STAGGER_S
from .probe import HttpProbe, auth_hint, key_notes
from .results import DoctorConfig, Passed, Skip
from .stream import stream_stats
from .wire import (
    api_url,
    buffered,
    http_error,
    judge_stream,
    ms,
    probe_url,
    proxy_for,
    url_problems,
)
from .ws_probe import WsProbe

MEMORY_NUMBER = "42"
REMEMBER_PROMPT = f"Remember the number {MEMORY_NUMBER}. Reply only with OK."
RECALL_PROMPT = "What number did I ask you to remember? Reply with the number only."
PING_PROMPT = "Reply with the single word: ready"
MODEL_HINT = ("check the id for typos or a preview suffix; set [model] name to an id that "
              "GET /v1/models lists (shown above), and list others in [model] fallbacks")
# what OpenSSL says when the other end answers a TLS hello in plain HTTP
PLAIN_HTTP_REASONS = {"WRONG_VERSION_NUMBER", "RECORD_LAYER_FAILURE", "HTTP_REQUEST",
                      "PACKET_LENGTH_TOO_LONG"}


class Checks:
    """The checks against one server, and what each leaves for the next."""

    def __init__(self, cfg: DoctorConfig, http: httpx.AsyncClient) -> None:
        self.cfg = cfg
        self.base = probe_url(cfg.base_url or "")  # what the client uses
        self.probe = HttpProbe(cfg, self.base, http)
        self.ws = WsProbe(self.probe, self._progressed)
        self.progress = ""  # what the running check saw arrive, for a timeout's message
        self.available: list[str] = []
        self.root_answers = False  # GET /v1/models answered with a model list: the URL is right
        self.streaming = False  # the stream check saw tokens arriving: the server works
        self.ws_ok = False  # the WS check passed: the memory check uses a fresh socket
        self.stream_api: str | None = None  # the API the stream check streamed over
        self.unusable_tls: SparkPairError | None = None  # the CA certificates cannot be loaded
        self.models_error: SparkPairError | None = None  # GET /v1/models failed, not the key
        self.request_api: str | None = None  # the API the plain request found working, when
        # the usual one redirects and the transport setting does not demand it

    def _progressed(self, what: str) -> None:
        self.progress = what

    def _request_api(self) -> str:
        if self.request_api is not None:
            return self.request_api
        return "responses" if self.cfg.transport == "responses" else "chat"

    async def _ask(self, model: str, messages: list[dict[str, str]]
                   ) -> tuple[str, dict[str, Any] | None]:
        """One non-streaming request on the API the plain request uses: (text, usage)."""
        return await self.probe.ask(self._request_api(), model, messages)

    async def check_config(self) -> Passed:
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
        return Passed("\n".join(lines), {
            "sources": dict(cfg.sources), "warnings": list(cfg.warnings),
            "remembered_transport": remembered.transport if remembered else None})

    def offered(self) -> str | None:
        """The transport auto settles on here, as the checks found: WebSocket mode when its
        turn passed, else the API the stream check streamed over (None: none was seen)."""
        return "ws" if self.ws_ok else self.stream_api

    def _remembered(self) -> offers.Remembered | None:
        if self.cfg.transport_cache is None:
            return None
        return offers.recall(self.cfg.transport_cache, self.base)

    async def check_base_url(self) -> Passed:
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
        return Passed(f"{self.base} (requests go to {api_url(self.base, '/v1/...')})",
                      note="; ".join(dict.fromkeys(notes)))

    async def check_connect(self) -> Passed:
        parts = urlsplit(self.base)
        host = parts.hostname
        if not host or parts.scheme not in ("http", "https"):
            raise E.ConnectionFailed(f"cannot tell the host from {self.cfg.base_url!r}",
                                     hint="fix the base URL first")
        if parts.scheme == "https" and self.unusable_tls is not None:
            raise self.unusable_tls
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
                    errors_map.CERT_HINT)
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
        return Passed(f"{target} -> {address}:{port}{via}: resolve {dns_ms:.0f} ms, "
                      f"connect{tls} {connect_ms:.0f} ms",
                      {"dns_ms": round(dns_ms, 1), "connect_ms": round(connect_ms, 1),
                       "address": address, "port": port, "tls": use_tls,
                       "proxy": bool(proxy)})

    async def check_auth(self) -> Passed:
        try:
            answer = await self.probe.fetch("GET", "/v1/models")
            if answer.status != 200:
                raise self.probe.http_error(answer)
            data = self.probe.json(answer)
            items = data.get("data")
            if not isinstance(items, list):
                raise E.ProtocolError("GET /v1/models has no 'data' list", url=answer.url,
                                      status=answer.status, body=answer.text)
        except E.AuthError:
            raise
        except SparkPairError as exc:  # the answer says nothing about the key
            self.models_error = exc
            status = getattr(exc, "status", None)
            raise Skip(f"skipped: GET /v1/models answered HTTP {status}, which says "
                       "nothing about the key (see the next check)") from None
        self.available = [str(m.get("id")) for m in items if isinstance(m, dict)]
        self.root_answers = True
        who = f"key from {self.cfg.api_key_env}" if self.probe.key else "no key (none required)"
        note = ""
        raw = self.cfg.api_key or ""
        if self.probe.key and raw != raw.strip():
            note = "; note: the key has surrounding whitespace (stripped)"
        for warning in key_notes(self.cfg):
            note += f"; note: {warning}"
        return Passed(f"{who} accepted{note}", {"models": len(self.available)})

    async def check_models(self) -> Passed:
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
        n = len(self.available)
        return Passed(f"{model} is listed ({n} model{'' if n == 1 else 's'}){extra}",
                      {"available": self.available, "missing_fallbacks": missing})

    async def check_request(self) -> Passed:
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
        return Passed(f"{self._request_api()}: {len(text)} chars, usage {tin} in / {tout} out",
                      {"api": self._request_api(), "input_tokens": tin, "output_tokens": tout},
                      note=note)

    async def check_stream(self) -> Passed:
        api = "chat" if self.cfg.transport == "chat" else "responses"
        note = ""
        try:
            stats = await stream_stats(self.probe, api)
        except E.EndpointError as exc:
            if self.cfg.transport != "auto" or api == "chat":
                raise
            api = "chat"  # no Responses API here: auto uses Chat Completions
            note = (_worked_around(exc, "responses", api, "auto")
                    if isinstance(exc, E.Redirected) else
                    f"this server does not offer the Responses API (HTTP {exc.status}); "
                    "transport = auto uses chat completions")
            stats = await stream_stats(self.probe, api)
        if buffered(stats):  # a buffer holds back every stream; a client that stalled, one
            stats = await stream_stats(self.probe, api)
        outcome = judge_stream(api, stats)
        self.streaming, self.stream_api = True, api
        outcome.note = "; ".join(n for n in (note, outcome.note) if n)
        return outcome

    async def check_ws(self) -> Passed:
        if self.cfg.transport in (Transport.CHAT, Transport.RESPONSES):
            raise Skip(f"skipped: transport is {self.cfg.transport} (WebSocket mode not used)")
        from websockets.exceptions import (
            InvalidHandshake,
            InvalidStatus,
            SecurityError,
            WebSocketException,
        )

        url = self.ws.url
        t0 = time.perf_counter()
        try:
            await self.ws.connect()
        except InvalidStatus as exc:
            status = exc.response.status_code
            body = exc.response.body.decode("utf-8", "replace") if exc.response.body else ""
            if status in (401, 403) or 300 <= status < 400:
                raise http_error(status, body, url, headers=exc.response.headers,
                                 api_key=self.cfg.api_key, auth_hint=auth_hint(self.cfg)) from exc
            if self.cfg.transport == "auto":  # not offered here: auto uses HTTP streaming
                return Passed(f"WebSocket mode refused at {url} (HTTP {status})",
                              {"offered": False, "status": status},
                              note="this server does not offer the WebSocket mode; transport "
                                   "= auto streams over HTTP instead (remembered per server)")
            raise E.EndpointError(
                f"WebSocket mode refused at {url} (HTTP {status})", status=status, url=url,
                hint="this server does not offer the Responses WebSocket mode, and "
                     "[session] transport = \"ws\" demands it: set transport = \"auto\" "
                     "(falls back to HTTP streaming) or \"chat\"") from exc
        except (InvalidHandshake, WebSocketException, OSError) as exc:
            over = isinstance(exc.__cause__, SecurityError)  # an answer over websockets' limits
            raise E.ConnectionFailed(f"WebSocket handshake with {url} failed: "
                                     f"{errors_map.handshake_failed(exc)}", url=url,
                                     hint=E.TooLarge.default_hint if over else None) from exc
        handshake_ms = ms(t0)
        t1 = time.perf_counter()
        text, _, ttft = await self.ws.turn(
            {"input": [{"role": "user", "content": PING_PROMPT}]})
        turn_ms = ms(t1)
        await self.ws.drop()  # the memory check opens its own connection
        self.ws_ok = True
        ttft_txt = f", TTFT {ttft * 1000:.0f} ms" if ttft is not None else ""
        return Passed(f"handshake {handshake_ms:.0f} ms; turn {turn_ms:.0f} ms{ttft_txt}, "
                      f"{len(text)} chars",
                      {"handshake_ms": round(handshake_ms, 1), "turn_ms": round(turn_ms, 1)})

    async def check_memory(self) -> Passed:
        first = {"role": "user", "content": REMEMBER_PROMPT}
        second = {"role": "user", "content": RECALL_PROMPT}
        if self.ws_ok:
            reply2, how, chained = await self.ws.memory(first, second)
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
        return Passed(f"{how}: recalled {MEMORY_NUMBER}", {"via": how})

    async def check_fallback(self) -> Passed:
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
        return Passed(f"{target} answered in {ms(t0):.0f} ms ({len(text)} chars)",
                      {"model": target})

    async def check_telemetry(self) -> Passed:
        if self.cfg.config_error is not None:
            raise Skip("skipped: the config did not load")
        if self.cfg.telemetry is None:
            raise Skip("skipped: telemetry is off ([telemetry] enabled; docs/telemetry.md)")
        from ...telemetry.check import check_export

        detail, note = await asyncio.to_thread(check_export, self.cfg.telemetry,
                                               self.cfg.check_timeout_s)
        return Passed(detail, note=note)


API_NAMES = {"chat": "chat completions", "responses": "the Responses API"}


def _worked_around(exc: E.Redirected, api: str, other: str, transport: str) -> str:
    """The note for a redirect on `api` that `other` works around (never followed)."""
    where = f"to {exc.target}" if exc.target else "without a Location"
    return (f"{API_NAMES[api]} redirects (HTTP {exc.status} {where}; not followed); "
            f"{API_NAMES[other]} answers, and transport = {transport} uses it")

