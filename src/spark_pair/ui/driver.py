"""The app's one adapter to the session seam (docs/seam.md).

    driver = Driver(root, target=screen, overrides={...})
    await driver.open()                      # settings, client, watcher, session; pre-warm
    screen.run_worker(driver.run_turn(prompt, files), group="turn")
    driver.approver.resolve(index, decision) # from the review pane
    driver.cancel()                          # escape
    await driver.close()

A turn runs in a Textual worker on the app's event loop (asyncio, never a thread). Its events
are handed to the screen in frames: one `Driver.Frame` message per interval (1/30 s), at once
when a frame holds a proposal, a stale report, a failure or the end of the turn. Approvals are
futures: one per operation index, replaced when the session asks again about the same index.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from textual.message import Message
from textual.message_pump import MessagePump

from ..approval import Decision
from ..errors import SparkPairError
from ..protocol.events import Failed, Retrying, Rewound, Started, TextDelta, TransportChanged
from ..session_events import OperationProposed, Stale, TurnFinished

FRAME_S = 1 / 30
URGENT = (OperationProposed, Stale, Failed, TurnFinished)


class UIApprover:
    """Decisions come from a person: `decide` waits on a future the review pane resolves."""

    def __init__(self) -> None:
        self._futures: dict[int, asyncio.Future[Decision]] = {}
        self._early: dict[int, Decision] = {}  # decided before the session asked
        self._index: dict[int, int] = {}  # id(operation) -> its index in the turn

    def register(self, index: int, op: object) -> None:
        """The index of a proposed operation (the session asks about the operation itself)."""
        self._index[id(op)] = index

    async def decide(self, proposal: Any) -> Decision:
        index = self._index_of(proposal)
        early = self._early.pop(index, None)
        if early is not None:
            return early
        future: asyncio.Future[Decision] = asyncio.get_running_loop().create_future()
        old = self._futures.get(index)
        if old is not None and not old.done():
            old.cancel()
        self._futures[index] = future
        try:
            return await future
        finally:
            if self._futures.get(index) is future:
                del self._futures[index]

    def _index_of(self, proposal: Any) -> int:
        index = getattr(proposal, "index", None)  # a Proposal carries its index
        return index if isinstance(index, int) else self._index[id(proposal)]

    def resolve(self, index: int, decision: Decision) -> None:
        future = self._futures.get(index)
        if future is None or future.done():
            self._early[index] = decision
        else:
            future.set_result(decision)

    def pending(self) -> list[int]:
        return sorted(i for i, f in self._futures.items() if not f.done())

    def reset(self) -> None:
        for future in self._futures.values():
            future.cancel()
        self._futures.clear()
        self._early.clear()
        self._index.clear()


@dataclass(frozen=True, slots=True)
class Connection:
    """What the header shows about the transport."""

    transport: str  # ws | responses | chat | auto (not connected yet)
    state: str  # idle | connecting | connected | reconnecting | fell back | failed
    attempt: int = 0
    attempts: int = 0
    detail: str = ""


class _Frames:
    """Collects a turn's events; `take()` hands over what arrived since the last call."""

    def __init__(self, on_event: Callable[[Any], None]) -> None:
        self.on_event = on_event  # sees each event as it arrives
        self.events: list[Any] = []
        self.text: list[str] = []
        self.partial = ""  # the diff line being written

    def add(self, event: Any) -> bool:
        """Add one event; True when the frame should go at once."""
        self.on_event(event)
        self.events.append(event)
        if isinstance(event, TextDelta):
            self.text.append(event.text)
            head, sep, tail = event.text.rpartition("\n")
            self.partial = tail if sep else self.partial + tail
        elif isinstance(event, Rewound):
            self.partial = ""
        return isinstance(event, URGENT)

    def take(self) -> tuple[list[Any], str, str] | None:
        if not self.events:
            return None
        out = (self.events, "".join(self.text), self.partial)
        self.events, self.text = [], []
        return out


