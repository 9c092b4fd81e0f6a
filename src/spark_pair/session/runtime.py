"""Opening a repository for turns: settings -> store -> client -> watcher -> workspace -> session.

    async with open_runtime(root, overrides={...}, approver=approver, prewarm=True) as rt:
        async for event in rt.session.turn(prompt, files): ...

Every front end (`run`, `demo`, `watch`, the app) opens a repository this way (docs/seam.md).
`rt.connection` follows the client's events (connected, reconnecting n/m, fell back to HTTP)
for a status line. Nothing here prints: warnings go to the `warn` callback.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from ..base import dirs
from ..base.errors import (
    AuthError,
    BadRequest,
    ConnectionFailed,
    EndpointError,
    IncompleteReply,
    ModelError,
    ModelNotFound,
    ProtocolError,
    RateLimited,
    ServerError,
    StreamDropped,
    StreamTimeout,
)
from ..protocol.events import (
    Completed,
    Event,
    Failed,
    Message,
    Retrying,
    Started,
    TextDelta,
    Transport,
    TransportChanged,
    TurnRequest,
)
from .approval import Approver
from .events import TurnFinished
from .parts import TurnRecorder
from .session import Session

if TYPE_CHECKING:
    from ..base.config import Settings
    from ..protocol.client import ModelClient
    from ..protocol.records import RequestRecord
    from ..store.verdicts import Verdict
    from ..telemetry import Telemetry
    from ..workspace import Watcher, Workspace
    from ..workspace.autocontext import AutoContext
    from .prewarm import DraftWarmer

log = logging.getLogger(__name__)


class ConnectionStatus(StrEnum):
    IDLE = "idle"  # nothing sent yet
    CONNECTING = "connecting"  # pre-warming or the first request is on its way
    CONNECTED = "connected"
    RECONNECTING = "reconnecting"  # a retry is scheduled: `attempt` of `attempts`
    FELL_BACK = "fell_back"  # the first transport failed or is not offered: `transport` now
    FAILED = "failed"  # the link failed (refused, dropped, timed out): `reason`
    ANSWERED_ERROR = "answered_error"  # the server answered with an error: `reason` says which


@dataclass(slots=True)
class ConnectionState:
    """The model connection as a status line shows it; updated live from the client's events."""

    transport: Transport
    state: ConnectionStatus = ConnectionStatus.IDLE
    attempt: int = 0  # while RECONNECTING
    attempts: int = 0  # the retry budget of one request
    # why the last change happened (FELL_BACK, RECONNECTING, FAILED), or the error the server
    # answered with, in a few words (ANSWERED_ERROR: "key refused")
    reason: str = ""
    _subs: list[Callable[[ConnectionState], Any]] = field(default_factory=list, init=False,
                                                         repr=False, compare=False)

    def reset(self, transport: Transport, attempts: int) -> None:
        """A new client: nothing sent on it yet."""
        self.attempts = attempts
        self._set(transport, ConnectionStatus.IDLE, "")

    def subscribe(self, callback: Callable[[ConnectionState], Any]) -> Callable[[], None]:
        """Call `callback(state)` after every change; returns an unsubscribe function."""
        self._subs.append(callback)
        return lambda: self._subs.remove(callback) if callback in self._subs else None

    def observe(self, event: Event) -> None:
        """Follow one protocol event (the session calls this for each, on the loop)."""
        if isinstance(event, TextDelta):  # the hot path: nothing changes
            return
        match event:
            case Started(transport=transport):
                fell = self.state == ConnectionStatus.FELL_BACK or transport != self.transport
                self._set(transport, ConnectionStatus.FELL_BACK if fell
                          else ConnectionStatus.CONNECTED, self.reason if fell else "")
            case Retrying(attempt=attempt, reason=reason):
                self._set(self.transport, ConnectionStatus.RECONNECTING, reason, attempt)
            case TransportChanged(new=new, reason=reason):
                self._set(new, ConnectionStatus.FELL_BACK, reason)
            case Completed():
                if self.state != ConnectionStatus.FELL_BACK:
                    self._set(self.transport, ConnectionStatus.CONNECTED, "")
            case Failed(error=error):
                self._failed(error)

    def _failed(self, error: ModelError) -> None:
        """Only a broken link is a failed connection: an error the server answered with (a
        refused key, an unknown model) says so, and a cut reply came over a working one."""
        match error:
            case ConnectionFailed() | StreamTimeout() | StreamDropped():
                self._set(self.transport, ConnectionStatus.FAILED, error.message)
            case IncompleteReply():
                self._set(self.transport, ConnectionStatus.CONNECTED, "")
            case _:
                words = next((w for cls, w in ANSWERED if isinstance(error, cls)), "error")
                self._set(self.transport, ConnectionStatus.ANSWERED_ERROR, words)

    def _set(self, transport: Transport, state: ConnectionStatus, reason: str,
             attempt: int = 0) -> None:
        new = (transport, state, reason, attempt)
        if new == (self.transport, self.state, self.reason, self.attempt):
            return
        self.transport, self.state, self.reason, self.attempt = new
        for callback in list(self._subs):
            try:
                callback(self)
            except Exception:  # noqa: BLE001 - a broken status line must not break a turn
                log.exception("a connection-state callback failed")


