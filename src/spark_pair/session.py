"""One turn: context -> request -> stream -> incremental parse -> approvals -> apply -> record.

    session = Session(root, client, approver, context=workspace, journal=None,
                      recorder=TurnRecorder(store), watch=watcher.watch)
    async for event in session.turn("rename foo to bar", files=["src/a.py"]):
        ...
    session.cancel(timeout=False)   # from anywhere: stop the turn; keeps what arrived

A turn yields, in order: TurnStarted; the client's events (Started, TextDelta, Usage,
Retrying, TransportChanged, ModelChanged, Completed | Failed) interleaved with the parser's
(FileStarted, HunkStarted, LineAdded, FileFinished) and the session's OperationProposed,
Decided and Stale; then Refused / Stale / Applied from the apply step; last TurnFinished(result).

The approver is asked about each operation as soon as it is parsed (decisions run alongside
the stream). Nothing is written without a Decision for every operation; a REFUSE, a conflict
or a stale file that no longer fits means nothing at all is written. Writes go through
edits.apply_turn (all-or-nothing, journaled for undo). A cancelled or failed turn writes nothing.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import os
import time
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from .approval import ACCEPT, REFUSE, SKIP, Approver, Decision, select_hunks
from .edits.ops import Create, Delete, Operation, Rename, content_hash, op_paths
from .errors import (
    Cancelled,
    EditError,
    ModelError,
    PathRefused,
    PolicyRefused,
    SparkPairError,
    StaleError,
)
from .protocol.events import (
    Completed,
    Failed,
    ModelChanged,
    Rewound,
    Started,
    TextDelta,
    TransportChanged,
    TurnRequest,
    Usage,
)
from .protocol.metrics import Stopwatch, estimate_tokens
from .session_events import (
    APPLIED,
    NOT_APPLIED,
    Applied,
    Decided,
    OperationProposed,
    Refused,
    Stale,
    TurnFinished,
    TurnResult,
    TurnStarted,
)

if TYPE_CHECKING:  # the store package opens SQLite; not needed before the request
    from .store.records import Recorder, RequestRecord

_END = object()  # the stream ended
_WAKE = object()  # the turn was cancelled: look at the inbox again


class Context(Protocol):
    """What the session needs from the workspace (files, prompt, history, watcher)."""

    def build(self, prompt: str, files: Sequence[str], *, followup: bool) -> tuple[
            TurnRequest, dict[str, str | None]]:
        """The request for a turn and the content hash of every file it showed the model."""

    def finish(self, request: TurnRequest, reply: str, applied: Sequence[str]) -> None:
        """Remember a completed turn (history) and what the turn itself wrote."""


class TurnRecorder:
    """Holds a turn's request records until the session knows the turn id, then stores them."""

    def __init__(self, store: Recorder | None = None) -> None:
        self.store = store
        self.pending: list[RequestRecord] = []

    def record(self, rec: RequestRecord) -> None:
        self.pending.append(rec)

    def flush(self, turn_id: str | None) -> list[RequestRecord]:
        records, self.pending = self.pending, []
        for rec in records:
            rec.turn_id = turn_id
            if self.store is not None:
                self.store.record(rec)
        return records


class Session:
    """A conversation with one model client over one repository; one turn at a time."""

    def __init__(self, root: Path, client: Any, approver: Approver, *, context: Context,
                 journal: Any = None, recorder: TurnRecorder | None = None,
                 watch: Callable[[Callable[[set[str]], None]], Any] | None = None) -> None:
        self.root = Path(root)
        self.client = client
        self.approver = approver
        self.context = context
        self.journal = journal
        self.recorder = recorder
        self.watch = watch  # watch(on_change) -> async context manager delivering changed paths
        self.turns = 0
        self._cancel: asyncio.Event | None = None
        self._cancel_reason: Cancelled | None = None

    def cancel(self, *, timeout: bool = False, message: str | None = None) -> None:
        """Stop the turn in flight: what arrived is kept, nothing is written."""
        text = message or ("the --timeout ran out" if timeout else "the turn was cancelled")
        hint = "nothing was written"
        if timeout:
            hint += "; raise --timeout or check the endpoint"
        self._cancel_reason = Cancelled(text, timeout=timeout, hint=hint)
        if self._cancel is not None:
            self._cancel.set()

    async def turn(self, prompt: str, files: Sequence[str] = ()) -> AsyncIterator[Any]:
        turn_id = _new_turn_id()
        self._cancel = asyncio.Event()
        self._cancel_reason = None
        followup = self.turns > 0
        request, hashes = self.context.build(prompt, files, followup=followup)
        result = TurnResult(turn_id, "failed")
        yield TurnStarted(turn_id, prompt, sorted(hashes), _estimate_tokens(request), followup)
        run = _TurnRun(self, request, hashes, result, prompt)
        try:
            async for event in run.events():
                yield event
        finally:
            run.stop_deciding()
            if self.recorder is not None:
                self.recorder.flush(turn_id if result.status == "applied" else None)
        self.turns += 1
        if result.metrics is not None and not result.metrics.partial:  # the model answered:
            # the turn joins the history
            self.context.finish(request, result.text, result.changed)
        yield TurnFinished(result)


