"""The turn and its review on the main screen: the review pane follows the turn's events,
operations that can not apply are left out at once, a refused one dooms the turn, the end of
the turn is said, and alt+t runs the check on an applied turn before it is kept."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from ..base.errors import SparkPairError
from ..base.printable import shown
from ..edits.ops import Operation, Rename, loose_hunks, op_paths
from ..protocol.events import Rewound
from ..session.events import (
    Applied,
    OperationProposed,
    Outcome,
    RefusalKind,
    Refused,
    RepairFinished,
    RepairStarted,
    SessionEvent,
    Stale,
    TurnFinished,
    TurnResult,
    TurnStatus,
)
from . import commands, fit, repair_rows
from .fixrounds import record_rollback
from .host import ScreenParts
from .notices import STREAMING, Notice, first_line, op_label
from .review_state import Mark, Undone
from .widgets.diff_view import DiffView, HunkMark
from .widgets.files import FilesPane
from .widgets.prompt import Prompt
from .widgets.review import ReviewPane

if TYPE_CHECKING:
    from ..edits.apply import Reads
    from .commits import Commits
    from .disk_marks import DiskMarks
    from .driver import Driver
    from .fixrounds import AppFixRounds
    from .steering import Steering

REVIEW_EVENTS = (OperationProposed, Stale, Refused, Rewound, TurnFinished, RepairStarted,
                 RepairFinished)
ALL_DECIDED = "all decided: the turn is applied when the stream ends"
HUNK_MARKS = {Mark.ACCEPTED: HunkMark.ACCEPTED, Mark.REJECTED: HunkMark.REJECTED}


class TurnHost(ScreenParts, Protocol):
    """What the turn's review uses of the main screen."""

    driver: Driver
    notice: Notice
    steering: Steering
    fixes: AppFixRounds
    disk_marks: DiskMarks
    commits: Commits
    context: dict[str, int | None]
    trying: bool  # `t`: the check runs once the turn is applied
    streaming: bool

    def check_applied(self, turn_id: str) -> None: ...

    def give_back(self) -> None: ...


