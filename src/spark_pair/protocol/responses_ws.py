"""Responses API WebSocket mode: one persistent socket, previous_response_id chaining."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable
from contextlib import aclosing
from functools import cache
from typing import TYPE_CHECKING, Any

from ..base.errors import ConfigError, EndpointError, ModelError
from ..base.transport import Transport
from . import errors_map
from .batches import Pacer, ws_reader
from .bodies import responses_body, ws_create
from .fastjson import loads
from .items import Deltas, Finished, Item, Note, Opened, Reopen, ReopenReason, Steer
from .limits import MAX_MESSAGE_BYTES, MAX_REPLY_BYTES, too_large
from .request import BETA_HEADER, CONNECT_STAGGER_S, endpoint_url, user_agent
from .responses_sse import DELTA, delta_text, handle_event
from .steer import Steered, SteerState, is_steered, steer_answer, steer_message

if TYPE_CHECKING:  # websockets loads when a socket opens (the HTTP transports never need it)
    from websockets.asyncio.client import ClientConnection
CHAIN_LOST = ("the server no longer held the previous response (previous_response_not_found): "
              "the conversation was sent again in full")
QUIET_REOPENS = 3  # an idle socket closed by the server is reopened this many times per turn


class WsRefused(EndpointError):
    """The server refused the WebSocket upgrade: WS mode is not offered here."""

    default_hint = ("this endpoint has no Responses WebSocket mode; "
                    "use transport = responses or auto")


def refused(url: str, status: int, body: str, headers: dict[str, str],
            api_key: str | None) -> ModelError:
    """The error for an upgrade answered with `status` instead of 101."""
    if status in (401, 403, 429) or status >= 500 or 300 <= status < 400:
        return errors_map.error_from_response(status, body, url, api_key=api_key, headers=headers)
    return WsRefused(f"the WebSocket upgrade to {url} was refused (HTTP {status}): "
                     f"{errors_map.body_excerpt(body)}", status=status, url=url, body=body)


def ws_url(base_url: str) -> str:
    return endpoint_url(base_url, Transport.WS)


def connect(url: str, **kwargs: Any) -> Any:
    """websockets' `connect` (awaitable), except that a redirect is never followed: it is
    raised as the InvalidStatus it is (the API key must not go to another address unasked),
    and a server that breaks the protocol is not waited on for a closing handshake."""
    connect_class, connection_class = _classes()
    return connect_class(url, create_connection=connection_class, **kwargs)


@cache
def _classes() -> tuple[type, type]:
    from websockets.asyncio.client import ClientConnection
    from websockets.asyncio.client import connect as ws_connect

    class Connect(ws_connect):
        def process_redirect(self, exc: Exception) -> Exception | str:
            return exc

    class AbortingConnection(ClientConnection):
        """A connection that ends its TCP link as soon as the client fails the WebSocket."""

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            # the client failed the connection (RFC 6455, 7.1.7): a frame that breaks the
            # protocol, text that is not UTF-8, a message over max_size; its TCP connection
            # ends now, so a reader hears it at once (not when a server that broke the
            # protocol closes it)
            sent, protocol = self.protocol.close_sent, self.protocol
            failed = sent is not None and sent.code in (*errors_map.WS_FAILED, WS_TOO_BIG) \
                and protocol.close_rcvd is None
            # an upgrade answer that cannot be read (a body over websockets' limit): the
            # handshake waits for the link's end, and the rest of the body is not read
            # (the server may send it for as long as the open timeout)
            unread = protocol.handshake_exc is not None and not self.response_rcvd.done()
            if (failed or unread) and self.transport is not None:
                self.transport.abort()

        def set_connection_exc(self, exc: BaseException | None) -> None:
            super().set_connection_exc(exc)
            if isinstance(exc, UnicodeDecodeError):  # text that is not UTF-8, found on reading
                self.loop.call_soon(self.transport.abort)  # (once its close frame is queued)

    return Connect, AbortingConnection


class WsSocket:
    """One socket, reopened when needed. `previous_id` is the chain on the current socket."""

    def __init__(self, base_url: str, api_key: str | None, *, connect_timeout_s: float,
                 read_timeout_s: float) -> None:
        self.url = ws_url(base_url)
        self.api_key = api_key
        self.connect_timeout_s = connect_timeout_s
        self.read_timeout_s = read_timeout_s
        self.ws: ClientConnection | None = None
        self.previous_id: str | None = None
        self.opened = 0
        self.busy = False  # a response is in flight on self.ws
        # a draft's pre-warm on this socket: (its response id, the body it stands for); the
        # next request with that same body chains on it and sends no input (protocol.warm)
        self.warm: tuple[str, dict[str, Any]] | None = None
        self.warm_hits = 0
        self.warm_prefix = 0  # turns that asked what a pre-warm asked but the last item's tail
        self.warm_misses = 0
        self.warm_used: str | None = None  # "hit" / "prefix" / "miss" of the last request
        self.steering = False  # a correction waits for the server's answer
        self._tls: tuple[Any, list[Any]] | None = None  # (its thread, [the context]): warm_tls

    def warm_tls(self) -> None:
        """For a wss:// URL, make the TLS context in a thread now (its CA load takes tens of ms
        and lets other threads run), so that opening the socket does not make it on the event
        loop: the context websockets makes itself (ssl.create_default_context())."""
        if self._tls is not None or not self.url.startswith("wss://"):
            return
        import threading

        made: list[Any] = []  # the context, or the error of a CA bundle that cannot load
        thread = threading.Thread(target=lambda: made.append(errors_map.tls_context()),
                                  name="ws-tls", daemon=True)
        thread.start()
        self._tls = (thread, made)

    async def open(self) -> None:
        from websockets.exceptions import InvalidHandshake, InvalidStatus

        headers = [BETA_HEADER]
        if self.api_key:
            headers.append(("Authorization", f"Bearer {self.api_key}"))
        tls: dict[str, Any] = {}
        if self._tls is not None:  # (made by now, or its thread is near its end)
            self._tls[0].join()
            tls = {"ssl": self._tls[1][0]} if self._tls[1] else {}
        elif self.url.startswith("wss://"):
            tls = {"ssl": errors_map.tls_context()}
        if isinstance(tls.get("ssl"), ConfigError):
            raise tls["ssl"]
        try:
            self.ws = await connect(self.url, additional_headers=headers, **tls,
                                    max_size=MAX_MESSAGE_BYTES,
                                    compression=None, open_timeout=self.connect_timeout_s,
                                    proxy=None, user_agent_header=user_agent(),
                                    happy_eyeballs_delay=CONNECT_STAGGER_S)
        except InvalidStatus as exc:
            resp = exc.response
            body = bytes(resp.body or b"").decode("utf-8", "replace")
            raise refused(self.url, resp.status_code, body, dict(resp.headers),
                          self.api_key) from None
        except InvalidHandshake as exc:
            raise WsRefused(f"the WebSocket handshake with {self.url} failed: "
                            f"{errors_map.handshake_failed(exc)}",
                            url=self.url) from None
        except TimeoutError:
            raise errors_map.connect_timeout(self.url, self.connect_timeout_s) from None
        except OSError as exc:
            raise errors_map.connection_failed(exc, self.url) from None
        self.opened += 1
        self.previous_id = None
        self.warm = None

    async def close(self, only: ClientConnection | None = None) -> None:
        """Close the socket (or `only` that one, if it is still current or already replaced)."""
        ws = only or self.ws
        if ws is self.ws:
            self.ws, self.previous_id, self.busy, self.warm = None, None, False, None
        if ws is not None:
            try:
                await asyncio.wait_for(ws.close(), 1.0)
            except Exception:  # noqa: BLE001 - closing a broken socket may fail any way
                pass
            transport = getattr(ws, "transport", None)
            if transport is not None:  # a close handshake cut at its 1 s leaves the socket open
                transport.abort()

    def _alive(self) -> bool:
        return self.ws is not None and self.ws.close_code is None and \
            self.ws.state.name == "OPEN"

    async def run(self, request, model: str, max_tokens: int | None, temperature: float | None,
                  *, chain: bool = True, generate: bool = True, warm: bool = False,
                  read_timeout_s: float | None = None,
                  on_sent: Callable[[], None] | None = None
                  ) -> AsyncGenerator[Item, None]:
        """One turn: Opened, Deltas (the deltas of the messages of one read, in order), then
        Finished.

        `read_timeout_s` below the socket's own caps this turn's (a retry near the deadline).
        `on_sent()` is called as this turn's request is written on an open socket (again if it is
        written again on a new one).
        `warm`: a draft's pre-warm (generate: false, chained on the conversation, which it
        leaves as it was); the next request with the same body continues it instead.
        """
        for _ in range(QUIET_REOPENS + 1):
            if self.busy:  # an earlier stream was abandoned mid-response: its socket is spent
                await self.close()
            if not self._alive():
                await self.close()
                await self.open()
            use_chain = chain and self.previous_id is not None and bool(request.history)
            body = responses_body(request, model, max_tokens, temperature, full=not use_chain)
            if use_chain:
                body["previous_response_id"] = self.previous_id
            conversation, asked = self.previous_id, body
            if not generate:
                body = {**body, "generate": False}
            else:
                body = self._after_warm(body)
            assert self.ws is not None
            message = ws_create(body)
            if on_sent is not None:  # before the write: the server's clock never starts first
                on_sent()
            try:
                self.busy = True
                await self.ws.send(message)
            except _closed_errors() as exc:
                await self.close()
                if closed_for_size(exc):  # a message over the limit came before the request went
                    raise too_large(self.url, "a WebSocket message", MAX_MESSAGE_BYTES) from None
                continue
            yield Opened(self.url)
            outcome = None
            async with aclosing(self._receive(model, read_timeout_s)) as items:
                async for item in items:
                    if isinstance(item, Reopen):
                        outcome = item.reason
                        break
                    if type(item) is Finished and warm and item.response_id:
                        self.warm, self.previous_id = (item.response_id, asked), conversation
                    yield item
                    if type(item) is Finished:
                        return
            if outcome == ReopenReason.CHAIN_LOST:  # sent again whole (it holds the history)
                self.previous_id = None
                yield Note(CHAIN_LOST)
                continue
            await self.close()
        raise errors_map.dropped(self.url, "the server kept closing the WebSocket")

    async def steer(self, text: str) -> bool:
        """Send a correction to the response in flight (False: none is in flight, or the
        socket is gone); its answer comes with the response's events."""
        if not self.busy or not self._alive():
            return False
        assert self.ws is not None
        try:
            await self.ws.send(steer_message(text))
        except _closed_errors():
            return False
        self.steering = True
        return True

    def _after_warm(self, body: dict[str, Any]) -> dict[str, Any]:
        """The body to send: the pre-warmed one's continuation when it asks the same (a hit),
        else `body`: a "prefix" when only its last item differs (the server read the rest with
        the pre-warm: its prompt cache holds it), else a miss."""
        warm, self.warm = self.warm, None
        if warm is None:
            return body
        warm_id, warmed = warm
        if warmed != body:
            if _same_but_last_item(warmed, body):
                self.warm_prefix += 1
                self.warm_used = "prefix"
            else:
                self.warm_misses += 1
                self.warm_used = "miss"
            return body
        self.warm_hits += 1
        self.warm_used = "hit"
        rest = {k: v for k, v in body.items() if k not in ("input", "previous_response_id")}
        return {**rest, "input": [], "previous_response_id": warm_id}

    async def _receive(self, model: str, read_timeout_s: float | None = None
                       ) -> AsyncGenerator[Item | Reopen, None]:
        wait_s = self.read_timeout_s
        capped = read_timeout_s is not None and read_timeout_s < wait_s
        if read_timeout_s is not None and capped:
            wait_s = read_timeout_s

        ws = self.ws
        assert ws is not None
        closed = _closed_errors()
        recv = ws_reader(ws, Pacer())
        started = False
        done = False
        received = 0  # the reply's bytes so far
        quiet = _Quiet(wait_s)
        clock = quiet.loop.time
        try:
            while True:
                quiet.since, quiet.waiting = clock(), True
                try:
                    batch = await recv()
                except asyncio.CancelledError:
                    if quiet.timed_out():
                        raise errors_map.timeout(self.url, wait_s, capped) from None
                    raise
                except closed as exc:
                    broken = errors_map.ws_broken(exc, self.url)
                    if broken is not None:  # not a drop: the same would come again
                        raise broken from None
                    if closed_for_size(exc):  # the client's own limit: said as such, never retried
                        raise too_large(self.url, "a WebSocket message",
                                        MAX_MESSAGE_BYTES) from None
                    if not started:
                        done = True
                        yield Reopen(ReopenReason.CLOSED)
                        return
                    raise errors_map.dropped(self.url) from None
                quiet.waiting = False
                texts: list[str] = []  # the deltas of this read so far
                for raw in batch:
                    received += len(raw)
                    if received > MAX_REPLY_BYTES:
                        raise too_large(self.url, "a reply", MAX_REPLY_BYTES)
                    try:
                        if type(raw) is not str:  # the API's messages are text, never binary
                            raise TypeError
                        event = loads(raw)
                        kind = event.get("type")
                    except (ValueError, TypeError, AttributeError):
                        if texts:
                            yield Deltas(texts)
                        raise errors_map.odd_event(self.url, raw, "a binary WebSocket message"
                                                   if isinstance(raw, bytes) else "a message"
                                                   ) from None
                    if kind == DELTA:  # the hot path: a delta per server message
                        started = True
                        delta = event.get("delta")
                        if type(delta) is not str:
                            if texts:  # the text before it goes first
                                yield Deltas(texts)
                                texts = []
                            delta = delta_text(delta, self.url)
                        texts.append(delta)
                        continue
                    if texts:  # the text before this event goes first
                        yield Deltas(texts)
                        texts = []
                    if self.steering or kind == "response.incomplete" or (
                            type(kind) is str and kind.startswith("response.steer")):
                        answer = steer_answer(event, self.steering)
                        if answer is not None:
                            self.steering = answer.state == SteerState.PENDING
                            if answer.state != SteerState.ACCEPTED:  # (said at the rewind)
                                yield Steer(answer)
                            continue
                        if is_steered(event):  # a response chained on it answers next
                            self.steering = False
                            yield Steer(Steered(SteerState.ACCEPTED))
                            continue
                    if kind == "error":
                        error = event.get("error")
                        code = error.get("code") if isinstance(error, dict) else None
                        if code == "websocket_connection_limit_reached" and not started:
                            done = True
                            yield Reopen(ReopenReason.LIMIT)
                            return
                        if code == "previous_response_not_found" and not started:
                            done = True
                            yield Reopen(ReopenReason.CHAIN_LOST)
                            return
                        if code == "websocket_connection_limit_reached":
                            raise errors_map.dropped(self.url, "the server closed the WebSocket")
                        done = True  # an error event ends the response; the socket stays usable
                    elif kind == "response.failed":
                        done = True  # so does a failed response (raised just below)
                    item = handle_event(event, self.url, model, self.api_key)
                    if item is None:
                        continue
                    started = True
                    if type(item) is Finished:
                        self.previous_id = item.response_id
                        done = True
                        yield item
                        return
                if texts:
                    yield Deltas(texts)
        except ModelError:
            raise
        finally:
            quiet.close()
            if not done:  # cancelled, dropped or timed out mid-response: the socket is spent
                await self.close(ws)
            elif ws is self.ws:
                self.busy = False


