"""One running turn: the stream loop (parse, propose, stale files), then the apply step."""

from __future__ import annotations

import asyncio
import collections
import contextlib
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from ..base.errors import (
    Cancelled,
    EditError,
    ModelError,
    ParseError,
    SparkPairError,
    StaleError,
    excerpt,
)
from ..edits.ops import Create, Delete, op_paths
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
from ..protocol.metrics import Stopwatch
from ..store.forms import Form
from . import look
from .apply_step import ApplyStep, has_effect, refusal_kind, to_the_end
from .approval import Action, Ended, select_hunks
from .events import (
    Looked,
    OperationProposed,
    RefusalKind,
    Refused,
    RepairFinished,
    SessionEvent,
    Stale,
    TurnResult,
)
from .inbox import END, GATHER_CHARS, WAKE, Answered, DiskChanged, Inbox, LoopShare, gathered
from .parts import Parts
from .proposals import Proposals
from .stale import StaleTracker

if TYPE_CHECKING:  # the parser and the repair round load once the request is out
    from ..edits.apply import AppliedTurn
    from ..edits.parse_events import ParseEvent
    from ..edits.parser import DiffParser
    from .repair_round import Done, RepairRound

MAX_LATE_CHANGES = 3  # times one operation is asked again for a change seen at the last look


