"""The app's one adapter to the session seam (docs/seam.md).

    driver = Driver(root, target=screen, overrides={...})
    await driver.open()                      # runtime.open_runtime, kept open; pre-warm
    screen.run_worker(driver.run_turn(prompt, files), group="turn")
    driver.approver.resolve(index, decision) # from the review pane
    driver.cancel()                          # escape
    await driver.close()

A turn runs in a Textual worker on the app's event loop (asyncio, never a thread) and reaches
the screen as one `Driver.FrameArrived` message per `session.frames()` frame. Approvals are futures:
one per operation index, replaced when the session asks again about the same index.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from textual.message import Message
from textual.message_pump import MessagePump

from ..base.errors import SparkPairError
from ..session.approval import Decision, Proposal
from ..session.runtime import ConnectionState
from .sessions import AppStoredSession, Choice
from .widgets.header import Connection

if TYPE_CHECKING:
    from ..base.config import Settings
    from ..protocol.client import ModelClient
    from ..session.events import SessionEvent
    from ..session.prewarm import FilesFor
    from ..session.runtime import Runtime
    from ..session.session import Session
    from ..store.sessions import StoredTurn
    from ..workspace.aicomments import AIComment
    from ..workspace.autocontext import Plan
    from ..workspace.context import Prepared
    from ..workspace.prompt import Context

# Frames a second while a turn streams. Each frame repaints the followed tail of the live diff
# (a cost per frame, not per token): 20 a second keeps the diff smooth for a fraction of the
# CPU 30 would take.
FRAME_RATE = 20


class UIApprover:
    """Decisions come from a person: `decide` waits on a future the review pane resolves."""

    def __init__(self) -> None:
        self._futures: dict[int, asyncio.Future[Decision]] = {}
        # decided before the session asked: the operation decided on (None: any), the decision
        self._early: dict[int, tuple[object, Decision]] = {}
        self._asked: dict[int, object] = {}  # the operation the session asks about, per index

    async def decide(self, proposal: Proposal) -> Decision:
        index = proposal.index
        self._asked[index] = proposal.op
        early = self._early.pop(index, None)
        if early is not None and early[0] in (None, proposal.op):
            return early[1]  # (one for an operation since replaced, by a repair, is stale)
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

    def resolve(self, index: int, decision: Decision, op: object = None) -> None:
        """`op`: the operation decided on; a decision about one the session no longer asks
        about (it was replaced meanwhile) is dropped."""
        future = self._futures.get(index)
        if future is None or future.done():
            self._early[index] = (op, decision)
        elif op is None or self._asked.get(index) is op:
            future.set_result(decision)

    def reset(self) -> None:
        for future in self._futures.values():
            future.cancel()
        self._futures.clear()
        self._early.clear()
        self._asked.clear()


class Driver:
    """Opens the repository for the app and runs its turns."""

    class FrameArrived(Message, bubble=False):
        """The events of one interval of a turn, in order."""

        def __init__(self, events: Sequence[SessionEvent], text: str, partial_line: str) -> None:
            super().__init__()
            self.events = events
            self.text = text
            self.partial_line = partial_line

    class RepoOpened(Message, bubble=False):
        """The repository is open: settings and session are ready."""

        def __init__(self, model: str, transport: str) -> None:
            super().__init__()
            self.model = model
            self.transport = transport

    class Switched(Message, bubble=False):
        """Another model or transport; the session goes on."""

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

        def __init__(self, comments: list[AIComment]) -> None:
            super().__init__()
            self.comments = comments

    class SessionOpened(Message, bubble=False):
        """The stored session is open (a new one, or one carried on: `turns` before now)."""

        def __init__(self, name: str, turns: list[StoredTurn], model: str,
                     context: list[str] | None = None) -> None:
            super().__init__()
            self.name = name
            self.turns = turns
            self.model = model
            self.context = context or []  # the session's context set when it was stored

    class Warning(Message, bubble=False):
        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    def __init__(self, root: Path, target: MessagePump, *, overrides: Mapping[str, str] | None
                 = None, env: Mapping[str, str] | None = None, prewarm: bool = True,
                 choice: Choice | None = None) -> None:
        self.root = Path(root)
        # the stored session (None: none is stored)
        pinned = getattr(target, "sent_context", None)  # the screen's context set
        self.stored = AppStoredSession(self.root, choice, self._warn, pinned) if choice \
            else None
        self.target = target
        self.overrides = dict(overrides or {})
        self.env = env
        self.prewarm = prewarm
        self.approver = UIApprover()
        self.runtime: Runtime | None = None
        self.running = False
        self._opening: asyncio.Future[None] | None = None  # the open() under way
        self._stack: contextlib.AsyncExitStack | None = None

    @property
    def opened(self) -> Runtime:
        """The runtime, where the repository is open by then (a turn and what follows it, the
        Opened and Switched messages)."""
        if self.runtime is None:
            raise RuntimeError("the repository is not open")
        return self.runtime

    @property
    def session(self) -> Session | None:
        return self.runtime.session if self.runtime is not None else None

    @property
    def settings(self) -> Settings | None:
        return self.runtime.settings if self.runtime is not None else None

    @property
    def client(self) -> ModelClient | None:
        return self.runtime.client if self.runtime is not None else None

    # ---- opening and closing -------------------------------------------------------------

    async def open(self) -> None:
        """Open the repository (settings, store, client, watcher, session) and keep it open;
        errors are posted, never raised. The WebSocket pre-warms in the background. One at a
        time: called while one is under way (a config file fixed, and /transport auto), it
        waits for that one's outcome."""
        if self._opening is not None:
            await asyncio.shield(self._opening)
            return
        self._opening = asyncio.ensure_future(self._open())
        try:
            await self._opening
        finally:
            self._opening = None

    @property
    def opening(self) -> bool:
        """open() runs (the config watch waits for its outcome)."""
        return self._opening is not None

    async def _open(self) -> None:
        from ..session.runtime import open_runtime

        stack = contextlib.AsyncExitStack()
        # a session carried on gives its model first; a new one opens meanwhile
        opening = asyncio.ensure_future(self._open_stored())
        if self.stored is not None and self.stored.choice != Choice():
            await opening
        try:
            rt = await stack.enter_async_context(open_runtime(
                self.root, approver=self.approver, overrides=self.overrides, env=self.env,
                prewarm=self.prewarm, warn=self._warn))
            if rt.watcher is not None:
                await rt.watcher.start()  # the files pane and AI! comments need it at once
                stack.callback(rt.watcher.subscribe(self._on_files))
                if rt.settings.session.ai_comments:
                    stack.callback(rt.watcher.subscribe_ai(self._on_ai))
            stack.callback(rt.connection.subscribe(self._on_connection))
            await opening
            if self.stored is not None:
                self.stored.attach(rt)
                stack.push_async_callback(self.stored.close)
            if self.prewarm:
                rt.warm_drafts()  # (off with [session] prewarm_ms = 0)
        except SparkPairError as exc:
            await asyncio.gather(opening, return_exceptions=True)
            await stack.aclose()
            self.target.post_message(self.OpenFailed(exc))
            return
        self._stack, self.runtime = stack, rt
        self.target.post_message(self.RepoOpened(rt.client.model, str(rt.client.transport)))
        self._on_connection(rt.connection)
        stored = self.stored.current if self.stored is not None else None
        if stored is not None:
            self.target.post_message(self.SessionOpened(stored.info.name, list(stored.turns),
                                                        stored.info.model, stored.info.context))

    async def _open_stored(self) -> None:
        """Open the stored session (its model joins the overrides). A store that can not be
        opened is said as a warning, and the app goes on without storing."""
        stored = self.stored
        if stored is None or stored.current is not None:
            return
        try:
            await stored.open(self.overrides)
        except SparkPairError as exc:
            self._warn(f"this session is not stored: {exc.message}")
            self.stored = None

    async def close(self) -> None:
        stack, self._stack = self._stack, None
        self.runtime = None
        if stack is not None:
            with contextlib.suppress(Exception):
                await stack.aclose()
        if self.stored is not None:  # (also when the runtime never opened)
            await self.stored.close()

    async def reopen(self, **overrides: str) -> None:
        """Changed settings (model, transport): a new connection; the session and its history
        stay. Raises SparkPairError (a bad setting) and keeps the connection it had. Opens the
        repository when it is not open yet (an earlier error)."""
        if self.opening:  # its outcome first: open, these settings are switched to
            await self.open()
        if self.runtime is None:
            self.overrides.update(overrides)
            await self.open()
            return
        await self.runtime.switch(overrides)
        self.overrides.update(overrides)
        self.target.post_message(self.Switched(self.runtime.client.model,
                                               str(self.runtime.client.transport)))

    def _warn(self, text: str) -> None:
        self.target.post_message(self.Warning(text))

    def _on_connection(self, state: ConnectionState) -> None:
        self.target.post_message(self.ConnectionChanged(Connection.of(state)))

    def _on_files(self, paths: set[str]) -> None:
        self.target.post_message(self.FilesChanged(set(paths)))

    def _on_ai(self, comments: list[AIComment]) -> None:
        do = [c for c in comments if c.kind == "do"]
        if do:
            self.target.post_message(self.AIComments(do))

    # ---- turns -----------------------------------------------------------------------------

    def draft_changed(self, text: str, files_for: FilesFor) -> None:
        """The prompt holds `text` now: pre-warm it once it is still (session.prewarm)."""
        drafts = self.runtime.drafts if self.runtime is not None else None
        if drafts is not None:
            drafts.draft_changed(text, files_for)

    def cancel(self, message: str = "stopped (escape)") -> None:
        if self.session is not None:
            self.session.cancel(message=message)  # hint: nothing was written

    async def steer(self, text: str) -> bool:
        """Send `text` to the streaming turn as a correction (False: it could not go)."""
        return self.session is not None and await self.session.steer(text)

    async def run_turn(self, prompt: str, files: Sequence[str] = ()) -> None:
        """One turn, handed to the target frame by frame (raises what the session raises
        before the turn starts, e.g. TurnInProgress)."""
        if self.session is None:
            raise RuntimeError("the repository is not open")
        self.approver.reset()
        self.running = True
        post = self.target.post_message
        try:
            async for frame in self.session.frames(prompt, list(files),
                                                   interval=1 / FRAME_RATE):
                post(self.FrameArrived(frame.events, frame.text, frame.partial_line))
        finally:
            self.running = False

    async def prepare(self, files: Sequence[str]) -> Prepared | None:
        """Read the context files ahead of the next turn (in a thread), so enter sends at once;
        the workspace's `Prepared` (token estimates), or None before the repository is open."""
        if self.runtime is None:
            return None
        return await asyncio.to_thread(self.runtime.workspace.prepare, list(files))

    async def plan(self, prompt: str, pinned: Sequence[str], dropped: Sequence[str], *,
                   wait: bool = True) -> Plan | None:
        """The files the automatic context chooses for `prompt` (in a thread): the workspace's
        `Plan`, or None (not open yet, `[context] auto = false`, or, without `wait`, the
        index is still being built)."""
        if self.runtime is None or self.runtime.workspace.auto is None:
            return None
        if not wait and not self.runtime.workspace.auto.ready:
            return None
        return await asyncio.to_thread(self.runtime.workspace.plan, prompt, list(pinned),
                                       list(dropped))

    async def draft_context(self, prompt: str, files: Sequence[str]) -> Context | None:
        """The file context a turn for `prompt` with `files` would send now (in a thread:
        it reads files), or None (not open, or it could not be built: the turn says why)."""
        if self.runtime is None:
            return None
        from ..workspace.preview import preview_context

        rt = self.runtime
        try:
            return await asyncio.to_thread(preview_context, rt.workspace, prompt, list(files),
                                           followup=rt.session.turns > 0)
        except Exception:  # noqa: BLE001 - an estimate only: the turn reports real problems
            return None

    def shows(self, paths: set[str]) -> bool:
        """Whether the next request may show one of `paths` (then it is prepared again)."""
        if self.runtime is None:
            return False
        return not paths.isdisjoint(self.runtime.workspace.snapshot.paths())

    async def undo(self, turn_id: str | None = None) -> Undid:
        """Restore the last applied turn's files, or `turn_id`'s (in a thread: journal lock,
        fsync); with the turn it undid."""
        from ..edits.journal import Journal

        def run() -> Undid:
            journal = Journal(self.root)
            paths = journal.undo(turn_id)
            return Undid(turn_id or journal.last_undone(), paths)

        undid = await asyncio.to_thread(run)
        await self.wrote(undid.paths)
        return undid

    async def redo(self) -> Undid:
        """Re-apply what the last undo restored (in a thread); with the turn written again."""
        from ..edits.journal import Journal, TurnKind

        def run() -> Undid:
            journal = Journal(self.root)
            paths = journal.redo()
            return Undid(journal.last_undone(TurnKind.REDO), paths)

        undid = await asyncio.to_thread(run)
        await self.wrote(undid.paths)
        return undid

    async def wrote(self, paths: Sequence[str]) -> None:
        """spark-pair itself wrote these files: not a person's edit (`M`, "edited on disk")."""
        watcher = self.runtime.watcher if self.runtime is not None else None
        if watcher is not None and paths:
            await asyncio.to_thread(watcher.own, list(paths))
            self.target.post_message(self.FilesChanged(set()))  # the marks are checked again

    async def by_person(self, paths: set[str]) -> set[str]:
        """Of `paths`, those a person changed on disk (see Watcher.by_person)."""
        watcher = self.runtime.watcher if self.runtime is not None else None
        if watcher is None:
            return set(paths)
        return await asyncio.to_thread(watcher.by_person, list(paths))

    async def undone(self, turn_id: str) -> bool:
        """Whether the journal has `turn_id` undone now (in a thread)."""
        from ..edits.journal import Journal

        return await asyncio.to_thread(lambda: any(
            t.turn_id == turn_id and t.undone for t in Journal(self.root).list_turns()))


class Undid(NamedTuple):
    """What an undo or redo did: the applied turn it took back or wrote again ("" when the
    journal cannot say) and the files it wrote."""

    turn_id: str
    paths: list[str]




def describe(error: BaseException) -> str:
    """What the app shows for an error: its own message and hint. The hint goes under the
    message's first line: the notice has room for a few lines, and what follows (a conflict's
    lines of the hunk) may be cut. An error whose message repeats what the screen shows
    (the start of a reply with no diff) has a shorter one for the screen."""
    if isinstance(error, SparkPairError):
        message = str(error.details.get("on_screen") or error.message)
        first, more, rest = message.partition("\n")
        if more and error.hint:
            return f"{first}\n  hint: {error.hint}\n{rest}"
        return f"{message}\n  hint: {error.hint}" if error.hint else message
    return f"internal error: {type(error).__name__}: {error}\n  hint: please report it"