def _same_but_last_item(warmed: dict[str, Any], body: dict[str, Any]) -> bool:
    """Whether `body` asks what `warmed` asked except for its last input item's text."""
    a, b = warmed.get("input") or [], body.get("input") or []
    rest = {k for k in (*warmed, *body) if k != "input"}
    return (bool(a) and len(a) == len(b) and a[:-1] == b[:-1]
            and a[-1].get("role") == b[-1].get("role")
            and all(warmed.get(k) == body.get(k) for k in rest))


WS_TOO_BIG = 1009  # the close code of a client that got a message over its max_size


def closed_for_size(exc: BaseException) -> bool:
    """Whether the client closed the connection for a message over its max_size (1009)."""
    sent = getattr(exc, "sent", None)
    return getattr(sent, "code", None) == WS_TOO_BIG


def _closed_errors() -> tuple[type[BaseException], ...]:
    """What a connection's recv/send raise once it has closed."""
    from websockets.exceptions import ConnectionClosed

    return (ConnectionClosed,)


class _Quiet:
    """A stream's read timeout: the reading task is cancelled once one `recv` has waited
    `limit` s. One timer per quiet period, not one per message (at 1,000+ tok/s a timer per
    message costs more than reading the message)."""

    def __init__(self, limit: float) -> None:
        self.loop = asyncio.get_running_loop()
        self.task = asyncio.current_task()
        self.base = self.task.cancelling() if self.task is not None else 0
        self.limit = limit
        self.since = self.loop.time()  # when the current recv began
        self.waiting = False  # set around each recv by the reader
        self.fired = False
        self._timer = self.loop.call_at(self.since + limit, self._check)

    def _check(self) -> None:
        now = self.loop.time()
        due = self.since + self.limit if self.waiting else now + self.limit
        if now < due:
            self._timer = self.loop.call_at(due, self._check)
        elif self.task is not None:
            self.fired = True
            self.task.cancel()

    def timed_out(self) -> bool:
        """Whether a CancelledError came from this timeout alone (then it is taken back)."""
        if not self.fired or self.task is None:
            return False
        self.fired = False
        return self.task.uncancel() <= self.base

    def close(self) -> None:
        self._timer.cancel()