class Driver:
    """Opens the repository for the app and runs its turns."""

    class Frame(Message, bubble=False):
        """The events of one interval of a turn, in order."""

        def __init__(self, events: Sequence[Any], text: str, partial_line: str) -> None:
            super().__init__()
            self.events = events
            self.text = text
            self.partial_line = partial_line

    class Opened(Message, bubble=False):
        """The repository is open: settings and session are ready."""

        def __init__(self, model: str, transport: str) -> None:
            super().__init__()
            self.model = model
            self.transport = transport

    class OpenFailed(Message, bubble=False):
        def __init__(self, error: SparkPairError) -> None:
            super().__init__()
            self.error = error

    class ConnectionChanged(Message, bubble=False):
        def __init__(self, connection: Connection) -> None:
            super().__init__()
            self.connection = connection

    class FilesChanged(Message, bubble=False):
        """Files changed on disk (the watcher's batch)."""

        def __init__(self, paths: set[str]) -> None:
            super().__init__()
            self.paths = paths

    class AIComments(Message, bubble=False):
        """New `AI!` comments were saved."""

        def __init__(self, comments: list[Any]) -> None:
            super().__init__()
            self.comments = comments

    def __init__(self, root: Path, target: MessagePump, *, overrides: Mapping[str, str] | None
                 = None, env: Mapping[str, str] | None = None, prewarm: bool = True) -> None:
        self.root = Path(root)
        self.target = target
        self.overrides = dict(overrides or {})
        self.env = env
        self.prewarm = prewarm
        self.approver = UIApprover()
        self.settings: Any = None
        self.session: Any = None
        self.client: Any = None
        self.watcher: Any = None
        self.running = False
        self.connection = Connection("auto", "idle")
        self._stack: contextlib.AsyncExitStack | None = None
        self._prewarm_task: asyncio.Task[None] | None = None

    # ---- opening and closing -------------------------------------------------------------

    async def open(self) -> None:
        """Open settings, client, watcher and session. Errors are posted, never raised."""
        try:
            await self._open()
        except SparkPairError as exc:
            await self.close()
            self.target.post_message(self.OpenFailed(exc))
            return
        self.target.post_message(self.Opened(self.client.model, self.settings.session.transport))
        if self.prewarm:
            self._prewarm_task = asyncio.create_task(self._prewarm())

    async def _open(self) -> None:
        from ..config import load_settings

        self.settings = await asyncio.to_thread(load_settings, self.root, self.env,
                                                self.overrides)
        stack = contextlib.AsyncExitStack()
        self._stack = stack
        self.session, self.client, self.watcher = await _open_chain(
            stack, self.root, self.settings, self.approver)
        if self.watcher is not None:
            await self.watcher.start()
            stack.callback(self.watcher.subscribe(self._on_files))
            if getattr(self.settings.session, "ai_comments", True):
                stack.callback(self.watcher.subscribe_ai(self._on_ai))
        self._set_connection(Connection(self.client.transport, "idle"))

    async def close(self) -> None:
        if self._prewarm_task is not None:
            self._prewarm_task.cancel()
            await asyncio.gather(self._prewarm_task, return_exceptions=True)
            self._prewarm_task = None
        stack, self._stack = self._stack, None
        if stack is not None:
            with contextlib.suppress(Exception):
                await stack.aclose()
        self.session = None

    async def reopen(self, **overrides: str) -> None:
        """Open again with changed settings (model, transport): a new connection."""
        self.overrides.update(overrides)
        await self.close()
        await self.open()

    async def _prewarm(self) -> None:
        """Open the WebSocket while the person types (best effort; never awaited by a paint)."""
        if self.client.transport != "ws" and self.settings.session.transport != "auto":
            return
        self._set_connection(Connection(self.client.transport, "connecting"))
        try:
            await self.client.prewarm(_prewarm_request())
        except Exception as exc:  # noqa: BLE001 - pre-warming is best effort
            self._set_connection(Connection(self.client.transport, "failed", detail=str(exc)))
            return
        transport = self.client.transport
        self._set_connection(Connection(transport, "connected" if transport == "ws" else "idle"))

    # ---- connection state ------------------------------------------------------------------

    def _set_connection(self, connection: Connection) -> None:
        if connection != self.connection:
            self.connection = connection
            self.target.post_message(self.ConnectionChanged(connection))

    def _on_event(self, event: Any) -> None:
        if isinstance(event, OperationProposed):
            index, op, _ = proposed(event)
            self.approver.register(index, op)
        elif isinstance(event, Started | Retrying | TransportChanged):
            self._on_protocol(event)

    def _on_protocol(self, event: Any) -> None:
        c = self.connection
        attempts = int(getattr(self.settings.session, "reconnect_attempts", 0))
        if isinstance(event, Started):
            self._set_connection(Connection(event.transport, "connected"))
        elif isinstance(event, Retrying):
            self._set_connection(Connection(c.transport, "reconnecting", event.attempt,
                                            attempts, event.reason))
        elif isinstance(event, TransportChanged):
            state = "fell back" if event.old == "ws" else "connected"
            self._set_connection(Connection(event.new, state, detail=event.reason))

    # ---- watcher ---------------------------------------------------------------------------

    def _on_files(self, paths: set[str]) -> None:
        self.target.post_message(self.FilesChanged(set(paths)))

    def _on_ai(self, comments: list[Any]) -> None:
        do = [c for c in comments if c.kind == "do"]
        if do:
            self.target.post_message(self.AIComments(do))

    # ---- turns -----------------------------------------------------------------------------

    def cancel(self) -> None:
        if self.session is not None and self.running:
            self.session.cancel(message="stopped (escape); nothing was written")

    async def run_turn(self, prompt: str, files: Sequence[str] = ()) -> None:
        """One turn, handed to the target frame by frame. Never raises a SparkPairError: a
        turn that cannot start ends with a frame holding a synthetic failure."""
        if self.session is None:
            raise RuntimeError("the repository is not open")
        self.approver.reset()
        self.running = True
        frames = _Frames(self._on_event)
        post = self.target.post_message
        try:
            async for events in _coalesced(self.session.turn(prompt, list(files)), frames):
                post(self.Frame(*events))
        finally:
            self.running = False

    async def undo(self) -> list[str]:
        """Restore the last applied turn's files (in a thread: journal lock, fsync)."""
        from ..edits.journal import Journal

        return await asyncio.to_thread(lambda: Journal(self.root).undo())

    def changed_files(self) -> set[str]:
        return self.watcher.changed_since() if self.watcher is not None else set()