# the server's answer, in the few words a status line has room for (first match wins)
ANSWERED: tuple[tuple[type[ModelError], str], ...] = (
    (AuthError, "key refused"),
    (ModelNotFound, "model not found"),
    (EndpointError, "URL not found"),
    (RateLimited, "rate limited"),
    (ServerError, "server error"),
    (BadRequest, "request refused"),
    (ProtocolError, "not an API reply"),
)


class StoreWriter:
    """The request log, opened on the first record and written from one worker thread (SQLite
    stays off the event loop and on one thread); a broken store never fails a turn."""

    def __init__(self, warn: Callable[[str], None], path: Path | None = None) -> None:
        self.warn = warn
        self.path = path
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="spark-pair-store")
        self._store: Any = None
        self._failed = False
        self._opening = False

    def open_soon(self) -> None:
        """Open the store in its thread now (once a request is out), not with the first record."""
        if not self._opening:
            self._opening = True
            self._pool.submit(self._ensure_open)

    def record(self, rec: RequestRecord) -> None:
        self._pool.submit(self._write, rec)

    def record_verdicts(self, turn_id: str, model: str, verdicts: Sequence[Verdict]) -> None:
        self._pool.submit(self._keep, lambda store: store.record_verdicts(turn_id, model,
                                                                          verdicts))

    def record_form(self, turn_id: str, model: str, form: Any) -> None:
        """Keep how well-formed a reply's diff was (store.forms.Form)."""
        self._pool.submit(self._keep, lambda store: store.record_form(turn_id, model, form))

    def record_round(self, rnd: Any) -> None:
        """Keep a task's round (store.rounds.Round) for `spark-pair stats`."""
        self._pool.submit(self._keep, lambda store: store.record_round(rnd))

    def record_rollback(self, turn_id: str) -> None:
        """A turn applied, then rolled back after its check (stats: not an applied turn)."""
        self._pool.submit(self._keep, lambda store: store.record_rollback(turn_id))

    def record_undo(self, turn_id: str, undone: bool = True) -> None:
        """A turn applied, then undone by the user (stats: not an applied turn); `undone`
        False: written again by /redo."""
        self._pool.submit(self._keep, lambda store: store.record_undo(turn_id, undone))

    def _ensure_open(self) -> None:
        if self._store is None and not self._failed:
            self._store = self._open()

    def _write(self, rec: RequestRecord) -> None:
        self._keep(lambda store: store.record(rec))

    def _keep(self, write: Callable[[Any], None]) -> None:
        self._ensure_open()
        if self._store is not None:
            try:
                write(self._store)
            except Exception as exc:  # noqa: BLE001 - the log is not worth failing a turn
                self.warn(f"could not write the request log ({exc})")

    def _open(self) -> Any:
        import sqlite3

        from ..base.errors import SparkPairError
        from ..store import RequestStore

        try:
            return RequestStore(self.path)
        except (OSError, sqlite3.Error, SparkPairError) as exc:
            self._failed = True
            self.warn(f"request log unavailable ({exc}); continuing without it")
            return None

    def flush(self) -> None:
        """Wait for the pending writes (each one is committed once it returns)."""
        self._pool.submit(lambda: None).result()

    def close(self) -> None:
        """Wait for the pending writes, then close the store."""
        self._pool.submit(self._close)
        self._pool.shutdown(wait=True)

    def _close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None