class _Inbox:
    """The turn's incoming events (stream, watcher, wake-ups), in order. `put` never waits;
    the turn loop takes from `items` and waits only when it is empty."""

    def __init__(self) -> None:
        self.items: collections.deque[Any] = collections.deque()
        self._waiter: asyncio.Future[None] | None = None

    def put(self, item: Any) -> None:
        self.items.append(item)
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def wait(self) -> None:
        """Return once something is in `items`."""
        while not self.items:
            self._waiter = asyncio.get_running_loop().create_future()
            await self._waiter


class _TurnRun:
    """The state of one turn while it runs."""

    def __init__(self, session: Session, request: TurnRequest, hashes: dict[str, str | None],
                 result: TurnResult, prompt: str) -> None:
        self.s = session
        self.prompt = prompt
        self.request = request
        self.hashes = dict(hashes)
        self.result = result
        self.ops: list[Operation] = []
        self.tasks: list[asyncio.Task[Decision]] = []
        self.decided: list[Decision | None] = []
        self.reported: int = 0  # decisions already yielded
        self.stale: set[str] = set()
        self.existed: dict[str, bool] = {}  # a create's target was there when it was parsed
        self.inbox = _Inbox()  # stream events and watcher reports
        self.writing: str | None = None  # path of the file being parsed now
        self.watch: Stopwatch | None = None  # made when the request goes out

    # ---- the turn ------------------------------------------------------------------------

    async def events(self) -> AsyncIterator[Any]:
        cancel = self.s._cancel
        assert cancel is not None
        chunks: list[str] = []
        error: SparkPairError | None = None
        # the request goes out first; the parser gets ready while it travels and the
        # watcher starts with the first event
        pump = asyncio.create_task(self._pump())
        self.watch = Stopwatch()  # for the partial metrics of a stopped turn
        stopper = asyncio.create_task(cancel.wait())
        stopper.add_done_callback(self._wake)  # a cancel wakes the loop waiting on the inbox
        await asyncio.sleep(0)
        from .edits.parser import DiffParser

        parser = DiffParser()
        try:
            async with contextlib.AsyncExitStack() as watching:
                items = self.inbox.items
                watch = self.s.watch is not None
                while True:
                    # what is already queued is handled first; a cancel takes effect once the
                    # inbox is empty. The loop waits (one future, no task) only when there is
                    # nothing to do
                    if not items:
                        if cancel.is_set():
                            error = self.s._cancel_reason or Cancelled("the turn was cancelled")
                            break
                        await self.inbox.wait()
                        continue
                    event = items.popleft()
                    if event is _WAKE:
                        continue
                    if event is _END:
                        break
                    if isinstance(event, SparkPairError):
                        error = event
                        break
                    yield event
                    if watch:  # after the first event: the request is out, so the watcher's
                        watch = False  # start-up work (imports, git) does not delay it
                        await watching.enter_async_context(self.s.watch(self._changed))
                    if isinstance(event, TextDelta):
                        self.watch.text()
                        chunks.append(event.text)
                        try:
                            parsed = parser.feed(event.text)
                        except SparkPairError as exc:
                            error = exc
                            break
                        for pe in parsed:
                            for out in self._on_parse(pe):
                                yield out
                    elif isinstance(event, Rewound):
                        # a retry answered differently: forget what came after `keep`, re-parse
                        text = "".join(chunks)[: event.keep]
                        chunks = [text]
                        parser = DiffParser()
                        self._forget_operations()
                        for pe in parser.feed(text):
                            for out in self._on_parse(pe):
                                yield out
                    else:
                        error = self._on_protocol(event) or error
                    if self.reported < len(self.tasks):
                        for out in self._take_decisions():
                            yield out
                stopper.cancel()
                if not pump.done():
                    pump.cancel()
                await asyncio.gather(pump, return_exceptions=True)
                self.result.text = "".join(chunks)
                if error is None:
                    try:
                        for pe in parser.close():
                            for out in self._on_parse(pe):
                                yield out
                    except SparkPairError as exc:
                        error = exc
                if error is None and not self.ops and self.result.text.strip():
                    from .errors import ParseError

                    error = ParseError("the reply holds no unified diff")
                self.result.operations = list(self.ops)
                if error is not None:
                    self.stop_deciding()
                    self._finish_error(error)
                    return
                async for out in self._decide_all():
                    yield out
                for out in self._take_stale():
                    yield out
        finally:
            stopper.cancel()
            if not pump.done():
                pump.cancel()
        async for out in self._apply():
            yield out

    def _on_protocol(self, event: Any) -> SparkPairError | None:
        r = self.result
        if isinstance(event, Started):
            r.model, r.transport = event.model, event.transport
        elif isinstance(event, ModelChanged):
            r.model = event.new
        elif isinstance(event, TransportChanged):
            r.transport = event.new
        elif isinstance(event, Usage):
            r.usage = event
        elif isinstance(event, Completed):
            r.metrics, r.retries, r.response_id = event.metrics, event.retries, event.response_id
            r.usage = event.usage or r.usage
        elif isinstance(event, Failed):
            r.retries = event.retries
            return event.error
        return None

    def _wake(self, stopper: asyncio.Task[Any]) -> None:
        if not stopper.cancelled():
            self.inbox.put(_WAKE)

    async def _pump(self) -> None:
        put = self.inbox.put
        try:
            async for event in self.s.client.stream(self.request):
                put(event)
        except Exception as exc:  # a bug below the client: report, never hang the turn
            put(exc if isinstance(exc, SparkPairError) else
                ModelError(f"the model client failed: {exc!r}"))
        put(_END)

    # ---- parse events -> operations --------------------------------------------------------

    def _on_parse(self, pe: Any) -> list[Any]:
        out: list[Any] = [pe]
        kind = type(pe).__name__
        if kind == "FileStarted":
            self.writing = pe.path
            if pe.op_kind != "create" and pe.path not in self.hashes:
                self.hashes[pe.path] = _hash_of(self.s.root, pe.path)
            if pe.op_kind == "create" and pe.path not in self.existed:
                self.existed[pe.path] = (self.hashes.get(pe.path) is not None
                                         or _present(self.s.root, pe.path))
            if pe.path in self.stale:
                out.append(Stale(pe.path, None))
        elif kind == "FileFinished":
            self.writing = None
            op = pe.op
            self._set_base(op)
            if isinstance(op, Delete):
                from .edits.apply import flag_uncommitted

                flag_uncommitted(self.s.root, [op])  # the approver warns about unsaved work
            index = len(self.ops)
            self.ops.append(op)
            out.append(OperationProposed(index, op))
            self.decided.append(None)
            self.tasks.append(asyncio.ensure_future(self.s.approver.decide(op)))
            if any(p in self.stale for p in op_paths(op)):
                out.append(Stale(op.path, index))
        return out

    def _set_base(self, op: Operation) -> None:
        if isinstance(op, Create) or op.base_hash is not None:
            return
        path = op.path
        if path not in self.hashes:
            self.hashes[path] = _hash_of(self.s.root, path)
        op.base_hash = self.hashes[path]

    def _take_decisions(self) -> list[Any]:
        out = []
        while self.reported < len(self.tasks) and self.tasks[self.reported].done():
            i = self.reported
            decision = _decision_of(self.tasks[i])
            self.decided[i] = decision
            out.append(Decided(i, self.ops[i], decision))
            self.reported += 1
        return out

    async def _decide_all(self) -> AsyncIterator[Any]:
        while self.reported < len(self.tasks):
            cancel = self.s._cancel
            assert cancel is not None
            task = self.tasks[self.reported]
            stopper = asyncio.ensure_future(cancel.wait())
            await asyncio.wait({task, stopper}, return_when=asyncio.FIRST_COMPLETED)
            stopper.cancel()
            if not task.done():
                self.stop_deciding()
                return
            for out in self._take_decisions():
                yield out

    def _forget_operations(self) -> None:
        """Drop every operation parsed so far (their text was rewound) and their decisions."""
        self.stop_deciding()
        self.ops, self.tasks, self.decided, self.reported = [], [], [], 0
        self.writing = None

    def stop_deciding(self) -> None:
        for task in self.tasks:
            if not task.done():
                task.cancel()

    # ---- staleness -----------------------------------------------------------------------

    def _changed(self, paths: set[str]) -> None:
        """Called by the watcher with repo-relative paths that changed on disk."""
        for path in paths:
            if path in self.stale:
                continue
            if path in self.hashes and _hash_of(self.s.root, path) == self.hashes[path]:
                continue  # touched but not changed (or a late event for an earlier write)
            if path in self.hashes or path == self.writing or any(
                    path in op_paths(op) for op in self.ops):
                self.stale.add(path)
                index = next((i for i, op in enumerate(self.ops) if path in op_paths(op)), None)
                if index is not None or path == self.writing:
                    self.inbox.put(Stale(path, index))
            else:
                self.stale.add(path)  # a later operation on it is stale from the start

    def _take_stale(self) -> list[Any]:
        """Stale reports that came in after the stream ended."""
        out = []
        items = self.inbox.items
        while items:
            item = items.popleft()
            if isinstance(item, Stale):
                out.append(item)
        return out

    def _disk_stale(self, op: Operation) -> bool:
        if isinstance(op, Create):  # stale only if it appeared during the turn; a file that
            # was already there is a conflict (a create never overwrites), not a stale file
            existed = self.existed.get(op.path, self.hashes.get(op.path) is not None)
            return not existed and _present(self.s.root, op.path)
        return op.base_hash is not None and _hash_of(self.s.root, op.path) != op.base_hash

    # ---- apply -----------------------------------------------------------------------------

    async def _apply(self) -> AsyncIterator[Any]:
        from .edits.apply import apply_turn, check_each, check_ops

        r = self.result
        cancelled = self.s._cancel_reason
        decisions = [d or Decision(SKIP, "no decision") for d in self.decided]
        r.decisions = list(decisions)
        r.outcomes = [NOT_APPLIED] * len(self.ops)
        if cancelled is not None:
            self._finish_error(cancelled)
            return
        refused = [(i, d.reason) for i, d in enumerate(decisions) if d.action == REFUSE]
        for i, reason in refused:
            yield Refused(i, self.ops[i], reason, "policy")
        chosen = [(i, select_hunks(op, d)) for i, (op, d) in enumerate(zip(self.ops, decisions))
                  if d.action == ACCEPT]
        chosen = [(i, op) for i, op in chosen if _has_effect(op)]
        # a dry run writes nothing but checks what --apply would write
        dry = not refused and not chosen and any(d.action == SKIP for d in decisions)
        checked = chosen if not dry else [
            (i, op) for i, op in enumerate(self.ops)
            if decisions[i].action == SKIP and _has_effect(op)]
        problems: list[tuple[int, SparkPairError]] = []
        stop = lambda: self.s._cancel_reason is not None  # noqa: E731 - checks give way to it
        for i, op in checked:
            stale = self._disk_stale(op) or any(p in self.stale for p in op_paths(op))
            if stale and op.path not in self.stale:
                self.stale.add(op.path)
                yield Stale(op.path, i)
            if refused or not stale:
                continue  # fresh operations are checked together by apply_turn
            try:  # re-check against the newer file (off the loop, so the deadline can fire)
                found = await asyncio.to_thread(check_ops, self.s.root, [op], stop=stop)
            except Cancelled as exc:
                self._finish_error(self._stopped(exc))
                return
            if found:
                problems.append((i, StaleError(found[0])))
                yield Refused(i, op, found[0], "stale")
        if refused:
            self._finish_error(PolicyRefused(_refusal_message(self.ops, refused)), "refused")
            return
        if problems:
            self._finish_error(problems[0][1], "conflict")
            return
        if dry:
            try:
                found = await asyncio.to_thread(check_each, self.s.root,
                                                [op for _, op in checked], stop=stop)
            except Cancelled as exc:
                self._finish_error(self._stopped(exc))
                return
            if found:
                i, op = checked[found[0][0]]
                error = found[0][1]
                yield Refused(i, op, error.message, _refusal_kind(error))
                self._finish_error(error, "conflict")
            else:
                r.status = "dry_run"
            return
        if not chosen:
            r.status = "dry_run" if any(d.action == SKIP for d in decisions) else (
                "rejected" if decisions else "no_changes")
            return
        try:
            applied = await asyncio.to_thread(
                apply_turn, self.s.root, [op for _, op in chosen], journal=self.s.journal,
                turn_id=r.turn_id, summary=" ".join(self.prompt.split())[:200], stop=stop)
        except Cancelled as exc:  # the deadline came while planning or waiting for the lock
            self._finish_error(self._stopped(exc))
            return
        except EditError as exc:
            i, op = next(((i, op) for i, op in chosen
                          if any(p in exc.message for p in op_paths(op))), chosen[0])
            yield Refused(i, op, exc.message, _refusal_kind(exc))
            self._finish_error(exc, "conflict")
            return
        for i, _ in chosen:
            r.outcomes[i] = APPLIED
        r.changed, r.notes, r.status = applied.changed, applied.notes, "applied"
        yield Applied(applied.turn_id, applied.changed, applied.notes)

    def _stopped(self, exc: Cancelled) -> Cancelled:
        """The turn's own cancel reason, with what was stopped (e.g. who holds the lock)."""
        reason = self.s._cancel_reason
        if reason is None or "waiting" not in exc.details:
            return reason or exc
        return Cancelled(f"{reason.message}; {exc.message}", hint=exc.hint, **reason.details)

    def _finish_error(self, error: SparkPairError, status: str | None = None) -> None:
        r = self.result
        r.error = error
        r.status = status or ("cancelled" if isinstance(error, Cancelled) else "failed")
        if isinstance(error, Cancelled) and r.metrics is None and self.watch is not None:
            tokens = r.usage.output_tokens if r.usage else estimate_tokens(r.text)
            r.metrics = self.watch.stopped(tokens)  # stopped: report what was measured
        if not r.outcomes:
            r.outcomes = [NOT_APPLIED] * len(self.ops)
        if not r.decisions:
            r.decisions = list(self.decided)


