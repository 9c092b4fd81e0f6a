"""ModelClient: one event stream over three transports, with retries and fallbacks."""

from __future__ import annotations

import json
import os
import time
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from ..base.errors import (
    AuthError,
    ConfigError,
    EndpointError,
    ModelError,
    ModelNotFound,
    ProtocolViolation,
    StreamDropped,
    add_secret,
)
from ..base.transport import TRANSPORT_CHOICES
from ..base.urls import host_of
from . import errors_map, offers
from .bodies import chat_body, responses_body, sse_body
from .chat import stream_chat
from .events import (
    Completed,
    Event,
    Failed,
    FirstToken,
    ModelChanged,
    Retrying,
    Rewound,
    Started,
    TextDelta,
    Transport,
    TransportChanged,
    TurnRequest,
    Usage,
)
from .http_common import error_body, post_sse, raw_chunks
from .items import Deltas, Finished, Item, Note, Opened, Steer
from .limits import MAX_BODY_BYTES, MAX_ERROR_BODY_BYTES, Inflater, read_body
from .metrics import Stopwatch, estimate_tokens, fill_stopped
from .records import Recorder, RequestRecord, RequestStatus
from .request import CONNECT_TIMEOUT_S, endpoint_url, user_agent
from .responses_sse import stream_responses
from .responses_ws import WsRefused, WsSocket
from .retry import MIN_READ_TIMEOUT_S, Clock, give_up_note, retry_delay
from .steer import SteerState

if TYPE_CHECKING:  # httpx loads with the first HTTP request (the WS path never needs it)
    import random
    import threading

    import httpx

    from ..base.config import Settings

TRANSPORTS = tuple(Transport)  # the order auto tries them in


@dataclass(slots=True)
class ClientOptions:
    base_url: str
    api_key: str | None
    model: str
    fallbacks: list[str] = field(default_factory=list)
    transport: str = "auto"  # auto | ws | responses | chat
    timeout_s: float = 60.0  # read timeout: no data for this long = StreamTimeout
    connect_timeout_s: float = CONNECT_TIMEOUT_S
    max_tokens: int | None = 4096
    temperature: float | None = 0.2
    reconnect_attempts: int = 3  # WS reconnects before the sticky fall back to HTTP SSE
    max_retries: int = 4  # per request, for 429/5xx/timeouts/drops
    retry_deadline_s: float = 60.0  # total time budget for retries of one request
    persistent_ws: bool = True
    task: str = "edit"
    key_source: str = ""  # where the key came from, e.g. "$SPARK_PAIR_API_KEY" (for messages)

    @classmethod
    def of(cls, settings: Settings, task: str = "edit") -> ClientOptions:
        """The options the settings give for a task (edit, bench, ...)."""
        return cls(**settings.client_values(task))

    def __repr__(self) -> str:  # never show the key
        key = "set" if self.api_key else "none"
        return (f"ClientOptions(base_url={self.base_url!r}, api_key=<{key}>, "
                f"model={self.model!r}, transport={self.transport!r})")


