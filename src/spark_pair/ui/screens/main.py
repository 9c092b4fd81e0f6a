"""The main screen: header, files, live diff, review, prompt, meter, footer; and the turn.

Events reach it as one `Driver.Frame` per frame; widgets are fed from the frame handler.
Workers do the slow things (opening the repository, undo, hashing, file reads) and post
messages; handlers own the screen's state.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from textual import messages, on, work
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Input, Static
from textual.worker import Worker, WorkerState

from ...base import gcpolicy
from ...base.errors import SparkPairError, UsageError
from ...base.printable import shown
from ...edits.ops import Rename, op_paths
from ...protocol.events import Completed, Failed, Rewound
from ...protocol.steer import Steered, SteerState
from ...session.events import (
    Applied,
    OperationProposed,
    Outcome,
    RefusalKind,
    Refused,
    Stale,
    TurnFinished,
    TurnStatus,
)
from .. import bindings, fit, review_tools, sessions, turn_queue
from ..chosen import ChosenFiles
from ..dialogs.confirm import ConfirmScreen
from ..driver import Driver, describe
from ..fixrounds import FixRounds
from ..review_state import Mark, Undone
from ..sessions import Choice
from ..steering import Steering
from ..widgets.diff_view import DiffView, HunkMark
from ..widgets.files import FilesPane
from ..widgets.footer import AppFooter
from ..widgets.header import AppHeader
from ..widgets.meter import Meter
from ..widgets.prompt import TRANSPORT_NAMES, Prompt, SlashSuggester
from ..widgets.review import ReviewPane
from .check import CheckScreen
from .help import HelpScreen


@dataclass
class Launch:
    """What the app opens: a repository, setting overrides, and an optional first prompt."""

    root: Path
    overrides: dict[str, str] = field(default_factory=dict)
    env: dict[str, str] | None = None
    prompt: str = ""  # sent as soon as the repository is open (the demo's turn)
    files: list[str] = field(default_factory=list)  # the context set at start
    prewarm: bool = True
    demo: Any = None  # a DemoSimulator to start first (spark-pair demo)
    clock: Callable[[], float] | None = None  # the meter's clock (tests freeze it)
    session: Choice | None = field(default_factory=Choice)  # the stored session (None: none)


class MainScreen(Screen[None]):
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]
    VERTICAL_BREAKPOINTS = [(0, "-tiny"), (22, "-short"), (24, "-mid"), (30, "-tall")]

    BINDINGS = bindings.MAIN

    def __init__(self, launch: Launch) -> None:
        super().__init__()
        self.launch = launch
        self.driver = Driver(launch.root, self, overrides=launch.overrides, env=launch.env,
                             prewarm=launch.prewarm, choice=launch.session)
        self.context: dict[str, int | None] = {rel: None for rel in launch.files}
        self.missing: frozenset[str] = frozenset()  # context files gone from disk (prepare)
        self.last_prompt = ""
        self.queued: list[tuple[str, list[str]]] = []  # AI! turns waiting for the running one
        self.turn_worker: Worker[None] | None = None
        self.streaming = False  # the turn's reply is still arriving (escape stops it)
        self.proposed_any = False
        self.open_error: SparkPairError | None = None
        self._clear_pending = False
        self._review_backlog: list[Any] = []  # frame events the review pane has yet to see
        self._file_list: list[str] | None = None
        self._prepare_timer: Timer | None = None
        self._sent: str | None = None  # the prompt text of the turn starting now
        self._notice_op: int | None = None  # the operation the notice is about (it gives way)
        self._prompt_has_text = False
        self._typed_in_turn = False  # the prompt was typed into while this turn ran
        self.trying = False  # `t`: run the check once the turn is applied
        self.left_out: dict[int, str] = {}  # operations of this turn that can not apply
        self._op_paths: dict[int, list[str]] = {}  # the paths each operation names
        self._path_uses: Counter[str] = Counter()  # how many operations name each path
        self.chooser = ChosenFiles(self, self._chosen_changed)  # files chosen for the draft
        self.fixes = FixRounds(self)  # check, fix rounds, escalation
        self.steering = Steering()  # corrections sent while a turn streams
        self._checking = False  # the check of a tried turn runs

    # ---- layout ----------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield AppHeader(id="header")
        with Horizontal(id="body"):
            yield FilesPane(id="files")
            yield DiffView(id="diff")
        yield ReviewPane(id="review")
        yield Static("", id="notice", classes="-empty", markup=False)  # paths: literal
        yield Prompt(self._send, placeholder="what should change? (/help for commands)",
                     id="prompt",
                     suggester=SlashSuggester(self.models, self._files, lambda: list(self.context)))
        yield Meter(id="meter", **({"clock": self.launch.clock} if self.launch.clock else {}))
        yield AppFooter()

    def on_mount(self) -> None:
        self.query_one(DiffView).border_title = "Live diff"
        self.query_one(AppHeader).repo = self.launch.root.name or str(self.launch.root)
        self.query_one(Prompt).focus()
        self.query_one(FilesPane).set_context(self.context)
        if not self.launch.prompt:
            self.say("type what should change and press enter · the files it needs are "
                     "chosen as you type · f1 lists every key")
        self._open()

    @work(group="open", exit_on_error=False)
    async def _open(self) -> None:
        demo = self.launch.demo
        if demo is not None:
            self.query_one(AppHeader).note = "starting the simulator…"
            try:
                overrides = await asyncio.to_thread(demo.start)
            except SparkPairError as exc:
                self.show_error(exc)
                return
            self.driver.overrides.update(overrides)
            self.driver.env = demo.env
            self.query_one(AppHeader).note = "demo"
        await sessions.pick_first(self)
        await self.driver.open()

    async def on_unmount(self) -> None:
        gcpolicy.release()
        self.driver.cancel()
        await self.driver.close()
        if self.launch.demo is not None:
            await asyncio.to_thread(self.launch.demo.stop)

    # ---- repository and connection ---------------------------------------------------------

    @on(Driver.Opened)
    def _opened(self, message: Driver.Opened) -> None:
        self.open_error = None
        self.query_one(AppHeader).model = message.model
        self.query_one(Meter).prices = dict(self.driver.settings.prices)
        for warning in self.driver.settings.warnings:
            self.notify(warning, title="config", severity="warning", timeout=8, markup=False)
        self._apply_keymap(self.driver.settings.keys)
        self.call_after_refresh(gcpolicy.settle)
        self._prepare()
        if self.launch.prompt:
            prompt, self.launch.prompt = self.launch.prompt, ""
            self.start_turn(prompt, self.sent_context())

    def _apply_keymap(self, keymap: dict[str, str]) -> None:
        unknown = bindings.unknown_ids(keymap)
        if unknown:
            self.show_error(UsageError(
                f"[keys] names no binding {', '.join(map(repr, unknown))}",
                hint="f1 shows every key with its id (dim, after the action), e.g. "
                     "review.accept, app.stop, files.toggle"))
        self.app.set_keymap({k: v for k, v in keymap.items() if k not in unknown})

    @on(Driver.Switched)
    def _switched(self, message: Driver.Switched) -> None:
        self.query_one(AppHeader).model = message.model
        self.query_one(Meter).prices = dict(self.driver.settings.prices)

    @on(Driver.SessionOpened)
    def _session_opened(self, message: Driver.SessionOpened) -> None:
        sessions.opened(self, message.name, message.turns, message.model)
        if message.turns and not self.context and message.context:  # its context set too
            self.context.update({rel: None for rel in message.context})
            self.query_one(FilesPane).set_context(self.context)
            self._prepare()

    @on(Driver.OpenFailed)
    def _open_failed(self, message: Driver.OpenFailed) -> None:
        self.open_error = message.error
        self.show_error(message.error)

    @on(Driver.ConnectionChanged)
    def _connection(self, message: Driver.ConnectionChanged) -> None:
        self.query_one(AppHeader).connection = message.connection

    @on(Driver.FilesChanged)
    def _files_changed(self, message: Driver.FilesChanged) -> None:
        self.query_one(FilesPane).add_changed(message.paths)
        if not message.paths.isdisjoint(self.context) or self.driver.shows(message.paths):
            self._prepare()

    @on(Driver.Warning)
    def _warning(self, message: Driver.Warning) -> None:
        self.notify(message.text, severity="warning", timeout=8, markup=False)

    @on(Driver.AIComments)
    def _ai_comments(self, message: Driver.AIComments) -> None:
        for comment in message.comments:
            prompt = f"Do what the AI! comment in {comment.path} line {comment.line} says" + (
                f": {comment.text}" if comment.text else "") + " (and remove the comment)"
            files = list(dict.fromkeys([comment.path, *self.sent_context()]))
            if self.driver.running or self.turn_worker is not None:
                self.queued.append((prompt, files))
                self._queue_changed()
                self.say(f"AI! comment in {shown(comment.path)} queued: it runs after this turn")
            else:
                self.start_turn(prompt, files)

    # ---- turns -----------------------------------------------------------------------------

    def sent_context(self) -> list[str]:
        """The context files a request shows: one gone from disk (a turn deleted it) stays in
        the set, unlisted and not sent, until it is back (/undo)."""
        return [rel for rel in self.context if rel not in self.missing]

    def start_turn(self, prompt: str, files: Sequence[str]) -> bool:
        """Start a turn (False: it cannot start now; the notice says why)."""
        if self.driver.session is None:
            if self.open_error is not None:
                self.show_error(self.open_error)
                self.query_one("#notice", Static).update(
                    describe(self.open_error) + "\n  fix it, then /transport auto opens again")
            else:
                self.say("not ready yet: the repository is still opening")
            return False
        if self.turn_worker is not None:
            self.say(self._busy("enter sends this (tab queues it to run after)"))
            return False
        self.fixes.turn_started(prompt, resent=prompt == self.last_prompt)
        self.last_prompt = prompt
        self.proposed_any = False
        self.trying = False
        gcpolicy.streaming()  # from the request on
        self.turn_worker = self.run_worker(self._turn(prompt, list(files)), group="turn",
                                           exit_on_error=False)
        self.streaming = True
        self._typed_in_turn = False
        self._queue_changed()
        # the screen is cleared when the turn's first frame arrives: the request goes out
        # first, not after a relayout and a new footer
        self._clear_pending = True
        return True

    def _clear_for_turn(self) -> None:
        self._clear_pending = False
        sent, self._sent = self._sent, None
        prompt = self.query_one(Prompt)
        if sent is not None and prompt.value == sent:  # not if something new was typed since
            prompt.value = ""
        self.query_one(DiffView).reset()
        note = self.steering.note_for_new_turn()
        if note:
            self.query_one(DiffView).note(note)
        self.query_one(Meter).reset()
        self.query_one(ReviewPane).clear()
        self._forget_ops()
        self.chooser.reset()
        self.query_one(FilesPane).new_turn()
        # a notice on screen gives way to the turn's own line rather than disappearing: its
        # row going to the live diff would lay the whole screen out again (twice: containers
        # resized ask for a second pass) while the first tokens arrive. It goes once the review
        # pane appears, in that layout
        self.say(STREAMING if self._notice_shown() else "")
        self.refresh_bindings()

    async def _turn(self, prompt: str, files: list[str]) -> None:
        try:
            files = await self.chooser.files_for(prompt, files)
            await self.driver.run_turn(prompt, files)
        except SparkPairError as exc:
            self.show_error(exc)

    @on(Worker.StateChanged)
    def _worker_changed(self, event: Worker.StateChanged) -> None:
        if event.worker is not self.turn_worker:
            if event.state is WorkerState.ERROR and event.worker.error is not None:
                self.show_error(event.worker.error)
            return
        if event.state in (WorkerState.SUCCESS, WorkerState.ERROR, WorkerState.CANCELLED):
            self._review_events()
            if event.state is WorkerState.ERROR and event.worker.error is not None:
                self.show_error(event.worker.error)
            self.turn_worker = None
            self.streaming = False
            self.call_after_refresh(gcpolicy.settle)  # the turn's last rows are painted
            if self._clear_pending:  # ended before its first frame
                self._clear_for_turn()
            self.driver.approver.reset()
            self.refresh_bindings()
            self._prepare()  # what the turn wrote, and the files the model saw, for the next
            if self.steering.restart is not None:  # a correction: it goes before the queue
                self.start_turn(self.steering.resend(self.last_prompt), self.sent_context())
            self.run_queued()

    @work(group="steer", exit_on_error=False)
    async def _steer(self, text: str) -> None:
        """enter while a turn streams: the server's own steering where it offers it, else the
        turn is stopped and sent again at once with the correction."""
        review = self.query_one(ReviewPane).review
        decided = len(review.entries) - len(review.undecided())
        self.steering.start(text, decided)
        if await self.driver.steer(text):
            self.query_one(DiffView).note(f"steering: the correction went to the running turn: "
                                          f"{text}")
        else:
            self._stop_and_resend("this connection cannot steer a running reply")

    def _stop_and_resend(self, why: str) -> None:
        text = self.steering.text
        if not self.steering.stop(why):
            return
        if self.streaming:
            self.driver.cancel("stopped for a correction")
            return
        self.steering.restart = None  # the reply is in: the correction is the next prompt
        prompt = self.query_one(Prompt)
        if not prompt.value:
            prompt.value = text
        self.say(f"the reply ended before the correction could go ({why}); it is back in the "
                 "prompt")

    def _on_steered(self, event: Steered) -> None:
        if event.state == SteerState.ACCEPTED:
            self.query_one(DiffView).note(self.steering.accepted())
        elif event.state == SteerState.PENDING:
            self.query_one(DiffView).note("steering: the server takes the correction at its "
                                          "next token")
        else:
            self._stop_and_resend(f"the server {event.state} it"
                                  + (f": {event.detail}" if event.detail else ""))

    @on(Prompt.Queue)
    def _queue(self, message: Prompt.Queue) -> None:
        """tab while a turn runs: the prompt is the next turn (it starts when this one ends)."""
        text = message.text.strip()
        if text.startswith("/"):
            self.say("a slash command is not queued: enter runs it")
            return
        prompt = self.query_one(Prompt)
        prompt.remember(text)
        prompt.value = ""
        self.queued.append((text, self.sent_context()))
        self._queue_changed()
        self.say(f"queued as turn {len(self.queued)} after this one · escape on the empty "
                 "prompt clears the queue once the reply is in")

    @on(Prompt.ClearQueue)
    def _clear_queue(self) -> None:
        n = len(self.queued)

        def answered(yes: bool | None) -> None:
            if yes:
                self.queued.clear()
                self._queue_changed()
                self.say(f"the queue is cleared ({n} turn(s) dropped)")

        self.app.push_screen(ConfirmScreen(f"clear the queue: drop {n} waiting turn(s)?"),
                             answered)

    def run_queued(self) -> None:
        """The next queued turn, once nothing runs: no turn, no check, no fix loop."""
        if self.queued and self.turn_worker is None and not self._checking and \
                not self.fixes.active:
            prompt, files = self.queued.pop(0)
            self.start_turn(prompt, files)
        self._queue_changed()

    def _queue_changed(self) -> None:
        """The prompt's chip and keys follow the queue and the turn in flight."""
        prompt = self.query_one(Prompt)
        prompt.turn_running = self.turn_worker is not None
        prompt.queued = len(self.queued)
        prompt.border_title = turn_queue.chip(self.queued)
        self.refresh_bindings()

    @on(Driver.Frame)
    def _frame(self, message: Driver.Frame) -> None:
        gcpolicy.streaming()
        if self._clear_pending:
            self._clear_for_turn()
        view = self.query_one(DiffView)
        view.feed(message.events, message.partial_line)
        for event in message.events:
            if type(event) is Steered:
                self._on_steered(event)
        self.query_one(Meter).feed(message.events)
        if self.streaming and any(isinstance(e, (Completed, Failed)) for e in message.events):
            self.streaming = False  # the reply is in: escape no longer stops the turn
            self.refresh_bindings()
            for note in (n for e in message.events if isinstance(e, Completed) for n in e.notes):
                self.notify(note, timeout=8, markup=False)
        if any(isinstance(e, _REVIEW_EVENTS) for e in message.events):
            # the review pane may appear and take focus (a new layout, a new footer): after
            # the diff's new rows are painted (and always before the turn's end is handled).
            # The screen learns of the view's repaint now, not when the view's own queue next
            # idles, so the update that paints the rows comes before the callback.
            if not self._review_backlog:
                self.post_message(messages.Update(view))
                self.call_after_refresh(self._review_events)
            self._review_backlog.extend(message.events)

    def _review_events(self) -> None:
        events, self._review_backlog = self._review_backlog, []
        review = self.query_one(ReviewPane)
        review.model = self.query_one(DiffView).model  # its title names who wrote the turn
        proposed = []
        for event in events:
            match event:
                case OperationProposed(proposal=proposal):
                    old = review.review.entries.get(proposal.index)
                    review.propose(proposal.index, proposal.op, stale=proposal.stale)
                    proposed.append((proposal.index, proposal.op))
                    if review.review.doomed:  # its notice stays: nothing will be written
                        pass
                    elif old is not None and old.amended and not old.sent:
                        # asked again against the file as it is now: the edit no longer fits
                        self.say(f"{shown(old.op.path)} changed on disk: your edit of it was "
                                 "dropped; press e to edit it again", op=proposal.index)
                    elif old is not None:  # asked again: its row says so
                        self._give_way(proposal.index)
                    if not self.proposed_any:
                        self.proposed_any = True
                        prompt = self.query_one(Prompt)
                        if not (prompt.has_focus and (prompt.value or self._typed_in_turn)):
                            review.focus()  # (never from a person typing a correction or
                            # the next turn: their keys would decide hunks; tab goes there)
                        if self._notice_says(STREAMING):
                            self.say("")
                case Stale(path=path, index=index):
                    if index is not None:
                        review.mark_stale(index)
                    if not review.review.doomed:  # (its notice says why nothing is written)
                        self.say(f"{shown(path)} changed on disk during the turn: stale",
                                 op=index)
                case Refused(index=index, op=op, reason=reason, kind=kind):
                    stale = kind is RefusalKind.STALE
                    review.refuse(index, f"refused ({kind}): {_first_line(reason)}", op,
                                  stale=stale)
                    self._give_way(index)
                    if not review.review.closed:
                        self._doomed(op, reason, stale)
                case Rewound():
                    review.clear()
                    self._give_way(self._notice_op)
                    self._forget_ops()
                    self.proposed_any = False
                case Applied():
                    pass
                case TurnFinished(result=result):
                    self._finished(result)
        if proposed:
            # an operation that shares a path with another of the turn (a rename, then an edit
            # of the new name) may fit only after it: the write step judges those
            for i, op in proposed:
                if i not in self._op_paths:
                    self._op_paths[i] = op_paths(op)
                    self._path_uses.update(self._op_paths[i])
            alone = [(i, op) for i, op in proposed
                     if all(self._path_uses[path] == 1 for path in op_paths(op))]
            if alone:
                self._check_fit(alone)

    def _forget_ops(self) -> None:
        self.left_out, self._op_paths = {}, {}
        self._path_uses.clear()

    @work(group="fit", exit_on_error=False)
    async def _check_fit(self, ops: list[tuple[int, Any]]) -> None:
        """Proposed operations that can not be applied to the files as they are are left out
        at once, with the reason in their row (the files are read in a thread)."""
        found = await asyncio.to_thread(fit.unfit_all, self.launch.root, ops)
        review = self.query_one(ReviewPane)
        marked = False
        for index, op, problems in found:
            if review.mark_unfit(index, op, problems):
                self.left_out[index] = op_label(op) + (
                    "" if None in problems else f" ({len(problems)} hunk(s))")
                marked = True
        if not marked or review.review.closed or review.review.doomed:
            return  # (a doomed turn's notice says why nothing will be written)
        names = ", ".join(self.left_out[i] for i in sorted(self.left_out))
        if len(self.left_out) == len(review.review.entries) and self.turn_worker is not None \
                and not self.streaming:
            self.say(f"can't be applied to the files as they are: {names}; nothing will be "
                     "written (each row says why; ctrl+r regenerates the turn)")
        else:
            self.say(f"can't apply to the files as they are, left out: {names} (rows say "
                     "why); the rest can still be decided")

    def _doomed(self, op: Any, reason: str, stale: bool) -> None:
        """The session refused an operation (stale, or a delete that can not go): it then
        writes none of the turn. Said at once, with the keys that end or rerun it."""
        name = op_label(op)
        why = (f"{name} changed on disk and its edit no longer fits" if stale else
               f"{name} refused: {_first_line(reason)}")
        what = f"{why}; so this turn can not be written (a turn with a refused operation " \
               "writes nothing)"
        how = "R rejects the rest and ends it; ctrl+r runs it again on the files as they are"
        self.query_one(ReviewPane).doom(f"this turn can not be written: {name} was refused "
                                        "(R ends it, ctrl+r runs it again)")
        self._alert(f"{what}\n  hint: {how}")

    def _finished(self, result: Any) -> None:
        self.steering.arrived = result.text or ""
        trying, self.trying = self.trying, False
        applied = result.status == TurnStatus.APPLIED
        if applied:
            self.fixes.applied(result.changed, trying)
        if trying and applied:
            self._check_applied(result.turn_id)
        review = self.query_one(ReviewPane)
        review.set_applied([i for i, o in enumerate(result.outcomes) if o == Outcome.APPLIED],
                           result.turn_id if applied else None)
        self._follow_renames(result)
        left_out = ", ".join(self.left_out[i] for i in sorted(self.left_out))
        if not applied:
            stopped = result.status == TurnStatus.CANCELLED
            review.close("this turn was stopped: nothing of it was written, and it can not be "
                         "accepted now; ctrl+r runs it again" if stopped else
                         "this turn is over and wrote nothing; ctrl+r runs it again")
        if result.error is not None:  # (a turn that proposed nothing: the error is all)
            self.show_error(result.error, nothing_written=bool(review.review.entries))
        elif applied:
            n = len(result.changed)
            self.say(f"applied: {n} file(s) changed ({', '.join(map(shown, result.changed))})"
                     "; /undo puts them back" + (
                         f"; left out (can't apply): {left_out}" if left_out else ""))
        elif result.status == TurnStatus.REJECTED and left_out and \
                len(self.left_out) == len(review.review.entries):
            self._alert(f"nothing was written: none of this turn's operations can be applied "
                        f"to the files as they are ({left_out})\n  hint: each row in the review "
                        "says why; ctrl+r regenerates the turn")
        elif result.status == TurnStatus.REJECTED:
            self.say("nothing written: every operation was rejected" + (
                f" or can't apply ({left_out})" if left_out else ""))
        elif result.status == TurnStatus.NO_CHANGES:
            self.say("the reply changed nothing")
        if not applied:
            self.fixes.round_over(result)
        self.query_one(Prompt).focus()

    def _follow_renames(self, result: Any) -> None:
        """A context file the turn renamed stays in the context under its new name (the old
        one, gone from disk, leaves the files pane; /undo brings it back)."""
        moved = [op.dst for op, outcome in zip(result.operations, result.outcomes, strict=False)
                 if outcome == Outcome.APPLIED and isinstance(op, Rename)
                 and op.src in self.context and op.dst not in self.context]
        if moved:
            self.context.update(dict.fromkeys(moved))
            self.query_one(FilesPane).set_context(self.context)  # (prepared at the turn's end)

    @on(ReviewPane.Changed)
    def _review_changed(self, message: ReviewPane.Changed) -> None:
        """The live diff shows each hunk's decision and where the review cursor is."""
        diff = self.query_one(DiffView)
        review = self.query_one(ReviewPane).review
        changed = (review.entries.values() if message.ops is None else
                   [review.entries[i] for i in message.ops if i in review.entries])
        diff.mark_hunks({(entry.index, h): HunkMark.STALE if entry.blocked
                         else _HUNK_MARKS.get(mark)
                         for entry in changed for h, mark in enumerate(entry.hunks)})
        if review.cursor is not None and message.moved:
            diff.scroll_to_hunk(review.cursor.op, review.cursor.hunk)

    @on(ReviewPane.Decided)
    def _decided(self, message: ReviewPane.Decided) -> None:
        for index, decision in message.decisions:
            self.driver.approver.resolve(index, decision)
        if not self.query_one(ReviewPane).has_undecided and self.turn_worker is not None:
            self.say("all decided: the turn is applied when the stream ends")

    # ---- the prompt ------------------------------------------------------------------------

    @on(Input.Changed, "#prompt")
    def _prompt_changed(self, event: Input.Changed) -> None:
        """? opens the help from an empty prompt, and is typed into one that holds text: the
        footer shows which key opens the help."""
        if bool(event.value) != self._prompt_has_text:
            self._prompt_has_text = bool(event.value)
            self.refresh_bindings()
        self.chooser.draft_changed(event.value)
        self.driver.draft_changed(event.value, self._draft_files)
        if event.value and self.turn_worker is not None:
            self._typed_in_turn = True

    async def _draft_files(self, text: str) -> list[str]:
        """The files a turn for the draft `text` would send (for its pre-warm)."""
        return await self.chooser.files_for(text, self.sent_context())

    def _send(self, value: str) -> None:
        """The prompt's enter: send it, or run the slash command (the prompt is cleared once
        the request is out)."""
        text = value.strip()
        if not text:
            return
        prompt = self.query_one(Prompt)
        prompt.remember(text)
        if text.startswith("/"):
            prompt.value = ""
            self.run_command(text)
        elif self.streaming and self.turn_worker is not None:
            prompt.value = ""
            self._steer(text)  # a correction for the running turn
        elif self.start_turn(text, self.sent_context()):
            self._sent = value  # cleared from the prompt once the request is out
        elif self.turn_worker is None:
            prompt.value = ""
        # else: a turn is in flight; the text stays for enter once it is over

    def run_command(self, text: str) -> None:
        command, _, arg = text.partition(" ")
        arg = arg.strip()
        if sessions.command(self, command, arg):
            return
        match command:
            case "/undo":
                self._undo()
            case "/redo":
                self._redo()
            case "/model" if arg:
                self._reopen({"model.name": arg}, f"model {arg}")
            case "/transport" if arg in TRANSPORT_NAMES:
                self._reopen({"session.transport": arg}, f"transport {arg}")
            case "/transport":
                self.show_error(UsageError(f"unknown transport {arg!r}",
                                           hint=f"use one of: {', '.join(TRANSPORT_NAMES)}"))
            case "/add" if arg:
                self.add_context(arg)
            case "/drop" if arg:
                self.drop_context(arg)
            case "/clear":
                self._clear()
            case "/help":
                self.action_help()
            case "/quit":
                self.confirm_quit()  # as ctrl+q: asks when operations are undecided
            case _:
                self.show_error(UsageError(
                    f"unknown command {text!r}" if command not in _TAKES_ARG else
                    f"{command} needs an argument",
                    hint="commands: /undo /redo /model NAME /transport NAME /add PATH /drop PATH "
                         "/clear /sessions /rename NAME /fork /help /quit"))

    @work(group="command", exclusive=True, exit_on_error=False)
    async def _undo(self) -> None:
        if self.turn_worker is not None:
            self.say(self._busy("/undo"))
            return
        try:
            restored = await self.driver.undo()
        except SparkPairError as exc:
            self.show_error(exc)
            return
        self.say(f"restored {len(restored)} file(s): {', '.join(map(shown, restored))}"
                 "; /redo writes them again")
        await self._undone_shown()

    @work(group="command", exclusive=True, exit_on_error=False)
    async def _redo(self) -> None:
        if self.turn_worker is not None:
            self.say(self._busy("/redo"))
            return
        try:
            written = await self.driver.redo()
        except SparkPairError as exc:
            self.show_error(exc)
            return
        self.say(f"re-applied {len(written)} file(s): {', '.join(map(shown, written))}")
        await self._undone_shown()

    async def _undone_shown(self) -> None:
        """After /undo or /redo: the review's rows say whether its turn is on disk now; the
        files pane lists again a context file the undo brought back."""
        self._prepare()
        review = self.query_one(ReviewPane)
        turn_id = review.review.turn_id
        if turn_id is not None:
            undone = await self.driver.undone(turn_id)
            review.set_undone(turn_id, (review.review.undone or Undone.UNDONE) if undone else None)

    # ---- review tools: edit a hunk, try before keep, the pager ------------------------------

    @on(ReviewPane.Amend)
    def _amend(self, message: ReviewPane.Amend) -> None:
        self.say(review_tools.amend(self.app, self.query_one(ReviewPane), message.item,
                                    self.launch.root), op=message.item.op)

    @on(ReviewPane.OpenPager)
    def _open_pager(self, message: ReviewPane.OpenPager) -> None:
        settings = self.driver.settings
        outcome = review_tools.page(self.app, self.query_one(ReviewPane), self.launch.root,
                                    "" if settings is None else settings.review.pager)
        if outcome:
            self.say(outcome)

    @on(ReviewPane.TryCheck)
    def _try_check(self, message: ReviewPane.TryCheck) -> None:
        settings = self.driver.settings
        check = "" if settings is None else settings.review.check.strip()
        if not check:
            self.say('no check is configured: set [review] check = "pytest -q" in '
                     ".spark-pair.toml (A accepts without trying)")
            return
        if self.turn_worker is None or not self.query_one(ReviewPane).has_undecided:
            self.say("t tries a turn under review: start one, then press t before deciding")
            return
        self.trying = True
        self.query_one(ReviewPane).action_accept_all()
        self.say(f"accepted like A; once the turn is applied, {check!r} runs before you keep it")

    def _check_applied(self, turn_id: str) -> None:
        settings = self.driver.settings
        assert settings is not None

        screen = CheckScreen(settings.review.check, self.launch.root,
                             settings.review.check_timeout_s, settle=self.fixes.settle)

        def answered(keep: bool | None) -> None:
            self._checking = False
            if screen.result is not None and self.driver.conversation is not None:
                r = screen.result
                self.driver.conversation.checked(turn_id, r.command, r.passed, r.output)
            if not keep:
                self.fixes.stop()
                self._roll_back(turn_id)
            elif not self.fixes.checked(screen.result, turn_id):
                self.say("kept: the turn stays applied (/undo still puts it back)")
            self.run_queued()  # (a fix round started by the check goes first)

        self._checking = True  # a queued turn waits for the check and its rounds
        self.app.push_screen(screen, answered)

    @work(group="command", exclusive=True, exit_on_error=False)
    async def _roll_back(self, turn_id: str) -> None:
        try:
            restored = await self.driver.undo(turn_id)
        except SparkPairError as exc:
            self.show_error(exc)
            return
        self.query_one(ReviewPane).set_undone(turn_id, Undone.ROLLED_BACK)
        self.say(f"not kept: rolled back {len(restored)} file(s) byte for byte "
                 f"({', '.join(map(shown, restored))}); /redo applies it again")

    @work(group="command", exclusive=True, exit_on_error=False)
    async def _reopen(self, overrides: dict[str, str], what: str) -> None:
        if self.turn_worker is not None:
            self.say(self._busy(f"switch to {what}"))
            return
        self.say(f"switching to {what}…")
        try:
            await self.driver.reopen(**overrides)
        except SparkPairError as exc:
            self.show_error(exc)
            return
        if self.driver.session is not None:
            self.say(f"now using {what}")

    def add_context(self, arg: str) -> None:
        from ...edits.paths import clean_rel_path

        try:
            rel = clean_rel_path(arg)
        except SparkPairError as exc:
            self.show_error(exc)
            return
        if not (self.launch.root / rel).is_file():
            self.show_error(UsageError(f"/add {arg}: no such file in the repository",
                                       hint="paths are relative to the repository root"))
            return
        if rel in self.context:
            self.say(f"{shown(rel)} is already in the context")
            return
        self.context[rel] = None
        self.query_one(FilesPane).set_context(self.context)
        self._prepare()
        self._context_said(f"added {shown(rel)} to the context")

    def drop_context(self, arg: str) -> None:
        from ...edits.paths import clean_rel_path

        try:
            rel = clean_rel_path(arg.strip())
        except SparkPairError:
            rel = arg.strip()  # (never in the context)
        if rel not in self.context:
            if rel in self.chooser.kept():
                self.toggle_chosen(rel)
            else:
                self.say(f"{shown(rel)} is not in the context")
            return
        del self.context[rel]
        self.query_one(FilesPane).set_context(self.context)
        self._prepare()
        self._context_said(f"dropped {shown(rel)} from the context")

    def _context_said(self, what: str) -> None:
        """A change of the context set, said where the folded files pane cannot show it."""
        if not _shown(self.query_one(FilesPane)):
            n = len(self.context)
            self.say(f"{what}: {n} file{'' if n == 1 else 's'} in it now")

    def toggle_chosen(self, path: str) -> bool:
        """Drop a file chosen for the prompt, or bring it back (False: it was not chosen);
        said in the notice where the folded files pane cannot show it."""
        what = self.chooser.toggle(path)
        if what is not None and not _shown(self.query_one(FilesPane)):
            self.say(what)
        return what is not None

    @on(FilesPane.Toggled)
    def _toggled(self, message: FilesPane.Toggled) -> None:
        if self.toggle_chosen(message.path):
            return
        if message.path in self.context:
            self.drop_context(message.path)
        else:
            self.add_context(message.path)

    @on(FilesPane.Pinned)
    def _pinned(self, message: FilesPane.Pinned) -> None:
        if message.path in self.context:
            self.say(f"{shown(message.path)} is already in the context")
        else:
            self.chooser.dropped.discard(message.path)
            self.add_context(message.path)

    def _chosen_changed(self) -> None:
        """The files chosen for the draft (or those dropped) changed: show them, read them
        ahead, and say why a file the draft names is not sent."""
        chosen = self.chooser.chosen
        self.query_one(FilesPane).set_chosen(chosen, self.chooser.dropped)
        self.query_one(Prompt).border_subtitle = self.chooser.border_line(self.context)
        notes = self.chooser.withheld_notes()
        if notes:
            self.say("; ".join(notes))
        self._prepare()

    @work(group="prepare", exclusive=True, exit_on_error=False)
    async def _prepare(self) -> None:
        """Read the context files ahead (a worker thread), so enter only sends; token estimates
        for the files pane."""
        if self._prepare_timer is not None:
            self._prepare_timer.stop()
            self._prepare_timer = None
        prepared = await self.driver.prepare([*self.context, *self.chooser.kept()])
        if prepared is None:
            return
        for rel, n in prepared.tokens.items():
            if rel in self.context:
                self.context[rel] = n
        self.missing = prepared.missing
        self.query_one(FilesPane).set_context(self.context, self.missing)
        if prepared.again_in_s is not None:  # a file changed too recently to trust its stat
            self._prepare_timer = self.set_timer(prepared.again_in_s + 0.05, self._prepare)

    def _clear(self) -> None:
        if self.turn_worker is not None:
            self.say(self._busy("/clear"))
            return
        self.query_one(DiffView).reset()
        self.query_one(Meter).reset()
        self.query_one(ReviewPane).clear()
        self.context.clear()
        self.query_one(FilesPane).set_context(self.context)
        self._prepare()
        self.say("")

    def models(self) -> list[str]:
        s = self.driver.settings
        if s is None:
            return []
        return list(dict.fromkeys([s.model.name, *s.model.fallbacks,
                                   *([s.model.stronger] if s.model.stronger else [])]))

    def _files(self) -> list[str]:
        if self._file_list is None:
            self._file_list = []
            self._list_files()
        return self._file_list

    @work(group="files", exit_on_error=False)
    async def _list_files(self) -> None:
        from ...workspace.files import list_files

        self._file_list = await asyncio.to_thread(list_files, self.launch.root)

    # ---- messages --------------------------------------------------------------------------

    def _busy(self, then: str) -> str:
        """Why something waits for the turn in flight, with the key that ends that turn now."""
        if self.streaming:
            return f"a turn is streaming: escape stops it, then {then}"
        return f"a turn is under review: decide it (R rejects what is left), then {then}"

    def say(self, text: str, op: int | None = None) -> None:
        """The notice line; `op`: the operation it is about (it gives way when that operation's
        state changes)."""
        if self._clear_pending:  # what the turn says comes after the clearing
            self._clear_for_turn()
        self._notice_op = op
        notice = self.query_one("#notice", Static)
        if str(notice.content) == text and not notice.has_class("-error"):
            return  # an update lays out the whole screen again
        notice.update(text)
        notice.set_class(not text, "-empty")
        notice.remove_class("-error")

    def _give_way(self, op: int | None) -> None:
        """The notice about `op` goes: that operation's state changed (its row says how)."""
        if op is not None and op == self._notice_op:
            self.say("")

    def _notice_shown(self) -> bool:
        return not self.query_one("#notice", Static).has_class("-empty")

    def _notice_says(self, text: str) -> bool:
        notice = self.query_one("#notice", Static)
        return str(notice.content) == text and not notice.has_class("-error")

    def show_error(self, error: BaseException, nothing_written: bool = False) -> None:
        """The error (its message and hint) in the notice; `nothing_written`: it ended a turn,
        which wrote nothing (said once)."""
        text = describe(error)
        if nothing_written and "nothing was written" not in text:
            text = f"nothing was written: {text}"
        self._alert(text)

    def _alert(self, text: str) -> None:
        """A problem in the notice line (drawn as one)."""
        if self._clear_pending:
            self._clear_for_turn()
        self._notice_op = None
        notice = self.query_one("#notice", Static)
        notice.update(text)
        notice.remove_class("-empty")
        notice.add_class("-error")

    # ---- actions ---------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "stop":
            return self.streaming or self.fixes.active
        if action in ("regenerate", "escalate"):
            return bool(self.last_prompt) or None
        return True

    def action_cycle_focus(self, step: int) -> None:
        order = [w for w in (self.query_one(Prompt), self.query_one(ReviewPane),
                             self.query_one(FilesPane)) if w.display and w.styles.display != "none"
                 and not w.has_class("-empty") and _shown(w)]
        if not order:
            return
        current = self.focused
        pos = order.index(current) if current in order else -1
        order[(pos + step) % len(order)].focus()

    def action_stop(self) -> None:
        if self.streaming:
            self.driver.cancel()
            self.say("stopping: what arrived stays on screen; nothing is written")
        elif self.fixes.active:
            self.fixes.stop()

    def action_help(self) -> None:
        keymap = self.driver.settings.keys if self.driver.settings is not None else {}
        self.app.push_screen(HelpScreen(bindings.keys_in_effect(keymap)))

    async def action_regenerate(self) -> None:
        await self._rerun(None)

    async def action_escalate(self) -> None:
        s = self.driver.settings
        stronger = (s.model.stronger or (s.model.fallbacks[0] if s.model.fallbacks else "")
                    ) if s is not None else ""
        if not stronger:
            self.show_error(UsageError("no stronger model is configured",
                                       hint="set [model] stronger (or fallbacks) in the config"))
            return
        await self._rerun(stronger)

    async def _rerun(self, model: str | None) -> None:
        if not self.last_prompt:
            return
        worker = self.turn_worker
        if worker is not None:
            self.driver.cancel()
            await worker.wait()
            if self.turn_worker is worker:  # its state message may still be on its way
                self.turn_worker = None
        if model is not None and model != self.driver.client.model:
            self.say(f"resending to {model}…")
            try:
                await self.driver.reopen(**{"model.name": model})
            except SparkPairError as exc:
                self.show_error(exc)
                return
        self.start_turn(self.last_prompt, self.sent_context())

    @property
    def undecided(self) -> int:
        return len(self.query_one(ReviewPane).review.undecided())

    def confirm_quit(self) -> None:
        n = self.undecided
        if not n:
            self.app.exit()
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self.driver.cancel()
                self.app.exit()

        self.app.push_screen(ConfirmScreen(
            f"{n} operation(s) are undecided: quit without writing them?"), answered)


_TAKES_ARG = ("/model", "/add", "/drop", "/rename")


def op_label(op: Any) -> str:
    """An operation as the notice names it: its path (a rename: both)."""
    src = getattr(op, "src", None)
    return f"{shown(src)} → {shown(op.dst)}" if src is not None else shown(op.path)


def _first_line(text: str) -> str:
    return text.partition("\n")[0]


STREAMING = "the reply is streaming: escape stops it; nothing is written until you decide"
_REVIEW_EVENTS = (OperationProposed, Stale, Refused, Rewound, TurnFinished)
_HUNK_MARKS = {Mark.ACCEPTED: HunkMark.ACCEPTED, Mark.REJECTED: HunkMark.REJECTED}


def _shown(widget: Any) -> bool:
    return all(node.display for node in widget.ancestors_with_self if hasattr(node, "display"))