def _new_turn_id() -> str:
    """Sortable and unique: UTC time plus random hex (the journal's turn id format)."""
    return time.strftime("%Y%m%d-%H%M%S", time.gmtime()) + "-" + os.urandom(3).hex()


def _decision_of(task: asyncio.Task[Decision]) -> Decision:
    if task.cancelled():
        return Decision(SKIP, "no decision (cancelled)")
    exc = task.exception()
    if exc is not None:
        return Decision(REFUSE, f"the approver failed: {exc}")
    return task.result()


def _refusal_kind(error: SparkPairError) -> str:
    if isinstance(error, StaleError):
        return "stale"
    return "path" if isinstance(error, PathRefused) else "conflict"


def _refusal_message(ops: Sequence[Operation], refused: list[tuple[int, str]]) -> str:
    """Names the refused operation by its path (indices differ between people and JSON)."""
    i, reason = refused[0]
    op = ops[i]
    what = f"rename {op.src} to {op.dst}" if isinstance(op, Rename) else (
        f"{type(op).__name__.lower()} {op.path}")
    more = f" (and {len(refused) - 1} more)" if len(refused) > 1 else ""
    return f"{what} refused: {reason}{more}; nothing was written"


def _present(root: Path, rel: str) -> bool:
    """Whether something is at this repository path (False for a path outside it)."""
    from .edits.paths import confine

    try:
        _, full = confine(root, rel)
    except SparkPairError:
        return False
    return os.path.lexists(full)


def _has_effect(op: Operation) -> bool:
    if isinstance(op, Rename):
        return True
    return not hasattr(op, "hunks") or bool(op.hunks)


def _hash_of(root: Path, rel: str) -> str | None:
    """The content hash of a regular file inside the repository, else None."""
    from .edits.paths import read_regular

    data = read_regular(root, rel)
    return None if data is None else content_hash(data)


def _estimate_tokens(request: TurnRequest) -> int:
    texts = [request.instructions, *(m.content for m in request.history),
             *(m.content for m in request.new_input)]
    return estimate_tokens("".join(texts))