class TurnRun(ApplyStep):
    """The state of one turn while it runs: the stream loop, then the apply step."""

    def __init__(self, parts: Parts, request: TurnRequest, hashes: dict[str, str | None],
                 result: TurnResult, prompt: str, ask: bool = False, latency: float = 0.0
                 ) -> None:
        self.s = parts
        self.prompt = prompt
        self.ask = ask  # a question: prose is the answer, operations are refused
        self.request = request
        self.result = result
        self.stale = StaleTracker(parts.root, hashes)  # which targets changed on disk
        self.proposals = Proposals(parts.approver, result.turn_id)
        self.inbox = Inbox(latency)
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
        self.repair: RepairRound | None = None  # made at the stream's end

    def cancel(self, reason: Cancelled) -> None:
        if self.cancel_reason is None:
            self.cancel_reason = reason
            self.proposals.end_all(Ended.CANCELLED)
            self.inbox.put(WAKE)

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
        if self.repair is not None:
            await self.repair.cancel()

    async def events(self) -> AsyncIterator[SessionEvent]:
        chunks: list[str] = []
        error: SparkPairError | None = None
        # the request goes out first: the parser, the apply step and the watcher load with
        # the first event (the client's Started comes once the request is out), while the
        # server works on its first token
        self.send()
        self.proposals.on_answer = lambda p: self.inbox.put(Answered(p))
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
                        if not streaming and not self.proposals.pending() and \
                                (self.repair is None or not self.repair.running):
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
                    if item is WAKE:
                        continue
                    if isinstance(item, Answered):
                        decided = self.proposals.answered(item.proposal)
                        if decided is not None:
                            yield decided
                        continue
                    if isinstance(item, DiskChanged):
                        async for out in self._on_changed(item.paths):
                            yield out
                        continue
                    if not streaming:  # (the repair round's items come only after the stream)
                        from .repair_round import Done, News

                        if isinstance(item, News):
                            yield item.event
                        elif isinstance(item, Done):
                            for out in self._repaired(item):
                                yield out
                        continue
                    if parser is None:
                        self.parser = parser = _start_parsing()
                        from ..edits.parse_events import FileFinished, FileStarted
                    if item is END or isinstance(item, SparkPairError):
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
                            error = self._unreadable(exc)
                            break
                        if not self.proposals.ops and not self.ask:
                            error = _no_diff(self.result.text)
                            break
                        if self.proposals.ops and not self.ask:
                            from .repair_round import RepairRound

                            self.repair = RepairRound(self.s, self.inbox.put, self.stopping)
                            self.repair.start(self.proposals.ops, self.request,
                                              self.result.text, self.result.model)
                        continue
                    event: Event = item
                    if gather and type(event) is TextDelta and items and \
                            type(items[0]) is TextDelta:
                        event = gathered(event, items)
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
                                    failed = self._unreadable(exc)
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
                            self.stale.writing = None
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

    def _unreadable(self, error: SparkPairError) -> SparkPairError:
        """A reply whose diff could not be read counts as refused in the model's form."""
        if isinstance(error, ParseError):
            self.result.form = Form.REFUSED
        return error

    def _repaired(self, done: Done) -> list[SessionEvent]:
        """The look after the stream (and the repair round, if one ran) is over: the reply's
        form is known, and each operation the round mended is asked again."""
        from .repair import reply_form

        if done.survey is None:
            return []
        outcome = done.outcome
        self.result.form = str(reply_form(done.survey, outcome))
        if outcome is None:
            return []
        self.result.repair = outcome
        mine, more = self.result.usage, outcome.usage
        if mine is not None and more is not None:  # the turn's tokens: the repair's count too
            self.result.usage = Usage(mine.input_tokens + more.input_tokens,
                                      mine.output_tokens + more.output_tokens,
                                      mine.estimated or more.estimated)
        out: list[SessionEvent] = [RepairFinished(outcome)]
        for i, op in sorted(outcome.ops.items()):
            if self.cancel_reason is not None:
                break
            # asked again whatever was decided: the operation is not the one decided on (a
            # front end may have left it out at once, as it could not apply)
            self.proposals.end(i, Ended.REPAIRED)
            self.proposals.ops[i] = op
            self.refused.pop(i, None)
            out.append(self.proposals.ask(i, stale=False))
        return out

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
            case Retrying(attempt=attempt):  # counted as they happen: a stopped run keeps them
                r.retries = attempt
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
            async for event in look.stream(self):  # (and the second look's request)
                if type(event) is TextDelta:  # the hot path: one per server message
                    arrived(len(event.text))
                    put_text(event)
                elif isinstance(event, (SparkPairError, Looked)):
                    put(event)
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
        put(END)

    # ---- parse events -> proposals ---------------------------------------------------------

    async def _on_parse(self, pe: ParseEvent) -> list[SessionEvent]:
        from ..edits.parse_events import FileFinished, FileStarted

        out: list[SessionEvent] = [pe]
        if isinstance(pe, FileStarted):
            self.stale.writing = pe.path
            if await self.stale.file_started(pe.path, pe.op_kind):
                out.append(Stale(pe.path, None))
        elif isinstance(pe, FileFinished):
            self.stale.writing = None
            op = pe.op
            if not isinstance(op, Create) and op.base_hash is None:
                op.base_hash = self.stale.base_of(op)
            problem = None
            if isinstance(op, Delete):  # in a thread: the file is read, git is asked
                problem = await asyncio.to_thread(self._vet_delete, op)
            stale = any(self.stale.is_stale(p) for p in op_paths(op))
            index = self.proposals.add(op)
            if self.cancel_reason is not None:  # nobody is asked once the turn is cancelled
                self.proposals.current[index].ended = Ended.CANCELLED
            elif self.ask:  # a question never edits: refused at the apply step
                self.proposals.current[index].ended = Ended.TURN_OVER
            elif problem is not None:  # never asked: it cannot go as it is
                self.refused[index] = problem
                out.append(Refused(index, op, problem.message, refusal_kind(problem)))
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
        self.inbox.put(DiskChanged(frozenset(paths)))

    async def _on_changed(self, paths: frozenset[str]) -> AsyncIterator[SessionEvent]:
        """One Stale per change of a file the model saw or an operation names; a file no
        operation names yet is reported when its operation starts."""
        for path in sorted(paths):
            index = self.proposals.index_of(path)
            if not await self.stale.changed(path, index is not None):
                continue
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
                and i not in self.refused and has_effect(select_hunks(op, d))]
        if not todo:
            return
        chosen = self._straight_write()
        if chosen is None:
            self.looks = await asyncio.to_thread(self.stale.look, todo)
        else:  # one trip to a worker thread for the look and the write
            self.looks, self.written = await to_the_end(asyncio.ensure_future(
                asyncio.to_thread(self._look_then_write, todo, chosen)))
        for i, op in todo:
            stale, now = self.looks[i]
            if not stale or not self.stale.seen_now(op, now):
                continue
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


def _start_parsing() -> DiffParser:
    """A parser for the reply; the apply step's and the repair round's modules load in a
    worker thread meanwhile."""
    from ..edits.parser import DiffParser

    asyncio.get_running_loop().run_in_executor(None, _load_apply)
    return DiffParser()


def _load_apply() -> None:
    import spark_pair.edits.apply  # noqa: F401 - loaded ahead of the apply step
    import spark_pair.session.repair_round  # noqa: F401 - and of the look after the stream


def _no_diff(text: str) -> ParseError:
    """A reply with no operation in it: what it began with (a script sees nothing else of it;
    a screen showing the reply says less, `on_screen`), or that it was empty (a model that
    wrote nothing is not one that proposed no change)."""
    if not text.strip():
        return ParseError("the reply is empty: the model wrote nothing" if not text else
                          "the reply is empty: the model wrote only blank lines",
                          hint="nothing was written; regenerate or rephrase (a local server: "
                          "its chat template may drop the instructions or never end a reply)")
    return ParseError(f"the reply holds no unified diff; it begins: {excerpt(text, 120)!r}",
                      on_screen="the reply holds no unified diff (its text is above)")