@dataclass(slots=True)
class Runtime:
    root: Path
    settings: Settings
    session: Session
    client: ModelClient
    watcher: Watcher | None
    workspace: Workspace
    connection: ConnectionState
    store: StoreWriter
    prewarming: asyncio.Task[None] | None = None
    lookup: _Lookup | None = None  # how the settings were found (for `switch`)
    drafts: DraftWarmer | None = None  # pre-warms the prompt being typed (session.prewarm)
    telemetry: Telemetry | None = None  # when [telemetry] turns it on

    async def warmed_socket(self) -> None:
        """Wait for the start-up pre-warm request (one response at a time per socket)."""
        if self.prewarming is not None and not self.prewarming.done():
            await asyncio.wait({self.prewarming})

    async def warmed(self) -> None:
        """Wait for the pre-warm requests in flight (one response at a time per socket)."""
        await self.warmed_socket()
        if self.drafts is not None:
            await self.drafts.settled()

    def warm_drafts(self, delay_ms: int | None = None) -> DraftWarmer:
        """Pre-warm drafts from now on (`delay_ms` None: `[session] prewarm_ms`)."""
        from .prewarm import DraftWarmer

        if self.drafts is None:
            ms = self.settings.session.prewarm_ms if delay_ms is None else delay_ms
            self.drafts = DraftWarmer(self, ms)
            self.session.ready = self.warmed
        return self.drafts

    async def switch(self, overrides: Mapping[str, str]) -> None:
        """Talk to another model, or over another transport: the settings are loaded again with
        `overrides` on top (in a thread) and a new client replaces the old one (pre-warmed
        again if this runtime was). The session, its history, what the model saw and was told
        about the last review, the prepared files, the watcher and the request log stay.
        Raises ConfigError (and TurnInProgress while a turn runs); then nothing changed."""
        from ..base.errors import TurnInProgress

        if self.session.running:
            raise TurnInProgress("a turn is running", hint="finish or stop it first")
        assert self.lookup is not None
        lookup = self.lookup.with_overrides(overrides)
        settings, client = await asyncio.to_thread(_connect, lookup, self.session.recorder)
        prewarm = self.prewarming is not None
        await self._stop_prewarm()
        old, self.client, self.settings, self.lookup = self.client, client, settings, lookup
        self.session.client = client
        self.session.repair = settings.review.repair
        self.connection.reset(client.transport, client.options.max_retries)
        try:
            await old.aclose()
        finally:
            if prewarm:
                self.prewarming = asyncio.create_task(_prewarm(self))

    async def _stop_prewarm(self) -> None:
        if self.prewarming is not None and not self.prewarming.done():
            self.prewarming.cancel()
            await asyncio.gather(self.prewarming, return_exceptions=True)


class _Lookup(NamedTuple):
    """Where and how settings are loaded."""

    cwd: Path
    env: Mapping[str, str] | None
    overrides: Mapping[str, str]

    def with_overrides(self, more: Mapping[str, str]) -> _Lookup:
        return _Lookup(self.cwd, self.env, {**self.overrides, **more})


def _connect(lookup: _Lookup, recorder: TurnRecorder | None) -> tuple[Settings, ModelClient]:
    """The settings and a model client for them (blocking: config files, the transport
    memo)."""
    from ..base.config import load_settings
    from ..protocol import offers
    from ..protocol.client import ClientOptions, ModelClient

    settings = load_settings(cwd=lookup.cwd, env=lookup.env, overrides=dict(lookup.overrides))
    client = ModelClient(ClientOptions.of(settings), recorder=recorder,
                         transport_cache=offers.default_path())
    client.warm_http()  # built while the run gets ready, not when its request is due
    return settings, client


@contextlib.asynccontextmanager
async def open_runtime(root: Path, *, approver: Approver,
                       overrides: Mapping[str, str] | None = None,
                       env: Mapping[str, str] | None = None, cwd: Path | None = None,
                       prewarm: bool = False, watch: bool = True,
                       warn: Callable[[str], None] | None = None,
                       store_path: Path | None = None) -> AsyncIterator[Runtime]:
    """Open `root` for turns. `cwd` is where settings are looked up from (default: root);
    `prewarm` opens the WebSocket in the background (for a front end that waits for a prompt);
    `watch` starts the file watcher once the first request is out. Raises ConfigError.
    Settings are loaded in a thread: the event loop never waits for the config files."""
    from ..workspace.context import Workspace, limits_of

    say = warn or log.warning
    root = Path(root)
    lookup = _Lookup(cwd or root, env, dict(overrides or {}))
    store = StoreWriter(say, store_path)
    recorder = TurnRecorder(store)
    try:
        settings, client = await asyncio.to_thread(_connect, lookup, recorder)
        telemetry = _telemetry(settings, say, recorder, one_shot=not watch)
        rt: Runtime | None = None
        try:
            connection = ConnectionState(client.transport,
                                         attempts=client.options.max_retries)
            watcher = None
            if watch:  # (the watcher's module loads only for a runtime that watches)
                from ..workspace.watcher import Watcher

                watcher = Watcher(root)
            workspace = Workspace(root, **limits_of(settings))
            # (its index's database opens off the loop, while the HTTP client is built)
            workspace.auto = await asyncio.to_thread(_auto_context, root, settings)
            workspace.watcher = watcher
            indexing = _keep_index(workspace, watcher)
            workspace.chained = lambda: session.client.transport == Transport.WS

            def observe(event: Event | TurnFinished) -> None:
                if isinstance(event, TurnFinished):
                    if telemetry is not None:
                        telemetry.finished(event.result)
                    return
                if telemetry is not None and isinstance(event, Retrying):
                    telemetry.retried(event)
                connection.observe(event)
                if isinstance(event, Started):  # the request is out: open the log meanwhile
                    store.open_soon()

            session = Session(root, client, approver, workspace=workspace, recorder=recorder,
                              watch=watcher.watch if watcher is not None else None,
                              observe=observe)
            session.repair = settings.review.repair
            rt = Runtime(root, settings, session, client, watcher, workspace, connection, store,
                         lookup=lookup, telemetry=telemetry)
            if prewarm:
                rt.prewarming = asyncio.create_task(_prewarm(rt))
                session.ready = rt.warmed
            try:
                yield rt
            finally:
                if rt.drafts is not None:
                    await rt.drafts.close()
                await rt._stop_prewarm()
                if watcher is not None:
                    await watcher.stop()
                if indexing is not None:
                    await asyncio.gather(indexing, return_exceptions=True)
        finally:
            await (client if rt is None else rt.client).aclose()  # the one in use now
            if telemetry is not None:
                await asyncio.to_thread(telemetry.end)
    finally:
        await asyncio.to_thread(store.close)