class TurnReview:
    def __init__(self, screen: TurnHost) -> None:
        """`screen`: the main screen (its panes, notice, driver, fix rounds)."""
        self.screen = screen
        self.backlog: list[SessionEvent] = []  # frame events the review pane has yet to see
        self.proposed_any = False
        self.left_out: dict[int, str] = {}  # operations of this turn that can not apply
        self.op_paths: dict[int, list[str]] = {}  # the paths each operation names
        self.path_uses: Counter[str] = Counter()  # how many operations name each path
        self.repairing = False  # the repair round runs: what is decided may be asked again
        self.repaired = False  # this turn's repair round has run (what is left out is final)
        self.mendable: set[int] = set()  # left out, but the repair round will ask about them

    def frame(self, events: Sequence[SessionEvent], view: DiffView) -> None:
        """A frame's events: those the review pane shows go to it once the diff is painted."""
        if any(isinstance(e, REVIEW_EVENTS) for e in events):
            # the review pane may appear and take focus (a new layout, a new footer): after
            # the diff's new rows are painted (and always before the turn's end is handled).
            # Asked of the view, not the screen: the view queues the callback and then, in the
            # same step, tells the screen of its repaint, so the screen paints the rows before
            # it runs the callback (the screen's own callback could run first).
            if not self.backlog:
                view.call_after_refresh(self.review_events)
            self.backlog.extend(events)

    def check_fit(self, ops: list[tuple[int, Operation]]) -> None:
        self.screen.run_worker(self._fit(ops), group="fit", exit_on_error=False)

    def roll_back(self, turn_id: str) -> None:
        """`t`'s check failed and the turn is not kept: its files go back."""
        commands.start(self.screen, self._rolled_back(turn_id))

    def review_events(self) -> None:
        screen = self.screen
        events, self.backlog = self.backlog, []
        review = screen.query_one(ReviewPane)
        review.model = screen.query_one(DiffView).model  # its title names who wrote the turn
        proposed = []
        for event in events:
            match event:
                case OperationProposed(proposal=proposal):
                    old = review.review.entries.get(proposal.index)
                    self.left_out.pop(proposal.index, None)  # (checked again below)
                    review.propose(proposal.index, proposal.op, stale=proposal.stale)
                    proposed.append((proposal.index, proposal.op))
                    if review.review.doomed:  # its notice stays: nothing will be written
                        pass
                    elif old is not None and old.amended and not old.sent:
                        # asked again against the file as it is now: the edit no longer fits
                        screen.say(f"{shown(old.op.path)} changed on disk: your edit of it was "
                                   "dropped; alt+e edits it again", op=proposal.index)
                    elif old is not None:  # asked again: its row says so
                        screen.notice.give_way(proposal.index)
                    elif screen.notice.says(ALL_DECIDED):  # no longer true: one more waits
                        screen.say(f"{op_label(proposal.op)} arrived after alt+A: it waits for "
                                   "your decision (the turn is applied once all are decided)",
                                   op=proposal.index)
                    if not self.proposed_any:
                        self.proposed_any = True  # (the focus stays where it is: the
                        # review's chords work from the prompt, and typing never decides)
                        if screen.notice.says(STREAMING):
                            screen.say("")
                case Stale(path=path, index=index):
                    if index is not None:
                        review.mark_stale(index)
                    if not review.review.doomed:  # (its notice says why nothing is written)
                        screen.say(f"{shown(path)} changed on disk during the turn: stale",
                                   op=index)
                case Refused(index=index, op=op, reason=reason, kind=kind):
                    stale = kind is RefusalKind.STALE
                    review.refuse(index, f"refused ({kind}): {first_line(reason)}", op,
                                  stale=stale)
                    if stale:  # (not left out for how it fit the file before it changed)
                        self.left_out.pop(index, None)
                    screen.notice.give_way(index)
                    if not review.review.closed:
                        self._doomed(op, reason, stale)
                case Rewound():
                    review.clear()
                    screen.notice.give_way(screen.notice.op)
                    self.forget_ops()
                    self.proposed_any = False
                case RepairStarted() | RepairFinished():
                    self.repairing = isinstance(event, RepairStarted)
                    self.repaired = True
                    screen.refresh_bindings()  # (escape stops the round while it runs)
                    if not review.review.doomed:
                        others = ", ".join(self.left_out[i] for i in sorted(self.left_out)
                                           if i not in self.mendable)
                        screen.say(repair_rows.notice(event) + (
                            f"; also left out: {others}" if others else ""))
                case Applied():
                    pass
                case TurnFinished(result=result):
                    self._finished(result)
        if proposed:
            screen.refresh_bindings()  # the footer names the chords that decide them
            # an operation that shares a path with another of the turn (a rename, then an edit
            # of the new name) may fit only after it: the write step judges those
            for i, op in proposed:
                if i not in self.op_paths:
                    self.op_paths[i] = op_paths(op)
                    self.path_uses.update(self.op_paths[i])
            alone = [(i, op) for i, op in proposed
                     if all(self.path_uses[path] == 1 for path in op_paths(op))]
            if alone:
                self.check_fit(alone)

    def forget_ops(self) -> None:
        self.left_out, self.op_paths, self.repaired = {}, {}, False
        self.mendable = set()
        self.path_uses.clear()

    async def _fit(self, ops: list[tuple[int, Operation]]) -> None:
        """Proposed operations that can not be applied to the files as they are are left out
        at once, with the reason in their row (the files are read in a thread)."""
        screen = self.screen
        reads: Reads = {}  # (each file is read once for both looks)
        found = await asyncio.to_thread(fit.unfit_all, screen.launch.root, ops, reads)
        settings = screen.driver.settings
        if found and screen.turn_worker is not None and not self.repaired and \
                settings is not None and settings.review.repair:
            self.mendable |= await asyncio.to_thread(  # matching nowhere: asked again
                fit.mendable, screen.launch.root, [(i, op) for i, op, _ in found], reads)
        review = screen.query_one(ReviewPane)
        for index, op in ops:  # the check placed its hunks: show those placed loosely
            if loose_hunks([op]) and index in review.review.entries:
                review.refresh_items(only=index)
        marked = False
        for index, op, problems in found:
            if review.mark_unfit(index, op, problems):
                self.left_out[index] = op_label(op) + (
                    "" if None in problems else f" ({len(problems)} hunk(s))")
                marked = True
        if not marked or review.review.closed or review.review.doomed:
            return  # (a doomed turn's notice says why nothing will be written)
        names = ", ".join(self.left_out[i] for i in sorted(self.left_out))
        trying = [] if self.repaired else [i for i in sorted(self.left_out) if i in self.mendable]
        if trying:  # not final yet: the repair round asks about these
            tried = ", ".join(self.left_out[i] for i in trying)
            final = ", ".join(self.left_out[i] for i in sorted(self.left_out) if i not in trying)
            screen.say(f"can't apply as written: {tried}; once the reply ends a repair round "
                       "asks the model to mend it, else it is left out" +
                       (f"; left out: {final}" if final else "") + " (rows say why)")
        elif len(self.left_out) == len(review.review.entries) and \
                screen.turn_worker is not None and not screen.streaming:
            screen.say(f"can't be applied to the files as they are: {names}; nothing will be "
                       "written (each row says why; ctrl+r regenerates the turn)")
        else:
            screen.say(f"can't apply to the files as they are, left out: {names} (rows say "
                       "why); the rest can still be decided")

    def _doomed(self, op: Operation, reason: str, stale: bool) -> None:
        """The session refused an operation (stale, or a delete that can not go): it then
        writes none of the turn. Said at once, with the keys that end or rerun it."""
        screen = self.screen
        name = op_label(op)
        why = (f"{name} changed on disk and its edit no longer fits" if stale else
               f"{name} refused: {first_line(reason)}")
        what = f"{why}; so this turn can not be written (a turn with a refused operation " \
               "writes nothing)"
        how = "alt+R rejects the rest and ends it; ctrl+r runs it again on the files as they are"
        screen.query_one(ReviewPane).doom(f"this turn can not be written: {name} was refused "
                                          "(alt+R ends it, ctrl+r runs it again)")
        screen.alert(f"{what}\n  hint: {how}")

    def _finished(self, result: TurnResult) -> None:
        screen = self.screen
        self.repairing = False
        screen.steering.arrived = result.text or ""
        trying, screen.trying = screen.trying, False
        applied = result.status == TurnStatus.APPLIED
        if applied:
            screen.disk_marks.wrote(result.changed)  # (not a person's edit: no M)
            screen.fixes.applied(result.changed, trying, result.turn_id)
            screen.commits.turn_applied(result.turn_id, offer=not trying)
        if trying and applied:
            screen.check_applied(result.turn_id)
        review = screen.query_one(ReviewPane)
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
            screen.show_error(result.error, nothing_written=bool(review.review.entries))
            if not result.text and not result.operations:  # nothing came
                screen.give_back()
        elif applied:
            n = len(result.changed)
            screen.say(f"applied: {n} file(s) changed ({', '.join(map(shown, result.changed))})"
                       "; /undo puts them back" + (
                           f"; left out (can't apply): {left_out}" if left_out else ""))
        elif result.status in (TurnStatus.REJECTED, TurnStatus.CONFLICT) and left_out and \
                len(self.left_out) == len(review.review.entries):
            screen.alert(f"nothing was written: none of this turn's operations can be applied "
                         f"to the files as they are ({left_out})\n  hint: each row in the review "
                         "says why; ctrl+r regenerates the turn")
        elif result.status == TurnStatus.REJECTED:
            screen.say("nothing written: every operation was rejected" + (
                f" or can't apply ({left_out})" if left_out else ""))
        elif result.status == TurnStatus.NO_CHANGES:
            screen.say("the reply changed nothing")
        if not applied:
            screen.fixes.round_over(result)
        screen.query_one(Prompt).focus()

    def _follow_renames(self, result: TurnResult) -> None:
        """A context file the turn renamed stays in the context under its new name (the old
        one, gone from disk, leaves the files pane; /undo brings it back)."""
        screen = self.screen
        moved = [op.dst for op, outcome in zip(result.operations, result.outcomes, strict=False)
                 if outcome == Outcome.APPLIED and isinstance(op, Rename)
                 and op.src in screen.context and op.dst not in screen.context]
        if moved:
            screen.context.update(dict.fromkeys(moved))
            screen.query_one(FilesPane).set_context(screen.context)  # (prepared at the turn's end)

    def changed(self, message: ReviewPane.Changed) -> None:
        """The live diff shows each hunk's decision and where the review cursor is."""
        screen = self.screen
        diff = screen.query_one(DiffView)
        review = screen.query_one(ReviewPane).review
        changed = (review.entries.values() if message.ops is None else
                   [review.entries[i] for i in message.ops if i in review.entries])
        diff.mark_hunks({(entry.index, h): HunkMark.STALE if entry.blocked
                         else HunkMark.UNFIT if h in entry.unfit or None in entry.unfit
                         else HUNK_MARKS.get(mark)
                         for entry in changed for h, mark in enumerate(entry.hunks)})
        if review.cursor is not None and message.moved:
            diff.scroll_to_hunk(review.cursor.op, review.cursor.hunk)

    def decided(self, message: ReviewPane.Decisions) -> None:
        screen = self.screen
        entries = screen.query_one(ReviewPane).review.entries
        for index, decision in message.decisions:
            entry = entries.get(index)
            if entry is not None and not entry.sent:
                continue  # made for an entry since proposed again (a repair): not this one
            screen.driver.approver.resolve(index, decision, None if entry is None else entry.op)
        screen.refresh_bindings()  # (the footer's chords follow what is left to decide)
        if not screen.query_one(ReviewPane).has_undecided and screen.turn_worker is not None \
                and not self.repairing:
            screen.say(ALL_DECIDED)

    def try_check(self) -> None:
        screen = self.screen
        settings = screen.driver.settings
        check = "" if settings is None else settings.review.check.strip()
        if not check:
            screen.say('no check is configured: set [review] check = "pytest -q" in '
                       ".spark-pair.toml (alt+A accepts without trying)")
            return
        if screen.turn_worker is None or not screen.query_one(ReviewPane).has_undecided:
            screen.say("alt+t tries a turn under review: start one, then press alt+t before "
                       "deciding")
            return
        pane = screen.query_one(ReviewPane)
        waiting = pane.review.undecided()
        accepting = sum(1 for e in waiting if not (e.needs_confirm or e.blocked))
        confirms = sum(1 for e in waiting if e.needs_confirm)
        screen.trying = True
        pane.action_accept_all()
        done = (f"accepted {accepting} operation(s) like alt+A" if accepting else
                "nothing to accept like alt+A")
        left = (f"; decide the {confirms} delete/rename(s) first (alt+d accepts, alt+r rejects)"
                if confirms else "")
        screen.say(f"{done}{left}; once the turn is applied, {check!r} runs before you keep it")

    async def _rolled_back(self, turn_id: str) -> None:
        screen = self.screen
        try:
            restored = (await screen.driver.undo(turn_id)).paths
        except SparkPairError as exc:
            screen.show_error(exc)
            return
        screen.query_one(ReviewPane).set_undone(turn_id, Undone.ROLLED_BACK)
        record_rollback(screen.driver, [turn_id])
        await screen.commits.after_undo()
        screen.say(f"not kept: rolled back {len(restored)} file(s) byte for byte "
                   f"({', '.join(map(shown, restored))}); /redo applies it again")