async def _coalesced(events: AsyncIterator[Any], frames: _Frames, interval: float = FRAME_S
                     ) -> AsyncIterator[tuple[list[Any], str, str]]:
    """Frames of `events`: every `interval`, and at once after an urgent event."""
    wake = asyncio.Event()

    async def pump() -> None:
        try:
            async for event in events:
                if frames.add(event):
                    wake.set()
        finally:
            wake.set()

    task = asyncio.create_task(pump())
    try:
        while True:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(wake.wait(), interval)
            wake.clear()
            taken = frames.take()
            if taken is not None:
                yield taken
            if task.done():
                break
        task.result()  # a bug in the session surfaces here
    finally:
        if not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)


def _prewarm_request() -> Any:
    from ..protocol.events import Message as ChatMessage, TurnRequest
    from ..workspace import SYSTEM_PROMPT

    return TurnRequest(SYSTEM_PROMPT, [ChatMessage("user", "")], task="prewarm")


async def _open_chain(stack: contextlib.AsyncExitStack, root: Path, settings: Any,
                      approver: UIApprover) -> tuple[Any, Any, Any]:
    """settings -> client -> workspace and watcher -> session, closed by `stack`."""
    from ..headless.context import open_context
    from ..protocol.client import ModelClient
    from ..session import Session, TurnRecorder

    recorder = TurnRecorder(_LazyStore())
    client = await stack.enter_async_context(ModelClient(settings.client_options("edit"),
                                                         recorder=recorder))
    context, watch = await stack.enter_async_context(open_context(root, settings, client))
    session = Session(root, client, approver, context=context, recorder=recorder, watch=watch)
    return session, client, context.watcher


class _LazyStore:
    """The request log, opened on the first record; a broken log never fails a turn."""

    def __init__(self) -> None:
        self.store: Any = None
        self.failed = False

    def record(self, rec: Any) -> None:
        if self.store is None and not self.failed:
            try:
                from ..store import RequestStore

                self.store = RequestStore()
            except Exception:  # noqa: BLE001 - the log is not worth failing a turn
                self.failed = True
                return
        with contextlib.suppress(Exception):
            self.store.record(rec)


def describe(error: BaseException) -> str:
    """What the app shows for an error: its own message and hint."""
    if isinstance(error, SparkPairError):
        return error.describe()
    return f"internal error: {type(error).__name__}: {error}\n  hint: please report it"



def proposed(event: OperationProposed) -> tuple[int, Any, bool]:
    """(index, operation, stale) of a proposal event."""
    proposal = getattr(event, "proposal", None)  # the seam's Proposal, when the session has it
    if proposal is not None:
        return proposal.index, proposal.op, bool(proposal.stale)
    return event.index, event.op, False
