"""One turn: context -> request -> stream -> incremental parse -> approvals -> apply -> record.

    session = Session(root, client, approver, workspace=workspace, journal=None,
                      recorder=TurnRecorder(store), watch=watcher.watch)
    async for event in session.turn("rename foo to bar", files=["src/a.py"]):
        match event: ...
    session.cancel(timeout=False)   # from anywhere: stop the turn; keeps what arrived

Front ends open a session through `runtime.open_runtime` (docs/seam.md is the contract).

The events a turn yields, in order, are listed in `Session`'s docstring.

After a `Rewound` the operations parsed so far are forgotten (their proposals end with
`Ended.REWOUND`) and the parse events restart from the kept text, with the same indices.

The approver is asked about each operation as soon as it is parsed. Nothing is written without
a Decision for every operation; a REFUSE, a conflict or a stale file that no longer fits means
nothing at all is written. Writes go through edits.apply_turn (all-or-nothing, journaled for
undo). A cancelled or failed turn writes nothing. File reads, hashing, git, the journal lock
and the writes run in worker threads: the event loop never waits on the disk.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..base.errors import Cancelled, SparkPairError, TurnInProgress
from ..base.ids import new_turn_id
from ..protocol.events import Event, TurnRequest
from ..protocol.metrics import estimate_tokens
from .approval import Approver, Ended, PolicyApprover
from .events import (
    ContextChosen,
    Frame,
    SessionEvent,
    TurnFinished,
    TurnResult,
    TurnStarted,
    TurnStatus,
)
from .parts import ClientLike, Parts, TurnRecorder, WatchFn, WorkspaceLike

if TYPE_CHECKING:  # the turn's code loads with the first turn; verdicts with a review
    from ..store.verdicts import Verdict
    from .turn import TurnRun

class Session:
    """A conversation with one model client over one repository; one turn at a time.

    A turn yields these events (SessionEvent), in this order:

    1. `TurnStarted` first, then `ContextChosen` (what the request shows, and why) when the
       workspace says.
    2. While the reply streams, as they happen: the client's `Started`, `FirstToken` (before an
       attempt's first `TextDelta`), `TextDelta`, `Retrying`, `Rewound`, `TransportChanged`,
       `ModelChanged`, `Usage`, `Steered` (the answer to a `steer()`; accepted comes after a
       `Rewound` to 0, as the reply starts again), then `Completed` or `Failed`;
       the parser's `FileStarted`, `HunkStarted`, `LineAdded`, `FileFinished` (after the
       `TextDelta` that completed them); `OperationProposed` right after its `FileFinished`;
       `Decided` when the approver answers (during the stream or after it); `Stale` when a target
       changes on disk (at once, once per change; `index` None while its file is still being
       written), followed by a new `OperationProposed` for that index (asked again) or by a
       `Refused(kind=STALE)` when the operation no longer fits the changed file.
       A reply of only `NEED: NAME` lines (the second look, once per turn) is neither parsed
       nor yielded as text: `Looked` says what it asked for and what went, then the one
       follow-up request's events come as above (a second such reply ends the turn: its
       result's error says so).
    3. Right after the stream, when some hunk matches nowhere in its file (and `repair` is on):
       `RepairStarted`, the one repair request (its events are not yielded, but for a
       `RepairRetrying` per retry of it), `RepairFinished` with what it came to, then a new
       `OperationProposed` for each operation it mended.
    4. After the stream and every decision: `Stale` for a change found at the last look
       before the write, followed (as in 2.) by a new `OperationProposed` and its `Decided`,
       or by a `Refused(kind=STALE)`; then `Refused` for each operation that stops the turn,
       `Applied` when files were written.
    5. `TurnFinished(result)` last, always (also after a failure or a cancel).

    `cancel()` ends a turn early (pending proposals end with `Ended.CANCELLED`; with no turn
    running it does nothing); a second `turn()` while one runs raises TurnInProgress."""

    def __init__(self, root: Path, client: ClientLike, approver: Approver, *,
                 workspace: WorkspaceLike, journal: Any = None,
                 recorder: TurnRecorder | None = None, watch: WatchFn | None = None,
                 observe: Callable[[Event | TurnFinished], None] | None = None) -> None:
        self.root = Path(root)
        self.client = client
        self.approver = approver
        self.workspace = workspace
        self.journal = journal
        self.recorder = recorder
        self.watch = watch  # watch(on_change) -> async context manager delivering changed paths
        self.observe = observe  # sees every protocol event but text as it arrives (connection
        # state), and each turn's TurnFinished just before it is yielded (telemetry)
        self.ready: Callable[[], Awaitable[None]] | None = None  # awaited before each request
        # whether a finished turn is kept for the next (history, the files as the model saw
        # them); a front end that exits after its one turn (`run`) sets it False
        self.remember = True
        self.repair = True  # hunks that match nowhere go back to the model once per turn
        # called once a turn is over: (prompt, files, result, verdicts, remembered); the
        # stored session (session.stored) writes the turn
        self.keep: Callable[[str, Sequence[str], TurnResult, list[Verdict], bool], None] | None \
            = None
        self.turns = 0
        self._run: TurnRun | None = None
        self._busy = False
        self._early: Cancelled | None = None  # a cancel before the turn's run existed
        self._woken: asyncio.Event | None = None  # set by a cancel while files are chosen

    @property
    def running(self) -> bool:
        """Whether a turn is in flight."""
        return self._busy

    def cancel(self, *, timeout: bool = False, message: str | None = None) -> None:
        """Stop the turn in flight: what arrived is kept, nothing is written. Pending proposals
        end with `Ended.CANCELLED`. With no turn running this does nothing."""
        if not self._busy:
            return
        text = message or ("the --timeout ran out" if timeout else "the turn was cancelled")
        hint = "nothing was written"
        if timeout:
            hint += "; raise --timeout or check the endpoint"
        reason = Cancelled(text, timeout=timeout, hint=hint)
        if self._run is None:
            self._early = self._early or reason
            if self._woken is not None:
                self._woken.set()
        else:
            self._run.cancel(reason)

    async def steer(self, text: str) -> bool:
        """Send `text` to the turn streaming now as a correction (the server's own steering,
        WS mode; its answer comes as a `Steered` event). False when it could not go (no turn
        streaming, an HTTP transport): then stop the turn and resend (session.steer)."""
        steer = getattr(self.client, "steer", None)
        if not self._busy or self._run is None or steer is None:
            return False
        return bool(await steer(text))

    def turn(self, prompt: str, files: Sequence[str] = (), *, ask: bool = False,
             latency: float = 0.0, choose: bool = False) -> AsyncGenerator[SessionEvent, None]:
        """The events of one turn (see the module docstring for their order). Raises
        TurnInProgress when a turn is already running. `ask`: a question (an `AI?` comment):
        a prose reply is the answer, and an operation in it is refused, never written.
        `latency`: how late (seconds) model text may be handed over; the text that gathered
        meanwhile comes as one TextDelta. A front end that shows nothing per token passes a
        few hundredths, so the turn wakes that often instead of once per server message;
        anything but text (a proposal, a file change, the stream's end, a cancel) is never
        held back. `choose`: the workspace adds the files the prompt needs (its `plan`; a
        front end that chose them already, as the app does while the prompt is typed, passes
        them in `files`); a cancel meanwhile ends the turn at once."""
        self._refuse_overlap()
        return self._turn(prompt, files, ask, latency, choose)

    def frames(self, prompt: str, files: Sequence[str] = (), *, ask: bool = False,
               interval: float = 1 / 30) -> AsyncIterator[Frame]:
        """The turn's events coalesced into frames: one per `interval` at most, sent at once
        when a frame holds an OperationProposed, Stale, Failed or the TurnFinished."""
        from .frames import frames_of

        self._refuse_overlap()
        return frames_of(self.partial_line, self._turn(prompt, files, ask), interval)

    async def _chosen(self, prompt: str, files: Sequence[str]) -> list[str]:
        """`files` and those the workspace chooses for `prompt` (in a thread: the index may be
        read or built); `files` alone when a cancel comes first (the turn then ends at once)."""
        plan_of = getattr(self.workspace, "plan", None)
        if plan_of is None:
            return list(files)
        self._woken = asyncio.Event()
        planning = asyncio.ensure_future(asyncio.to_thread(plan_of, prompt, list(files)))
        woken = asyncio.ensure_future(self._woken.wait())
        try:
            await asyncio.wait({planning, woken}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            self._woken = None
            woken.cancel()
        if not planning.done():  # cancelled: the thread's result is not waited for
            planning.add_done_callback(_drop_result)
            return list(files)
        try:
            plan = planning.result()
        except (SparkPairError, OSError):  # no file chosen; the files given still go
            return list(files)
        return list(files) if plan is None else [*files, *plan.found.paths()]

    def partial_line(self) -> str:
        """The diff line being written now (empty between turns)."""
        run = self._run
        return "" if run is None else run.parser_partial()

    def parts(self) -> Parts:
        """What a turn starting now works with."""
        look = getattr(self.workspace, "look", None) if getattr(
            self.workspace, "second_look", False) else None
        return Parts(self.root, self.client, self.approver, self.journal, self.recorder,
                     self.watch, self.observe, self.ready, self.repair, look)

    def _verdicts(self, result: TurnResult) -> list[Verdict]:
        """What a person made of the turn (none for a policy's decisions, or when nothing or
        everything failed: a conflict or cancel writes nothing, whatever was decided)."""
        if isinstance(self.approver, PolicyApprover) or result.status not in (
                TurnStatus.APPLIED, TurnStatus.REJECTED, TurnStatus.CONFLICT) or (
                result.error is not None):  # (a conflict without error: all left out, unfit)
            return []
        from .review import verdicts_of

        return verdicts_of(result.operations, result.decisions)

    def _refuse_overlap(self) -> None:
        if self._busy:
            raise TurnInProgress("a turn is already running in this session")

    async def _turn(self, prompt: str, files: Sequence[str], ask: bool, latency: float = 0.0,
                    choose: bool = False) -> AsyncGenerator[SessionEvent, None]:
        self._refuse_overlap()
        self._busy, self._early = True, None
        try:
            turn_id = new_turn_id()
            followup = self.turns > 0
            given = list(files)  # the context set (what the workspace adds is not part of it)
            if choose:
                files = await self._chosen(prompt, files)
            built = self.workspace.build_now(prompt, files, followup=followup)
            request, hashes = built if built is not None else await asyncio.to_thread(
                self.workspace.build, prompt, files, followup=followup)
            result = TurnResult(turn_id, TurnStatus.FAILED)
            from .turn import TurnRun

            run = self._run = TurnRun(self.parts(), request, hashes, result, prompt, ask,
                                      latency)
            if self._early is not None:
                run.cancel(self._early)
            else:
                run.send()  # before the first event is handed over
            try:
                yield TurnStarted(turn_id, prompt, tuple(sorted(hashes)),
                                  _estimate_tokens(request), followup)
                chosen = getattr(self.workspace, "chosen", None)
                if chosen is not None:
                    yield ContextChosen(*chosen())
                async for event in run.events():
                    yield event
            finally:
                self._run = None
                await run.stop()  # left before its events were read
                run.end_proposals(Ended.TURN_OVER)
                if self.recorder is not None:
                    applied = result.status == TurnStatus.APPLIED
                    self.recorder.flush(turn_id if applied else None)
            if result.form and self.recorder is not None:
                from ..store.forms import Form

                self.recorder.form(turn_id, result.model, Form(result.form))
            verdicts = self._verdicts(result)
            if verdicts and self.recorder is not None:
                self.recorder.verdicts(turn_id, result.model, verdicts)
            self.turns += 1
            remembered = (self.remember and result.metrics is not None
                          and not result.metrics.partial)
            if remembered:  # the model answered: the turn joins the history
                await asyncio.to_thread(self.workspace.finish, request, result.text,
                                        list(result.changed), _note(verdicts))
            if self.keep is not None:
                self.keep(prompt, given, result, verdicts, remembered)
            finished = TurnFinished(result)
            if self.observe is not None:
                self.observe(finished)
            yield finished
        finally:
            self._busy = False


def _note(verdicts: Sequence[Verdict]) -> str:
    if not verdicts:
        return ""
    from .review import note_for_model

    return note_for_model(verdicts)


def _drop_result(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()  # read, so an error of an abandoned plan is not reported as lost


def _estimate_tokens(request: TurnRequest) -> int:
    texts = [request.instructions, *(m.content for m in request.history),
             *(m.content for m in request.new_input)]
    return estimate_tokens("".join(texts))
