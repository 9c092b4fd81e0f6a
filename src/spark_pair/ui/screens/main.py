"""The main screen: header, files, live diff, review, prompt, meter, footer; and the turn.

Events reach it as one `Driver.FrameArrived` per frame; widgets are fed from the frame handler.
Workers do the slow things (opening the repository, undo, hashing, file reads) and post
messages; handlers own the screen's state.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Static, TextArea
from textual.worker import Worker, WorkerState

from ...base import gcpolicy
from ...base.errors import SparkPairError, UsageError
from ...protocol.events import Completed, Failed
from ...protocol.steer import Steered
from .. import bindings, commands, review_tools, sent_spans, sessions, turn_queue
from ..chosen import ChosenFiles
from ..commits import Commits
from ..config_watch import ConfigWatch, apply_keymap
from ..disk_marks import DiskMarks
from ..driver import Driver, describe
from ..fixrounds import AppFixRounds
from ..notices import STREAMING, Notice, displayed
from ..sessions import Choice
from ..steering import Steering, steer, steered
from ..turn_review import TurnReview
from ..typed import Typed, repaint_over
from ..widgets.diff_view import DiffView
from ..widgets.files import FilesPane
from ..widgets.footer import AppFooter
from ..widgets.header import AppHeader, Connection
from ..widgets.meter import Meter
from ..widgets.prompt import Prompt, SlashSuggester
from ..widgets.review import ReviewPane
from .check import CheckScreen
from .help import HelpScreen
from .quitting import ask_quit, renew_question

if TYPE_CHECKING:
    from ..demo import DemoSimulator


@dataclass
class Launch:
    """What the app opens: a repository, setting overrides, and an optional first prompt."""

    root: Path
    overrides: dict[str, str] = field(default_factory=dict)
    env: dict[str, str] | None = None
    prompt: str = ""  # sent as soon as the repository is open (the demo's turn)
    files: list[str] = field(default_factory=list)  # the context set at start
    prewarm: bool = True
    demo: DemoSimulator | None = None  # started first (spark-pair demo)
    clock: Callable[[], float] | None = None  # the meter's clock (tests freeze it)
    session: Choice | None = field(default_factory=Choice)  # the stored session (None: none)


class MainScreen(Screen[None]):
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]
    VERTICAL_BREAKPOINTS = [(0, "-tiny"), (22, "-short"), (24, "-mid"), (30, "-tall")]

    BINDINGS = [*bindings.MAIN, *bindings.REVIEW]  # the review's chords work from the prompt

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
        self.open_error: SparkPairError | None = None
        self._clear_pending = False
        self._file_list: list[str] | None = None
        self._prepare_timer: Timer | None = None
        self._sent: str | None = None  # the prompt text of the turn starting now
        self._taken: str | None = None  # ... once it was taken out of the prompt
        self.notice = Notice(self)  # the notice line
        self._prompt_has_text = False
        self.trying = False  # `t`: run the check once the turn is applied
        # files chosen for the draft
        self.chooser = ChosenFiles(self, lambda: commands.chosen_changed(self))
        self.fixes = AppFixRounds(self)  # check, fix rounds, escalation
        self.steering = Steering()  # corrections sent while a turn streams
        self.checking = False  # the check of a tried turn runs
        self.turn_review = TurnReview(self)  # the review pane follows the turn
        self.config_watch = ConfigWatch(self)  # a config file saved (or removed) from the start
        self.disk_marks = DiskMarks(self)  # the files pane's M marks
        self.commits = Commits(self)  # /commit and [git] commit

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
        yield (Meter(id="meter", clock=self.launch.clock) if self.launch.clock
               else Meter(id="meter"))
        yield AppFooter()

    def on_mount(self) -> None:
        self.query_one(DiffView).border_title = "Live diff"
        self.query_one(AppHeader).repo = self.launch.root.name or str(self.launch.root)
        self.query_one(Prompt).focus()
        self.query_one(FilesPane).set_context(self.context)
        if not self.launch.prompt:
            self.say("type what should change and press enter · the files it needs are "
                     "chosen as you type · f1 lists every key")
        self.config_watch.start()  # (a file fixed opens a repository that could not open)
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
        await self.config_watch.look()
        await self.driver.open()

    async def on_unmount(self) -> None:
        gcpolicy.release()
        self.driver.cancel()
        await self.driver.close()
        if self.launch.demo is not None:
            await asyncio.to_thread(self.launch.demo.stop)

    # ---- repository and connection ---------------------------------------------------------

    @on(Driver.RepoOpened)
    def _opened(self, message: Driver.RepoOpened) -> None:
        self.open_error = None
        self.query_one(AppHeader).model = message.model
        settings = self.driver.opened.settings
        self.query_one(Meter).prices = dict(settings.prices)
        for warning in settings.warnings:
            self.notify(warning, title="config", severity="warning", timeout=8, markup=False)
        apply_keymap(self, settings.keys, toast=True)
        self.call_after_refresh(gcpolicy.settle)
        self.prepare()
        if self.launch.prompt:
            prompt, self.launch.prompt = self.launch.prompt, ""
            if self.start_turn(prompt, self.sent_context()):  # (never typed: in view, below)
                diff = self.query_one(DiffView)
                diff.border_subtitle = f"sent: {prompt}"  # cut to the border's width:
                diff.tooltip = f"sent: {prompt}"  # whole under the pointer, and ↑ in the prompt
                self.query_one(Prompt).remember(prompt)

    @on(Driver.Switched)
    def _switched(self, message: Driver.Switched) -> None:
        self.query_one(AppHeader).model = message.model
        self.query_one(Meter).prices = dict(self.driver.opened.settings.prices)

    @on(Driver.SessionOpened)
    def _session_opened(self, message: Driver.SessionOpened) -> None:
        sessions.opened(self, message.name, message.turns, message.model)
        if message.turns and not self.context and message.context:  # its context set too
            self.context.update({rel: None for rel in message.context})
            self.query_one(FilesPane).set_context(self.context)
            self.prepare()

    @on(Driver.OpenFailed)
    def _open_failed(self, message: Driver.OpenFailed) -> None:
        self.open_error = message.error
        header = self.query_one(AppHeader)  # not "opening" for ever: the notice says why
        header.connection = Connection(header.connection.transport, "not open")
        self.config_watch.not_open()

    @on(Driver.ConnectionChanged)
    def _connection(self, message: Driver.ConnectionChanged) -> None:
        self.query_one(AppHeader).connection = message.connection

    @on(Driver.FilesChanged)
    def _files_changed(self, message: Driver.FilesChanged) -> None:
        self.disk_marks.changed(message.paths)  # M: a person's change, as on disk now
        self.chooser.files_changed(message.paths)  # a chosen file's figures follow its content
        if not message.paths.isdisjoint(self.context) or self.driver.shows(message.paths):
            self.prepare()

    @on(Driver.Warning)
    def _warning(self, message: Driver.Warning) -> None:
        self.notify(message.text, severity="warning", timeout=8, markup=False)

    @on(Driver.AIComments)
    def _ai_comments(self, message: Driver.AIComments) -> None:
        turn_queue.ai_comments(self, message.comments)

    # ---- turns -----------------------------------------------------------------------------

    def sent_context(self) -> list[str]:
        """The context files a request shows: one gone from disk (a turn deleted it) stays in
        the set, unlisted and not sent, until it is back (/undo)."""
        return [rel for rel in self.context if rel not in self.missing]

    def start_turn(self, prompt: str, files: Sequence[str]) -> bool:
        """Start a turn (False: it cannot start now; the notice says why)."""
        if self.driver.session is None:
            self.config_watch.not_open()  # why: the error in force (or still opening)
            return False
        if self.turn_worker is not None:
            self.say(self.busy("enter sends this (tab queues it to run after)"))
            return False
        self.fixes.turn_started(prompt, resent=prompt == self.last_prompt)
        self.query_one(DiffView).border_subtitle = ""  # (what the demo sent, until now)
        self.last_prompt = prompt
        self.turn_review.proposed_any = False
        self.trying = False
        gcpolicy.streaming()  # from the request on
        self.turn_worker = self.run_worker(self._turn(prompt, list(files)), group="turn",
                                           exit_on_error=False)
        self.streaming = True
        turn_queue.changed(self)
        # the screen is cleared when the turn's first frame arrives: the request goes out
        # first, not after a relayout and a new footer
        self._clear_pending = True
        return True

    def _clear_for_turn(self) -> None:
        self._clear_pending = False
        sent, self._sent, self._taken = self._sent, None, None
        prompt = self.query_one(Prompt)
        if sent is not None and prompt.value.startswith(sent):  # what was typed since stays
            prompt.value = prompt.value[len(sent):]
            self._taken = sent
        self.query_one(DiffView).reset()
        note = self.steering.note_for_new_turn()
        if note:
            self.query_one(DiffView).note(note)
        self.query_one(Meter).reset()
        self.query_one(ReviewPane).clear()
        self.turn_review.forget_ops()
        self.chooser.reset()
        self.query_one(FilesPane).new_turn()
        # a notice on screen gives way to the turn's own line rather than disappearing: its
        # row going to the live diff would lay the whole screen out again (twice: containers
        # resized ask for a second pass) while the first tokens arrive. It goes once the review
        # pane appears, in that layout
        self.say(STREAMING if self.notice.shown() else "")
        self.refresh_bindings()

    async def _turn(self, prompt: str, files: list[str]) -> None:
        try:
            files = await self.chooser.files_for(prompt, files)
            self.query_one(FilesPane).set_sent(files)  # listed through the review
            await self.driver.run_turn(prompt, files)
        except SparkPairError as exc:
            self.show_error(exc)
            self.give_back()

    @on(Worker.StateChanged)
    def _worker_changed(self, event: Worker.StateChanged) -> None:
        if event.worker is not self.turn_worker:
            if event.state is WorkerState.ERROR and event.worker.error is not None:
                self.show_error(event.worker.error)
            return
        if event.state in (WorkerState.SUCCESS, WorkerState.ERROR, WorkerState.CANCELLED):
            self.turn_review.review_events()
            if event.state is WorkerState.ERROR and event.worker.error is not None:
                self.show_error(event.worker.error)
            self.turn_worker = None
            self.streaming = False
            self.call_after_refresh(gcpolicy.settle)  # the turn's last rows are painted
            if self._clear_pending:  # ended before its first frame
                self._clear_for_turn()
            self.driver.approver.reset()
            self.refresh_bindings()
            self.prepare()  # what the turn wrote, and the files the model saw, for the next
            if self.steering.restart is not None:  # a correction: it goes before the queue
                self.start_turn(self.steering.resend(self.last_prompt), self.sent_context())
            self.run_queued()

    @on(Prompt.Queue)
    def _queue(self, message: Prompt.Queue) -> None:
        turn_queue.queue(self, message.text)

    @on(Prompt.ClearQueue)
    def _clear_queue(self) -> None:
        turn_queue.clear(self)

    def run_queued(self) -> None:
        """The next queued turn, once nothing runs: no turn, no check, no fix loop."""
        turn_queue.run_next(self)

    @on(Driver.FrameArrived)
    def _frame(self, message: Driver.FrameArrived) -> None:
        gcpolicy.streaming()
        if self._clear_pending:
            self._clear_for_turn()
        view = self.query_one(DiffView)
        sent_spans.feed(self.query_one(FilesPane), view, message.events, message.partial_line)
        for event in message.events:
            if type(event) is Steered:
                steered(self, event)
        self.query_one(Meter).feed(message.events)
        if self.streaming and any(isinstance(e, (Completed, Failed)) for e in message.events):
            self.streaming = False  # the reply is in: escape no longer stops the turn
            self.refresh_bindings()
            for note in (n for e in message.events if isinstance(e, Completed) for n in e.notes):
                self.notify(note, timeout=8, markup=False)
        self.turn_review.frame(message.events, view)

    @on(ReviewPane.Changed)
    def _review_changed(self, message: ReviewPane.Changed) -> None:
        self.turn_review.changed(message)

    @on(ReviewPane.Decisions)
    def _decided(self, message: ReviewPane.Decisions) -> None:
        self.turn_review.decided(message)

    # ---- the prompt ------------------------------------------------------------------------

    @on(TextArea.Changed, "#prompt")
    def _prompt_changed(self, event: TextArea.Changed) -> None:
        """Whether the prompt holds text decides what tab does: the footer shows which."""
        value = event.text_area.text
        if bool(value) != self._prompt_has_text:
            self._prompt_has_text = bool(value)
            self.refresh_bindings()
        self.chooser.draft_changed(value)
        self.driver.draft_changed(value, self._draft_files)
        renew_question(self)  # (a quit question names the text as it is)

    @on(Typed)
    def _typed(self, message: Typed) -> None:
        """Text (and backspace, ctrl+u) typed where the prompt had no focus goes to it."""
        prompt = self.query_one(Prompt)
        prompt.insert_typed(message.text)
        prompt.edit_typed(message.edit)
        prompt.focus()
        self.call_after_refresh(repaint_over, self)  # (under questions too)

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
        if text.startswith("/") and "\n" not in text:  # a command is the prompt's only line
            prompt.value = ""
            if not self.run_command(text) and not prompt.value:
                prompt.value = value  # refused: it stays, to mend or to send again
        elif self.streaming and self.turn_worker is not None:
            prompt.value = ""
            # a correction for the running turn
            self.run_worker(steer(self, text), group="steer", exit_on_error=False)
        elif self.start_turn(text, self.sent_context()):
            self._sent = value  # cleared from the prompt once the request is out
        # else: the text stays for enter once the turn in flight is over, or once the
        # repository is open

    def run_command(self, text: str) -> bool:
        return commands.run(self, text)

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
        self.turn_review.try_check()

    def check_applied(self, turn_id: str) -> None:
        """`t`: the check runs on the applied turn; keep it, or it is rolled back."""
        settings = self.driver.settings
        assert settings is not None

        check = CheckScreen(settings.review.check, self.launch.root,
                            settings.review.check_timeout_s, settle=self.fixes.settle)

        def answered(keep: bool | None) -> None:
            self.checking = False
            if check.result is not None and self.driver.stored is not None:
                r = check.result
                self.driver.stored.checked(turn_id, r.command, r.passed, r.output)
            if not keep:
                if not self.fixes.rolled_back(turn_id):  # (True: the whole task goes back)
                    self.turn_review.roll_back(turn_id)
            elif not self.fixes.checked(check.result, turn_id, send=check.send):
                self.say("kept: the turn stays applied (/undo still puts it back)")
            if keep and not self.fixes.active:  # kept, no round to come: [git] commit
                self.commits.offer()
            self.run_queued()  # (a fix round started by the check goes first)

        self.checking = True  # a queued turn waits for the check and its rounds
        self.app.push_screen(check, answered)

    def toggle_chosen(self, path: str) -> bool:
        """Drop a file chosen for the prompt, or bring it back (False: it was not chosen);
        said in the notice where the folded files pane cannot show it."""
        what = self.chooser.toggle(path)
        if what is not None and not displayed(self.query_one(FilesPane)):
            self.say(what)
        return what is not None

    @on(FilesPane.Toggled)
    def _toggled(self, message: FilesPane.Toggled) -> None:
        commands.toggled(self, message.path)

    @on(FilesPane.Folded)
    def _pane_folded(self) -> None:
        sent_spans.folded(self.query_one(FilesPane), self.query_one(DiffView))

    @on(FilesPane.Pinned)
    def _pinned(self, message: FilesPane.Pinned) -> None:
        commands.pinned(self, message.path)

    @work(group="prepare", exclusive=True, exit_on_error=False)
    async def prepare(self) -> None:
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
            self._prepare_timer = self.set_timer(prepared.again_in_s + 0.05, self.prepare)

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

    def busy(self, then: str) -> str:
        """Why something waits for the turn in flight, with the key that ends that turn now."""
        if self.streaming:
            return f"a turn is streaming: escape stops it, then {then}"
        return f"a turn is under review: decide it (alt+R rejects what is left), then {then}"

    def give_back(self) -> None:
        """A turn failed before anything came: the instruction goes back to an empty prompt."""
        taken, self._taken = self._taken, None
        if taken:
            self.query_one(Prompt).give_back(taken)

    def say(self, text: str, op: int | None = None) -> None:
        """The notice line; `op`: the operation it is about (it gives way when that operation's
        state changes)."""
        if self._clear_pending:  # what the turn says comes after the clearing
            self._clear_for_turn()
        self.notice.say(text, op)

    def show_error(self, error: BaseException, nothing_written: bool = False) -> None:
        """The error (its message and hint) in the notice; `nothing_written`: it ended a turn,
        which wrote nothing (said once)."""
        text = describe(error)
        if nothing_written and "nothing was written" not in text:
            text = f"nothing was written: {text}"
        self.alert(text)

    def alert(self, text: str) -> None:
        """A problem in the notice line (drawn as one)."""
        if self._clear_pending:
            self._clear_for_turn()
        self.notice.alert(text)

    # ---- actions ---------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "stop":
            return self.streaming or self.turn_review.repairing or self.fixes.active
        if action in ("regenerate", "escalate"):
            return bool(self.last_prompt) or None
        if action == "review":
            return review_tools.chord_enabled(self, str(parameters[0]))
        return True

    def action_review(self, name: str) -> None:
        """A review chord (alt+a, ...): the review pane's action, whatever has the focus."""
        getattr(self.query_one(ReviewPane), f"action_{name}")()

    def action_cycle_focus(self, step: int) -> None:
        order = [w for w in (self.query_one(Prompt), self.query_one(ReviewPane),
                             self.query_one(FilesPane),
                             self.query_one(DiffView))  # (the arrows scroll it, sideways too)
                 if w.display and w.styles.display != "none"
                 and not w.has_class("-empty") and displayed(w)]
        if not order:
            return
        current = self.focused
        pos = order.index(current) if current in order else -1
        self.set_focus(order[(pos + step) % len(order)])  # now: the next key goes there

    def action_stop(self) -> None:
        if self.streaming or self.turn_review.repairing:  # (the repair round streams too)
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
        if model is not None and model != self.driver.opened.client.model:
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
        ask_quit(self)