def _telemetry(settings: Settings, warn: Callable[[str], None], recorder: TurnRecorder,
               one_shot: bool) -> Telemetry | None:
    """The process's telemetry when [telemetry] or OTEL_METRICS_EXPORTER turn it on (else its
    package never loads): it sees the request records and verdicts (beside the request log),
    the protocol events and each finished turn. A one-shot runtime (no watcher: `run`) pushes
    its figures when it ends; one that waits for prompts (watch, the app) serves /metrics."""
    if not (settings.telemetry.enabled or settings.env.get("OTEL_METRICS_EXPORTER")):
        return None
    from ..telemetry import Tee, start

    telemetry = start(settings, warn, command="run" if one_shot else None, serve=not one_shot)
    if telemetry is not None:
        recorder.store = Tee(recorder.store, telemetry)
        telemetry.session_started()
    return telemetry


def _auto_context(root: Path, settings: Settings) -> AutoContext | None:
    """The automatic context [context] asks for, its index cached in the data folder."""
    from ..workspace.autocontext import auto_context_of

    return auto_context_of(root, settings, dirs.data_dir())


def _keep_index(workspace: Workspace, watcher: Watcher | None) -> asyncio.Task[None] | None:
    """With a watcher (a front end that waits for prompts): build the index (and read the
    recent history) in the background now, and read again each file the watcher reports.
    Returns the first build's task."""
    auto = workspace.auto
    if auto is None or watcher is None:
        return None

    def changed(rels: set[str]) -> None:
        asyncio.get_running_loop().run_in_executor(None, auto.changed, rels)

    watcher.subscribe(changed)
    return asyncio.create_task(asyncio.to_thread(auto.warm))


async def _prewarm(rt: Runtime) -> None:
    """Open the WebSocket and let the server prepare (generate: false) before the first turn;
    load the turn's code meanwhile (it would otherwise load between enter and the request)."""
    import importlib

    def load() -> None:
        for name in ("turn", "frames"):
            importlib.import_module(f"{__package__}.{name}")

    loading = asyncio.create_task(asyncio.to_thread(load))
    try:
        await _open_socket(rt)
    finally:
        await asyncio.gather(loading, return_exceptions=True)


async def _open_socket(rt: Runtime) -> None:
    conn = rt.connection
    if rt.client.transport != Transport.WS:
        return
    conn._set(conn.transport, ConnectionStatus.CONNECTING, "")
    request = TurnRequest(rt.workspace.system_prompt, [Message("user", "(warming up)")])
    opened = rt.client.connection_count
    try:
        await rt.client.prewarm(request)  # best effort: it reports no model error
    except Exception as exc:  # noqa: BLE001 - a bug below: the first turn reports it properly
        log.warning("pre-warming the connection failed: %r", exc)
    # the warm-up exchange is no part of the conversation: a turn after a switch (with history)
    # must send its history whole, not continue the warm-up response
    rt.client.reset_chain()
    if rt.client.transport != Transport.WS:  # the server refused the WebSocket
        conn._set(rt.client.transport, ConnectionStatus.FELL_BACK,
                  "the WebSocket mode is not offered here")
    elif conn.state == ConnectionStatus.CONNECTING:
        up = rt.client.connection_count > opened
        conn._set(conn.transport, ConnectionStatus.CONNECTED if up else ConnectionStatus.IDLE,
                  "" if up else "could not open the WebSocket ahead of the first turn")
