"""One running turn: the stream loop (parse, propose, stale files), then the apply step."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import os
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..base.errors import (
    Cancelled,
    EditError,
    ModelError,
    ParseError,
    PathRefused,
    PolicyRefused,
    SparkPairError,
    StaleError,
)
from ..edits.ops import Create, Delete, Operation, OpKind, Rename, content_hash, op_paths
from ..protocol.events import (
    Completed,
    Event,
    Failed,
    FirstToken,
    ModelChanged,
    Retrying,
    Rewound,
    Started,
    TextDelta,
    TransportChanged,
    TurnRequest,
    Usage,
)
from ..protocol.metrics import Stopwatch, estimate_request_tokens, estimate_tokens
from .approval import Action, Decision, Ended, Proposal, select_hunks
from .events import (
    Applied,
    OperationProposed,
    Outcome,
    RefusalKind,
    Refused,
    SessionEvent,
    Stale,
    TurnResult,
    TurnStatus,
)
from .parts import Parts
from .proposals import Proposals

if TYPE_CHECKING:  # the parser loads once the request is out
    from ..edits.apply import AppliedTurn
    from ..edits.parse_events import ParseEvent
    from ..edits.parser import DiffParser

ASK_REASON = "the turn asked a question (AI?): it edits no file"
SLICE_S = 0.002  # the longest stretch of work before the loop gets a turn
GATHER_CHARS = 8192  # the most text handed over as one TextDelta (parsed in well under SLICE_S)
MAX_LATE_CHANGES = 3  # times one operation is asked again for a change seen at the last look


class LoopShare:
    """Gives the event loop a turn after SLICE_S of work without a pause: a backlog (a burst
    of buffered socket messages, a queue of parsed events) never freezes a screen, and the
    deadline's timer and a signal's handler run in time. A long gap since the last call
    begins a new stretch only if the loop did have a turn meanwhile (a callback scheduled at
    the stretch's start has run): a step may be slow without a pause."""

    def __init__(self) -> None:
        self.start = self.last = time.perf_counter()
        self.turned = True  # the loop had a turn since the stretch began

    def _turn(self) -> None:
        self.turned = True

    async def take(self) -> None:
        now = time.perf_counter()
        if now - self.last > SLICE_S / 4 and self.turned:  # it waited: a new stretch
            self.start = now
            self.turned = False
            asyncio.get_running_loop().call_soon(self._turn)
        elif now - self.start > SLICE_S:
            await asyncio.sleep(0)
            now = self.start = time.perf_counter()
            self.turned = True
        self.last = now


class _Inbox:
    """The turn's incoming items (stream, watcher, decisions, wake-ups), in order. `put` never
    waits; the turn loop takes from `items` and waits only when it is empty.

    `latency`: how long model text may wait before the turn loop is woken for it (0: at once).
    A front end that shows nothing per token lets text gather, so the loop wakes about
    1 / latency times a second instead of once per socket read; anything else (the stream's
    end, a failure, a decision, a file change, a cancel) wakes it at once."""

    def __init__(self, latency: float = 0.0) -> None:
        self.items: collections.deque[Any] = collections.deque()
        self.latency = latency
        self._waiter: asyncio.Future[None] | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._due = 0.0  # a text item may wake the loop from this (loop) time on

    def put(self, item: Any) -> None:
        self.items.append(item)
        self._wake()

    def put_text(self, item: Any) -> None:
        """A text delta: the loop may be woken for it up to `latency` late."""
        self.items.append(item)
        waiter = self._waiter
        if waiter is None or self._timer is not None:
            return
        loop = waiter.get_loop()
        if loop.time() < self._due:
            self._timer = loop.call_at(self._due, self._wake)
        else:
            self._wake()

    def _wake(self) -> None:
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    async def wait(self) -> None:
        """Return once something is in `items`."""
        loop = asyncio.get_running_loop()
        while not self.items:
            self._waiter = loop.create_future()
            await self._waiter
        self._due = loop.time() + self.latency


_END = object()  # the stream ended
_WAKE = object()  # the turn was cancelled: look at the inbox again


@dataclass(frozen=True, slots=True)
class _Changed:
    paths: frozenset[str]  # repo paths the watcher saw change


@dataclass(frozen=True, slots=True)
class _Answered:
    proposal: Proposal  # its decide() task is done


class TurnRun:
    """The state of one turn while it runs: the stream loop, then the apply step."""

    def __init__(self, parts: Parts, request: TurnRequest, hashes: dict[str, str | None],
                 result: TurnResult, prompt: str, ask: bool = False, latency: float = 0.0
                 ) -> None:
        self.s = parts
        self.prompt = prompt
        self.ask = ask  # a question: prose is the answer, operations are refused
        self.request = request
        self.result = result
        self.base = dict(hashes)  # path -> the hash of the content the model saw
        self.disk = dict(hashes)  # path -> the hash last seen on disk (one Stale per change)
        self.changed_early: set[str] = set()  # changed before any operation named them
        self.existed: dict[str, bool] = {}  # a create's target was there when it was parsed
        self.proposals = Proposals(parts.approver, result.turn_id)
        self.inbox = _Inbox(latency)
        self.writing: str | None = None  # path of the file being parsed now
        self.shown = dict(hashes)  # path -> the hash of what the model saw (never grows)
        self.refused: dict[int, EditError] = {}  # refused before the write: stale, or it
        # could never go (a delete of a missing file, or of lines that are not the whole file)
        self.looks: dict[int, tuple[bool, str | None]] = {}  # the last look before the write
        # what the write the last look went on to (when it found nothing changed) came to: the
        # written turn, or the Cancelled / EditError that stopped it before its first file
        self.written: AppliedTurn | SparkPairError | None = None
        self.late: dict[int, int] = {}  # changes only the last look saw, per operation
        self.parser: DiffParser | None = None
        self.cancel_reason: Cancelled | None = None
        self.stopwatch: Stopwatch | None = None  # made when the request goes out
        self.pump: asyncio.Task[None] | None = None  # the stream, from `send` on

    def cancel(self, reason: Cancelled) -> None:
        if self.cancel_reason is None:
            self.cancel_reason = reason
            self.proposals.end_all(Ended.CANCELLED)
            self.inbox.put(_WAKE)

    def end_proposals(self, why: Ended) -> None:
        self.proposals.end_all(why)

    def parser_partial(self) -> str:
        return "" if self.parser is None else self.parser.partial_line

    # ---- the turn ------------------------------------------------------------------------

    def send(self) -> None:
        """Start the request: the stream is pumped into the inbox from the loop's next turn on
        (`events` does it if nobody did before)."""
        if self.pump is None:
            self.stopwatch = Stopwatch()  # for the partial metrics of a stopped turn
            self.pump = asyncio.create_task(self._pump())

    async def stop(self) -> None:
        """Stop the stream (if it still runs) and wait for it."""
        pump = self.pump
        if pump is not None:
            if not pump.done():
                pump.cancel()
            await asyncio.gather(pump, return_exceptions=True)

    async def events(self) -> AsyncIterator[SessionEvent]:
        chunks: list[str] = []
        error: SparkPairError | None = None
        # the request goes out first: the parser, the apply step and the watcher load with
        # the first event (the client's Started comes once the request is out), while the
        # server works on its first token
        self.send()
        self.proposals.on_answer = lambda p: self.inbox.put(_Answered(p))
        parser: DiffParser | None = None
        streaming = True
        gather = self.inbox.latency > 0  # text that gathered is handed over as one TextDelta
        try:
            async with contextlib.AsyncExitStack() as watching:
                items = self.inbox.items
                watch = self.s.watch is not None
                share = LoopShare()
                while True:
                    # a cancel takes effect at once: what is queued is not parsed (its text is
                    # kept), so a backlog never holds up the deadline. The loop waits (one
                    # future, no task) only when there is nothing to do
                    if self.cancel_reason is not None:
                        self._drain(items, chunks)
                        error = self.cancel_reason
                        break
                    if not items:
                        if not streaming and not self.proposals.pending():
                            asked = False
                            async for out in self._last_look():
                                asked = asked or isinstance(out, OperationProposed)
                                yield out
                            if not asked:
                                break
                            continue  # the write waits for the fresh decisions
                        await self.inbox.wait()
                        continue
                    await share.take()
                    item = items.popleft()
                    if item is _WAKE:
                        continue
                    if isinstance(item, _Answered):
                        decided = self.proposals.answered(item.proposal)
                        if decided is not None:
                            yield decided
                        continue
                    if isinstance(item, _Changed):
                        async for out in self._on_changed(item.paths):
                            yield out
                        continue
                    if not streaming:
                        continue
                    if parser is None:
                        self.parser = parser = _start_parsing()
                        from ..edits.parse_events import FileFinished, FileStarted
                    if item is _END or isinstance(item, SparkPairError):
                        streaming = False
                        if isinstance(item, SparkPairError):
                            error = item
                        if error is not None:
                            break
                        # the stream ended: the last file closes, then decisions are awaited
                        self.result.text = "".join(chunks)
                        try:
                            for pe in parser.close():
                                for out in await self._on_parse(pe):
                                    yield out
                        except SparkPairError as exc:
                            error = exc
                            break
                        if (not self.proposals.ops and self.result.text.strip()
                                and not self.ask):
                            error = ParseError("the reply holds no unified diff")
                            break
                        continue
                    event: Event = item
                    if gather and type(event) is TextDelta and items and \
                            type(items[0]) is TextDelta:
                        event = _gathered(event, items)
                    yield event
                    if watch:  # after the first event: the request is out, so the watcher's
                        watch = False  # start-up work (imports, git) does not delay it
                        assert self.s.watch is not None
                        await watching.enter_async_context(self.s.watch(self._changed))
                    match event:
                        case TextDelta(text=text):
                            chunks.append(text)
                            failed: SparkPairError | None = None
                            # a long text is parsed a slice at a time, each followed by the
                            # loop's turn: the deadline and a cancel get in between
                            for at in range(0, len(text), GATHER_CHARS):
                                if at:
                                    await share.take()
                                    if self.cancel_reason is not None:
                                        break  # (its text is kept, the rest is not parsed)
                                try:
                                    parsed = parser.feed(text[at:at + GATHER_CHARS]
                                                         if len(text) > GATHER_CHARS else text)
                                except SparkPairError as exc:
                                    failed = exc
                                    break
                                for pe in parsed:
                                    if type(pe) is FileStarted or type(pe) is FileFinished:
                                        for out in await self._on_parse(pe):
                                            yield out
                                    else:  # a hunk or a line: nothing to look up
                                        yield pe
                            if failed is not None:
                                error = failed
                                break
                        case Rewound(keep=keep):
                            # a retry answered differently: forget what came after `keep`
                            text = "".join(chunks)[:keep]
                            chunks = [text]
                            self.parser = parser = type(parser)()
                            self.proposals.forget()
                            self.writing = None
                            for pe in parser.feed(text):
                                for out in await self._on_parse(pe):
                                    yield out
                        case _:
                            error = self._on_protocol(event) or error
        finally:
            await self.stop()
        self.result.text = self.result.text or "".join(chunks)
        self.result.operations = list(self.proposals.ops)
        if error is not None:
            self.proposals.end_all(Ended.CANCELLED if isinstance(error, Cancelled)
                                   else Ended.TURN_OVER)
            self._finish_error(error)
            return
        async for out in self._apply():
            yield out

    def _drain(self, items: collections.deque[Any], chunks: list[str]) -> None:
        """Empty the inbox of a cancelled turn without parsing: the text that came is kept
        (a retry's rewind applied) and so are the facts of the protocol events."""
        while items:
            item = items.popleft()
            if type(item) is TextDelta:
                chunks.append(item.text)
            elif isinstance(item, Rewound):
                chunks[:] = ["".join(chunks)[:item.keep]]
            elif isinstance(item, Event):
                self._on_protocol(item)

    def _on_protocol(self, event: Event) -> SparkPairError | None:
        r = self.result
        match event:
            case Started(model=model, transport=transport):
                r.model, r.transport = model, transport
            case ModelChanged(new=new):
                r.model = new
            case TransportChanged(new=new):
                r.transport = new
            case Usage():
                r.usage = event
            case Completed():
                r.metrics, r.retries, r.response_id = (event.metrics, event.retries,
                                                       event.response_id)
                r.usage = event.usage or r.usage
                return event.cut  # the server cut the reply: nothing of it is written
            case Failed(error=error, retries=retries):
                r.retries = retries
                return error
        return None

    async def _pump(self) -> None:
        put, put_text = self.inbox.put, self.inbox.put_text
        observe = self.s.observe
        watch = self.stopwatch
        assert watch is not None
        arrived = watch.text  # text is timed as it arrives, not as it is handled
        share = LoopShare()
        try:
            if self.s.ready is not None:
                await self.s.ready()
            # text that may wait anyway may come a read at a time (one TextDelta per read)
            async for event in self.s.client.stream(self.request,
                                                    gather=self.inbox.latency > 0):
                if type(event) is TextDelta:  # the hot path: one per server message
                    arrived(len(event.text))
                    put_text(event)
                else:
                    match event:  # the next attempt is timed afresh (as the client does)
                        case Retrying(delay_s=delay):
                            watch.again(delay)
                        case TransportChanged() | ModelChanged():
                            watch.again()
                        case FirstToken(ttft_s=ttft):  # its request went out that long ago
                            watch.sent(watch.clock() - ttft)
                    if observe is not None:
                        observe(event)
                    put(event)
                await share.take()
        except Exception as exc:  # a bug below the client: report, never hang the turn
            put(exc if isinstance(exc, SparkPairError) else
                ModelError(f"the model client failed: {exc!r}"))
        put(_END)

    # ---- parse events -> proposals ---------------------------------------------------------

    async def _on_parse(self, pe: ParseEvent) -> list[SessionEvent]:
        from ..edits.parse_events import FileFinished, FileStarted

        out: list[SessionEvent] = [pe]
        if isinstance(pe, FileStarted):
            self.writing = pe.path
            if pe.path not in self.disk:
                self.disk[pe.path] = await asyncio.to_thread(_hash_of, self.s.root, pe.path)
            # not shown to the model: the operation is computed against the file as it is now
            self.base.setdefault(pe.path, self.disk[pe.path])
            if pe.op_kind == OpKind.CREATE and pe.path not in self.existed:
                self.existed[pe.path] = (self.base.get(pe.path) is not None
                                         or await asyncio.to_thread(_present, self.s.root,
                                                                    pe.path))
            if pe.path in self.changed_early:
                self.changed_early.discard(pe.path)
                out.append(Stale(pe.path, None))
        elif isinstance(pe, FileFinished):
            self.writing = None
            op = pe.op
            if not isinstance(op, Create) and op.base_hash is None:
                # a delete goes only with the file the model saw, or one matching its lines
                # exactly (a file the model never saw is compared as it is on disk)
                seen = self.shown if isinstance(op, Delete) else self.base
                op.base_hash = seen.get(op.path)
            problem = None
            if isinstance(op, Delete):  # in a thread: the file is read, git is asked
                problem = await asyncio.to_thread(self._vet_delete, op)
            stale = any(self._is_stale_path(p) for p in op_paths(op))
            index = self.proposals.add(op)
            if self.cancel_reason is not None:  # nobody is asked once the turn is cancelled
                self.proposals.current[index].ended = Ended.CANCELLED
            elif self.ask:  # a question never edits: refused at the apply step
                self.proposals.current[index].ended = Ended.TURN_OVER
            elif problem is not None:  # never asked: it cannot go as it is
                self.refused[index] = problem
                out.append(Refused(index, op, problem.message, _refusal_kind(problem)))
            elif stale:
                out.extend(await self._ask_stale(index))
            else:
                out.append(self.proposals.ask(index, stale=False))
        return out

    def _vet_delete(self, op: Delete) -> EditError | None:
        """Why a delete cannot go after the operations before it (its file is missing, its
        lines are not the whole file, it shows none and the model never saw the file), else
        None, with `op.uncommitted` set for the approver's warning (blocking: git, a read)."""
        from ..edits.apply import check_each, flag_uncommitted

        ops = [*(o for o in self.proposals.ops if op.path in op_paths(o)), op]
        try:
            found = [e for i, e in check_each(self.s.root, ops, stop=self.stopping)
                     if i == len(ops) - 1]
        except Cancelled:
            return None  # the turn is stopping: its cancel ends it
        if found:
            return found[0]
        flag_uncommitted(self.s.root, [op])
        return None

    # ---- staleness -----------------------------------------------------------------------

    def _changed(self, paths: set[str]) -> None:
        """Called by the watcher (on the loop) with repo paths that changed on disk; the turn
        loop looks at them (hashing in a thread) as soon as it can."""
        self.inbox.put(_Changed(frozenset(paths)))

    def _is_stale_path(self, path: str) -> bool:
        return path in self.base and self.disk.get(path) != self.base[path]

    async def _on_changed(self, paths: frozenset[str]) -> AsyncIterator[SessionEvent]:
        """One Stale per change of a file the model saw or an operation names; a file no
        operation names yet is reported when its operation starts."""
        for path in sorted(paths):
            index = self.proposals.index_of(path)
            if path not in self.disk and index is None:
                continue  # the model never saw it: an operation on it takes it as it is then
            now = await asyncio.to_thread(_hash_of, self.s.root, path)
            if path in self.disk and now == self.disk[path]:
                continue  # touched but not changed (or a late event for an earlier write)
            self.disk[path] = now
            if index is None and path != self.writing:
                self.changed_early.add(path)
                continue
            self.changed_early.discard(path)
            yield Stale(path, index)
            if index is not None:
                for out in await self._ask_stale(index):
                    yield out

    async def _ask_stale(self, index: int) -> list[SessionEvent]:
        """The target of operation `index` changed: refuse it when it no longer fits the file
        on disk, else ask again with a stale proposal."""
        from ..edits.apply import check_ops

        op = self.proposals.ops[index]
        self.proposals.end(index, Ended.STALE)
        try:
            found = await asyncio.to_thread(check_ops, self.s.root, [op], stop=self.stopping)
        except Cancelled:
            return []  # the turn is stopping: its cancel ends it
        if found:
            error = StaleError(found[0])
            self.refused[index] = error
            return [Refused(index, op, found[0], RefusalKind.STALE)]
        self.refused.pop(index, None)
        return [self.proposals.ask(index, stale=True)]

    async def _last_look(self) -> AsyncIterator[SessionEvent]:
        """The last look before the write, once every decision is in: a target that changed
        on disk since it was last seen (the watcher had not reported it yet) is handled as a
        reported change is: `Stale`, then the operation is refused when it no longer fits,
        else asked again (the write waits for the fresh decision)."""
        decided = self.proposals.decided
        if self.cancel_reason is not None or self.ask or any(
                d is not None and d.action == Action.REFUSE for d in decided):
            return  # nothing will be written
        todo = [(i, op) for i, (op, d) in enumerate(zip(self.proposals.ops, decided, strict=True))
                if d is not None and d.action in (Action.ACCEPT, Action.SKIP)
                and i not in self.refused and _has_effect(select_hunks(op, d))]
        if not todo:
            return
        chosen = self._straight_write()
        if chosen is None:
            self.looks = await asyncio.to_thread(self._look, todo)
        else:  # one trip to a worker thread for the look and the write
            self.looks, self.written = await _to_the_end(asyncio.ensure_future(
                asyncio.to_thread(self._look_then_write, todo, chosen)))
        for i, op in todo:
            stale, now = self.looks[i]
            if not stale or now == self.disk.get(op.path, op.base_hash):
                continue
            self.disk[op.path] = now
            yield Stale(op.path, i)
            self.late[i] = self.late.get(i, 0) + 1
            if self.late[i] > MAX_LATE_CHANGES:  # never settles: not asked forever
                self.proposals.end(i, Ended.STALE)
                error = StaleError(f"{op.path} keeps changing on disk; it was not written",
                                   hint="wait until whatever writes it is done, then run the "
                                        "turn again")
                self.refused[i] = error
                yield Refused(i, op, error.message, RefusalKind.STALE)
                continue
            for out in await self._ask_stale(i):
                yield out

    def _straight_write(self) -> list[tuple[int, Operation]] | None:
        """The operations the apply step writes when the last look finds none of their files
        changed: every decision is in and none refuses, no operation waits on a stale check,
        and some have an effect. None when the apply step has more to weigh first."""
        decided = self.proposals.decided
        if self.cancel_reason is not None or self.ask or self.refused or any(
                d is None or d.action == Action.REFUSE for d in decided):
            return None
        chosen = [(i, select_hunks(op, d))
                  for i, (op, d) in enumerate(zip(self.proposals.ops, decided, strict=True))
                  if d is not None and d.action == Action.ACCEPT]
        return [(i, op) for i, op in chosen if _has_effect(op)] or None

    def _look_then_write(self, todo: list[tuple[int, Operation]],
                         chosen: list[tuple[int, Operation]]
                         ) -> tuple[dict[int, tuple[bool, str | None]],
                                    AppliedTurn | SparkPairError | None]:
        """The last look and, when it finds no target changed, the write it would lead to
        (in the same worker thread: the end of a turn waits for one thread, not two)."""
        from ..edits.apply import apply_turn

        looks = self._look(todo)
        if any(stale for stale, _ in looks.values()):
            return looks, None
        try:
            return looks, apply_turn(self.s.root, [op for _, op in chosen],
                                     journal=self.s.journal, turn_id=self.result.turn_id,
                                     summary=self._summary(), stop=self.stopping)
        except (Cancelled, EditError) as exc:  # the apply step reports it
            return looks, exc

    def _summary(self) -> str:
        return " ".join(self.prompt.split())[:200]

    def _look(self, ops: list[tuple[int, Operation]]) -> dict[int, tuple[bool, str | None]]:
        """For each operation (in a worker thread): whether its target differs from what it
        was computed against, and the target's hash now."""
        root, out = self.s.root, {}
        for i, op in ops:
            now = _hash_of(root, op.path)
            if isinstance(op, Create):  # stale only if it appeared during the turn; a file that
                # was already there is a conflict (a create never overwrites), not a stale file
                existed = self.existed.get(op.path, self.base.get(op.path) is not None)
                out[i] = (not existed and (now is not None or _present(root, op.path)), now)
            else:
                out[i] = (op.base_hash is not None and now != op.base_hash, now)
        return out

    # ---- apply -----------------------------------------------------------------------------

    async def _apply(self) -> AsyncIterator[SessionEvent]:
        from ..edits.apply import AppliedTurn, apply_turn, check_each, check_ops

        r = self.result
        if self.cancel_reason is not None and not isinstance(self.written, AppliedTurn):
            # (a write the last look began gave way to it: what it waited for is said too)
            stopped = self.written if isinstance(self.written, Cancelled) else None
            self._finish_error(self.cancel_reason if stopped is None else self._stopped(stopped))
            return
        ops = self.proposals.ops
        if self.ask:
            self.proposals.decided = [Decision(Action.REFUSE, ASK_REASON) for _ in ops]
        decisions = [d or Decision(Action.SKIP, "no decision") for d in self.proposals.decided]
        r.decisions = list(decisions)
        r.outcomes = [Outcome.NOT_APPLIED] * len(ops)
        refused = [(i, d.reason) for i, d in enumerate(decisions) if d.action == Action.REFUSE]
        for i, reason in refused:
            yield Refused(i, ops[i], reason, RefusalKind.POLICY)
        chosen = [(i, select_hunks(op, d))
                  for i, (op, d) in enumerate(zip(ops, decisions, strict=True))
                  if d.action == Action.ACCEPT]
        chosen = [(i, op) for i, op in chosen if _has_effect(op)]
        # a dry run writes nothing but checks what --apply would write
        dry = not refused and not chosen and any(d.action == Action.SKIP for d in decisions)
        checked = chosen if not dry else [
            (i, op) for i, op in enumerate(ops)
            if decisions[i].action == Action.SKIP and _has_effect(op)]
        problems: list[tuple[int, SparkPairError]] = [
            (i, err) for i, err in sorted(self.refused.items())
            if decisions[i].action != Action.REJECT]
        for i, op in checked:
            if refused or i in self.refused:
                continue
            if i not in self.looks:
                self.looks.update(await asyncio.to_thread(self._look, [(i, op)]))
            if not self.looks[i][0]:
                continue  # fresh operations are checked together by apply_turn
            try:  # re-check against the newer file (off the loop, so the deadline can fire)
                found = await asyncio.to_thread(check_ops, self.s.root, [op],
                                                stop=self.stopping)
            except Cancelled as exc:
                self._finish_error(self._stopped(exc))
                return
            if found:
                problems.append((i, StaleError(found[0])))
                yield Refused(i, op, found[0], RefusalKind.STALE)
        if refused:
            self._finish_error(PolicyRefused(_refusal_message(ops, refused)),
                               TurnStatus.REFUSED)
            return
        if problems:
            self._finish_error(problems[0][1], TurnStatus.CONFLICT)
            return
        if dry:
            try:
                found_each = await asyncio.to_thread(check_each, self.s.root,
                                                     [op for _, op in checked],
                                                     stop=self.stopping)
            except Cancelled as exc:
                self._finish_error(self._stopped(exc))
                return
            if found_each:
                i, op = checked[found_each[0][0]]
                error = found_each[0][1]
                yield Refused(i, op, error.message, _refusal_kind(error))
                self._finish_error(error, TurnStatus.CONFLICT)
            else:
                r.status = TurnStatus.DRY_RUN
            return
        if not chosen:
            r.status = TurnStatus.DRY_RUN if any(d.action == Action.SKIP for d in decisions) \
                else (TurnStatus.REJECTED if decisions else TurnStatus.NO_CHANGES)
            return
        try:
            if isinstance(self.written, SparkPairError):
                raise self.written
            applied = self.written or await _to_the_end(asyncio.ensure_future(asyncio.to_thread(
                apply_turn, self.s.root, [op for _, op in chosen], journal=self.s.journal,
                turn_id=r.turn_id, summary=self._summary(), stop=self.stopping)))
        except Cancelled as exc:  # the deadline came while planning or waiting for the lock
            self._finish_error(self._stopped(exc))
            return
        except EditError as exc:
            at = exc.details.get("op_index")
            i, op = chosen[at] if isinstance(at, int) and 0 <= at < len(chosen) else next(
                ((i, op) for i, op in chosen if any(p in exc.message for p in op_paths(op))),
                chosen[0])
            yield Refused(i, op, exc.message, _refusal_kind(exc))
            self._finish_error(exc, TurnStatus.CONFLICT)
            return
        for i, _ in chosen:
            r.outcomes[i] = Outcome.APPLIED
        r.changed, r.notes = list(applied.changed), list(applied.notes)
        # operations that leave every byte as it was write no turn: there is none to undo
        r.status = TurnStatus.APPLIED if applied.changed else TurnStatus.NO_CHANGES
        if self.cancel_reason is not None and applied.changed:
            r.notes.append(f"{self.cancel_reason.message} while the files were being written; "
                           "a write is never cut short, so the turn was applied whole")
        if self.s.recorder is not None:  # the request log is written meanwhile (its thread)
            self.s.recorder.flush(r.turn_id)
        yield Applied(applied.turn_id, tuple(applied.changed), tuple(r.notes))

    def stopping(self) -> bool:
        """Whether the turn was cancelled (checks and the journal lock give way to it; called
        from worker threads)."""
        return self.cancel_reason is not None

    def _stopped(self, exc: Cancelled) -> Cancelled:
        """The turn's own cancel reason, with what was stopped (e.g. who holds the lock)."""
        reason = self.cancel_reason
        if reason is None or "waiting" not in exc.details:
            return reason or exc
        return Cancelled(f"{reason.message}; {exc.message}", hint=exc.hint, **reason.details)

    def _finish_error(self, error: SparkPairError, status: TurnStatus | None = None) -> None:
        r = self.result
        r.error = error
        r.status = status or (TurnStatus.CANCELLED if isinstance(error, Cancelled)
                              else TurnStatus.FAILED)
        if isinstance(error, Cancelled) and r.metrics is None and self.stopwatch is not None:
            tokens = r.usage.output_tokens if r.usage else estimate_tokens(r.text)
            r.metrics = self.stopwatch.stopped(tokens)  # stopped: report what was measured
            if r.usage is None:  # no count from the server: estimate both ways
                r.usage = Usage(estimate_request_tokens(self.request), tokens, estimated=True)
        if not r.outcomes:
            r.outcomes = [Outcome.NOT_APPLIED] * len(self.proposals.ops)
        if not r.decisions:
            r.decisions = list(self.proposals.decided)


async def _to_the_end(work: asyncio.Future[Any]) -> Any:
    """The outcome of the write in its worker thread, also when the task awaiting it is
    cancelled meanwhile: the thread cannot be stopped once it writes, so the turn reports what
    it did (the write gives way to a stop only before its first file). The cancel is spent."""
    cancelled = 0
    try:
        while True:
            try:
                return await asyncio.shield(work)
            except asyncio.CancelledError:
                if work.cancelled():
                    raise
                cancelled += 1
    finally:
        task = asyncio.current_task()
        if task is not None:
            for _ in range(cancelled):
                task.uncancel()


def _gathered(first: TextDelta, items: collections.deque[Any]) -> TextDelta:
    """`first` and the text deltas queued right behind it, as one (up to GATHER_CHARS, so a
    burst is still parsed in slices that leave the loop its turns)."""
    texts = [first.text]
    size = len(first.text)
    while items and type(items[0]) is TextDelta and size < GATHER_CHARS:
        text = items.popleft().text
        texts.append(text)
        size += len(text)
    return TextDelta("".join(texts))


def _start_parsing() -> DiffParser:
    """A parser for the reply; the apply step's modules load in a worker thread meanwhile."""
    from ..edits.parser import DiffParser

    asyncio.get_running_loop().run_in_executor(None, _load_apply)
    return DiffParser()


def _load_apply() -> None:
    import spark_pair.edits.apply  # noqa: F401 - loaded ahead of the apply step


def _refusal_kind(error: SparkPairError) -> RefusalKind:
    if isinstance(error, StaleError):
        return RefusalKind.STALE
    return RefusalKind.PATH if isinstance(error, PathRefused) else RefusalKind.CONFLICT


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
    from ..edits.paths import confine

    try:
        _, full = confine(root, rel)
    except SparkPairError:
        return False
    return os.path.lexists(full)


def _has_effect(op: Operation) -> bool:
    if isinstance(op, Rename | Create | Delete):
        return True
    return bool(op.hunks)


def _hash_of(root: Path, rel: str) -> str | None:
    """The content hash of a regular file inside the repository, else None (blocking: call it
    in a thread)."""
    from ..edits.paths import read_regular

    data = read_regular(root, rel)
    return None if data is None else content_hash(data)