class ModelClient:
    """`async with ModelClient(opts) as c: async for ev in c.stream(req): ...`"""

    def __init__(self, options: ClientOptions, *, recorder: Recorder | None = None,
                 transport_cache: Path | None = None,
                 http_transport: httpx.AsyncBaseTransport | None = None) -> None:
        """`http_transport`: what the HTTP transports' client sends through (default: httpx's
        own)."""
        if options.transport not in TRANSPORT_CHOICES:
            raise ValueError(f"unknown transport {options.transport!r}")
        add_secret(options.api_key)  # scrubbed from every message and log, whatever its shape
        self.options = options
        self.recorder = recorder
        self.transport_cache = transport_cache
        self.base_url = options.base_url.rstrip("/")
        self._models = [options.model, *[m for m in options.fallbacks if m != options.model]]
        self._model_index = 0
        self._auto = options.transport == "auto"
        # the recalled transport: the one taken from the probe memory
        self._candidates, self._recalled = offers.candidates(options.transport, transport_cache,
                                                             self.base_url)
        self._ws_failures = 0
        self._warm_tokens = 0  # input tokens the drafts' pre-warms sent since the last turn
        self._rng: random.Random | None = None  # the retry jitter's (None: the module's)
        self.clock = Clock()  # what the retries wait on and their deadline counts
        self._http: httpx.AsyncClient | None = None
        self._warming: threading.Thread | None = None  # building self._http (warm_http)
        self._http_transport = http_transport
        self._ws = WsSocket(self.base_url, options.api_key,
                            connect_timeout_s=options.connect_timeout_s,
                            read_timeout_s=options.timeout_s)

    def __repr__(self) -> str:
        return f"ModelClient({self.options!r}, transport={self.transport!r})"

    # ---- public state ----------------------------------------------------------------

    @property
    def transport(self) -> Transport:
        return self._candidates[0]

    @property
    def model(self) -> str:
        return self._models[self._model_index]

    @property
    def connection_count(self) -> int:
        return self._ws.opened

    def reset_chain(self) -> None:
        self._ws.previous_id = None

    # ---- life cycle ------------------------------------------------------------------

    async def __aenter__(self) -> ModelClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._ws.close()
        if self._warming is not None:  # (the client it builds is closed just below)
            self._warming.join()
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    def warm_http(self) -> None:
        """Build the HTTP client in a thread of its own (httpx's import, the TLS context's CA
        load, the HTTP/1.1 parser's import: tens of ms) while the run gets ready (git, the
        context, the request); the first request takes it. WebSocket: only its TLS context."""
        if self.transport == Transport.WS:
            return self._ws.warm_tls()
        if self._http is not None or self._warming:
            return
        import threading

        self._warming = threading.Thread(target=self._build_http, name="http-client",
                                         daemon=True)
        self._warming.start()

    def _build_http(self) -> None:
        try:
            self._new_client()
            import h11  # noqa: F401 - the first connection's parser (httpcore loads it then)
        except (ImportError, ConfigError):  # (a broken CA bundle: the request says it)
            pass

    def _client(self) -> httpx.AsyncClient:
        warming, self._warming = self._warming, None
        if warming is not None:
            warming.join()
        return self._new_client()

    def _new_client(self) -> httpx.AsyncClient:
        if self._http is None:
            import httpx

            o = self.options
            timeout = httpx.Timeout(connect=o.connect_timeout_s, read=o.timeout_s,
                                    write=o.timeout_s, pool=o.connect_timeout_s)
            # plain http never does TLS: no CA bundle load (~60 ms). A reply is read as it
            # comes: asked uncompressed (one compressed anyway is decoded: protocol.limits)
            plain = urlsplit(self.base_url).scheme == "http"
            try:
                self._http = httpx.AsyncClient(timeout=timeout, verify=not plain,
                                               headers={"User-Agent": user_agent(),
                                                        "Accept-Encoding": "identity"},
                                               transport=self._http_transport)
            except (OSError, ValueError) as exc:  # the CA bundle (SSL_CERT_FILE) is unusable
                raise errors_map.ca_bundle_failed(exc) from None
        return self._http

    # ---- requests --------------------------------------------------------------------

    async def list_models(self) -> list[str]:
        import httpx

        url = f"{self.base_url}/v1/models"
        headers = {"Authorization": f"Bearer {self.options.api_key}"} \
            if self.options.api_key else {}
        try:
            async with self._client().stream("GET", url, headers=headers) as resp:
                ctype = resp.headers.get("content-type", "")
                if resp.status_code != 200:
                    raise errors_map.error_from_response(resp.status_code,
                                                         await error_body(resp, url), url,
                                                         api_key=self.options.api_key,
                                                         headers=resp.headers,
                                                         content_type=ctype)
                inflater = Inflater(resp.headers.get("content-encoding", ""), url,
                                    MAX_BODY_BYTES, "a model list")
                body = await read_body(raw_chunks(resp), inflater)
        except (httpx.ConnectTimeout, httpx.PoolTimeout):
            raise errors_map.connect_timeout(url, self.options.connect_timeout_s) from None
        except httpx.TimeoutException:
            raise errors_map.timeout(url, self.options.timeout_s) from None
        except httpx.RemoteProtocolError as exc:
            raise errors_map.http_broken(exc, url) from None
        except httpx.HTTPError as exc:
            raise errors_map.connection_failed(exc, url) from None
        try:
            return [m["id"] for m in json.loads(body)["data"]]
        except (ValueError, KeyError, TypeError):
            raise errors_map.not_openai_body(url, body[:MAX_ERROR_BODY_BYTES].decode(
                "utf-8", "replace"), ctype) from None

    async def prewarm(self, request: TurnRequest) -> None:
        """Open the WS socket and send generate:false; a no-op for the HTTP transports."""
        if self.transport != Transport.WS:
            return
        try:
            async for _ in self._ws.run(request, self.model, self.options.max_tokens,
                                        self._temperature(request), chain=False,
                                        generate=False):
                pass
        except WsRefused:
            if self._auto and len(self._candidates) > 1:
                self._candidates.pop(0)
        except (ModelError, ConfigError):
            pass  # prewarm is best effort; the turn reports real problems

    async def warm_draft(self, request: TurnRequest) -> bool:
        """Pre-warm what `request` (a draft's) would send: generate:false chained on the
        conversation, on the WS transport only; the next turn that sends the same continues
        it. Best effort: False when nothing went out or it failed."""
        if self.transport != Transport.WS:
            return False
        from .metrics import tokens_for_chars

        self._warm_tokens += tokens_for_chars(sum(len(m.content) for m in request.new_input))
        try:
            async for _ in self._ws.run(request, self.model, self.options.max_tokens,
                                        self._temperature(request), generate=False, warm=True):
                pass
        except (ModelError, ConfigError):
            return False
        return self._ws.warm is not None

    async def steer(self, text: str) -> bool:
        """Send `text` as a correction to the response streaming now (WS mode only; False:
        it could not go). Its answer comes in the stream: a `Steered`."""
        if self.transport != Transport.WS:
            return False
        return await self._ws.steer(text)

    @property
    def warm_counts(self) -> tuple[int, int, int]:
        """(hits, prefix, misses) of drafts' pre-warms (responses_ws.WsSession._after_warm)."""
        return self._ws.warm_hits, self._ws.warm_prefix, self._ws.warm_misses

    async def complete(self, request: TurnRequest) -> Completed:
        result: Completed | None = None
        async for event in self.stream(request):
            if isinstance(event, Completed):
                result = event
            elif isinstance(event, Failed):
                raise event.error
        assert result is not None
        return result

    async def complete_aside(self, request: TurnRequest) -> Completed:
        """`complete` for a request beside the conversation (a commit message): the
        WebSocket's chain stays on the conversation's last response (dropped if the socket
        was reopened meanwhile)."""
        chain, opened = self._ws.previous_id, self._ws.opened
        try:
            return await self.complete(request)
        finally:
            self._ws.previous_id = chain if self._ws.opened == opened else None

    async def stream(self, request: TurnRequest, *, gather: bool = False
                     ) -> AsyncIterator[Event]:
        """Yield events; ends with Completed or Failed. Never raises ModelError. A TextDelta
        per server message; `gather`: per read instead (the text of the messages that came in
        one read, for a consumer that hands text over late anyway)."""
        o = self.options
        rec = RequestRecord(ts=time.time(), model=self.model, transport=self.transport,
                            status=RequestStatus.CANCELLED, task=request.task or o.task,
                            base_host=host_of(self.base_url),
                            request_id=os.urandom(8).hex())
        watch = Stopwatch()
        t_start = self.clock.monotonic()
        emitted = 0
        shown = ""  # the text yielded so far, kept only while a retry replays it
        retries = 0
        tried = [self.model]
        used = [self.transport]  # the transports this request went over
        started = False
        notes: list[str] = []  # what the transport said about the request (a lost chain)
        previous: ModelError | None = None  # the error that led to the current retry
        attempted = False
        try:
            while True:
                transport, model = self.transport, self.model
                parts: list[str] = []
                length = 0
                usage: Usage | None = None
                cut: ModelError | None = None
                response_id = None
                read_s = o.timeout_s
                if retries:  # a retry near the deadline must not run a full timeout past it
                    left = o.retry_deadline_s - (self.clock.monotonic() - t_start)
                    read_s = max(MIN_READ_TIMEOUT_S, min(o.timeout_s, left))
                try:
                    reply = self._attempt(transport, model, request, read_s, watch)
                    if attempted:  # a retry, or another transport or model: timed afresh, from
                        watch.again()  # its start (its client loaded: no part of the server's)
                    attempted = True
                    async with aclosing(reply) as items:
                        async for item in items:
                            if type(item) is Deltas:
                                value = item.texts
                                if not length:  # text came: the server offers it
                                    self._remember(transport)
                                # the text of one read, timed as it came: a retry's replay too
                                # (the attempt's own pace), before any of it is handed on
                                chars = sum(map(len, value))
                                if chars:
                                    first = watch.t_first is None
                                    watch.text(chars)
                                    ttft = watch.ttft_s
                                    if first and ttft is not None:  # said at once (a meter)
                                        yield FirstToken(ttft, watch.attempt)
                                for piece in ("".join(value),) if gather else value:
                                    before = length
                                    length += len(piece)
                                    parts.append(piece)
                                    if before < emitted:  # a retry replays text yielded before
                                        same = _common_prefix(piece, shown[before:emitted])
                                        if same < min(len(piece), emitted - before):
                                            emitted = before + same
                                            shown = shown[:emitted]
                                            yield Rewound(emitted, "the retried response "
                                                          "differs from the text already shown")
                                    if length > emitted:
                                        new = piece[max(0, emitted - before):]
                                        emitted = length
                                        yield TextDelta(new)
                            elif type(item) is Opened:
                                if not started:
                                    started = True
                                    yield Started(rec.request_id or "", transport, model,
                                                  item.url)
                            elif type(item) is Steer:
                                if item.answer.state == SteerState.ACCEPTED and length:
                                    # the reply starts again from the correction
                                    parts, length, emitted, shown = [], 0, 0, ""
                                    yield Rewound(0, "steered: the reply starts again from "
                                                  "the correction")
                                yield item.answer
                            elif type(item) is Finished:
                                usage, cut, response_id = item.usage, item.cut, item.response_id
                            elif type(item) is Note:
                                notes.append(item.text)
                except ModelError as err:
                    rec.http_status = err.status
                    text = "".join(parts)
                    if len(text) >= emitted:  # else this attempt replayed only part of `shown`
                        shown = text[:emitted]
                    change = self._on_error(err, transport, tried)
                    if change is not None:
                        rec.http_status = None  # the next transport or model starts afresh
                        yield change
                        if isinstance(change, ModelChanged):
                            tried.append(self.model)
                        else:
                            used.append(self.transport)
                        continue
                    if isinstance(err, ModelNotFound) and len(tried) > 1:
                        where = err.url or self.base_url
                        err = ModelNotFound(f"none of the models was found at {where}: "
                                            f"{', '.join(tried)}", status=err.status, url=where)
                    retries += 1
                    delay = None
                    elapsed = self.clock.monotonic() - t_start
                    if retries <= o.max_retries:
                        delay = retry_delay(err, retries, elapsed, o.retry_deadline_s,
                                            self._rng)
                    if delay is None:
                        err = await self._mode_missing(err, transport)
                        err.message += give_up_note(err, retries - 1, o.max_retries, elapsed,
                                                    o.retry_deadline_s, previous)
                        rec.model, rec.transport = model, transport
                        self._fill_record(rec, watch, None, None, retries - 1, err)
                        if not isinstance(err, AuthError | ModelNotFound):  # (answered here)
                            self._forget(transport)
                        if isinstance(err, StreamDropped):
                            err.hint = err.drop_hint(self._untried(used))
                        if isinstance(err, AuthError) and o.key_source:
                            err.message += f" [credential used: API key from {o.key_source}]"
                        yield Failed(err, retries=retries - 1, transport=transport)
                        return
                    previous = err
                    yield Retrying(retries, delay, err.kind, transport)
                    await self.clock.sleep(delay)
                    continue
                watch.done()
                text = "".join(parts)
                if usage is None:
                    usage = Usage(0, estimate_tokens(text), estimated=True)
                if transport == Transport.WS:
                    self._ws_failures = 0
                    if not o.persistent_ws:
                        await self._ws.close()
                self._remember(transport)
                rec.model, rec.transport = model, transport
                metrics = watch.metrics(usage.output_tokens)
                cut = errors_map.counted_cut(cut, usage.output_tokens, not usage.estimated)
                done = Completed(response_id, text, usage, metrics, retries=retries, cut=cut,
                                 notes=tuple(notes))
                self._fill_record(rec, watch, done, usage, retries, None)
                yield usage
                yield done
                return
        finally:
            if rec.status == RequestStatus.CANCELLED:  # stopped mid-request: keep what was measured
                rec.model, rec.transport = self.model, self.transport  # the attempt stopped
                fill_stopped(rec, watch, emitted, request)
            if self._ws.warm_used is not None:  # the request met a draft's pre-warm
                rec.extra["prewarm"], self._ws.warm_used = self._ws.warm_used, None
            if self._warm_tokens:  # what the drafts' pre-warms sent before this request
                rec.extra["prewarm_tokens"], self._warm_tokens = self._warm_tokens, 0
            self._record(rec)

    # ---- internals -------------------------------------------------------------------

    def _temperature(self, request: TurnRequest) -> float | None:
        return request.temperature if request.temperature is not None else self.options.temperature

    def _attempt(self, transport: Transport, model: str, request: TurnRequest,
                 read_timeout_s: float, watch: Stopwatch
                 ) -> AsyncGenerator[Item, None]:
        o = self.options
        max_tokens = request.max_tokens if request.max_tokens is not None else o.max_tokens
        temperature = self._temperature(request)
        if transport == Transport.WS:
            return self._ws.run(request, model, max_tokens, temperature,
                                chain=o.persistent_ws, read_timeout_s=read_timeout_s,
                                on_sent=watch.sent)
        url = endpoint_url(self.base_url, transport)
        if transport == Transport.RESPONSES:
            body = sse_body(responses_body(request, model, max_tokens, temperature))
        else:
            body = chat_body(request, model, max_tokens, temperature)
        source = post_sse(self._client(), url, body, api_key=o.api_key, model=model,
                          read_timeout_s=read_timeout_s, on_sent=watch.sent)
        if transport == Transport.RESPONSES:
            return stream_responses(source, url, api_key=o.api_key, model=model)
        return stream_chat(source, url, body, api_key=o.api_key, model=model)

    async def _mode_missing(self, err: ModelError, transport: Transport) -> ModelError:
        """A 404/405 for the mode the transport setting demands: when the API root answers,
        the base URL is right and the server lacks the mode, so say that (not "fix the URL")."""
        demanded = not self._auto and transport in (Transport.WS, Transport.RESPONSES)
        if not (demanded and isinstance(err, EndpointError) and err.status in (404, 405)):
            return err
        try:
            await self.list_models()
        except ModelError:
            return err  # the root does not answer either: the URL hint stands
        return errors_map.mode_not_offered(err, transport)

    def _untried(self, used: list[Transport]) -> list[str]:
        """The transports worth a try after the last of `used` dropped: those this request did
        not use (under auto only those after it: the ones before are missing or failed)."""
        order = list(TRANSPORTS)
        if self._auto:
            order = order[order.index(used[-1]) + 1:]
        return [t.value for t in order if t not in used]

    def _on_error(self, err: ModelError, transport: Transport, tried: list[str]) -> Event | None:
        """A model or transport switch for this error, or None (retry or fail)."""
        if isinstance(err, ModelNotFound) and self._model_index + 1 < len(self._models):
            old = self.model
            self._model_index += 1
            self.reset_chain()
            return ModelChanged(old, self.model, f"model {old!r} not found")
        # a mode not offered, or a WebSocket that broke the protocol (HTTP is tried once)
        not_here = isinstance(err, WsRefused) or (
            transport == Transport.WS and isinstance(err, ProtocolViolation)) or (
            transport == Transport.RESPONSES and isinstance(err, EndpointError)
            and err.status in (404, 405, 501))
        if self._auto and not_here and len(self._candidates) > 1:
            self._candidates.pop(0)
            return TransportChanged(transport, self.transport,
                                    errors_map.fallback_reason(err, transport))
        if transport == Transport.WS and err.retryable:
            self._ws_failures += 1
            if self._ws_failures > self.options.reconnect_attempts:
                self._candidates = [Transport.RESPONSES]
                return TransportChanged(Transport.WS, Transport.RESPONSES,
                                        f"WebSocket failed {self._ws_failures} times ({err.kind})")
        return None

    def _fill_record(self, rec: RequestRecord, watch: Stopwatch, done: Completed | None,
                     usage: Usage | None, retries: int, err: ModelError | None) -> None:
        rec.retries = retries
        if done is not None:
            m = done.metrics
            short = done.shortfall()
            rec.status = RequestStatus.OK if short is None else RequestStatus.CUT
            rec.error_class = None if short is None else short.kind
            rec.http_status = 200
            rec.response_id = done.response_id
            rec.ttft_ms = None if m.ttft_s is None else m.ttft_s * 1000
            rec.duration_ms = m.duration_s * 1000
            rec.tokens_per_s = m.tokens_per_s
        else:
            rec.status = RequestStatus.ERROR
            rec.duration_ms = watch.metrics(0).duration_s * 1000
        if usage is not None:
            rec.input_tokens, rec.output_tokens = usage.input_tokens, usage.output_tokens
            rec.usage_estimated = usage.estimated
        if err is not None:
            rec.error_class = err.kind
            rec.http_status = err.status
        rec.model, rec.transport = self.model, self.transport

    def _record(self, rec: RequestRecord) -> None:
        if self.recorder is not None:
            try:
                self.recorder.record(rec)
            except Exception:  # noqa: BLE001 - a broken store must not break the turn
                pass

    def _remember(self, transport: str) -> None:
        """Keep what the auto probe found for this base URL (not refreshed while it holds,
        so it is probed again after a day)."""
        if not self._auto or self.transport_cache is None or transport == self._recalled:
            return
        offers.remember(self.transport_cache, self.base_url, transport)
        self._recalled = transport

    def _forget(self, transport: str) -> None:
        """The remembered transport failed: probe again next time."""
        if self.transport_cache is not None and transport == self._recalled:
            offers.forget(self.transport_cache, self.base_url)
            self._recalled = None


def _common_prefix(a: str, b: str) -> int:
    """Length of the common prefix of a and b."""
    n = min(len(a), len(b))
    if a[:n] == b[:n]:  # a retry's replay is most often the same text: one compare
        return n
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo
