"""Git commits from the app: `/commit` commits the accepted turns of this session not yet
committed (or records the revert of a committed turn that /undo restored), the message shown
for editing first; `[git] commit = "ask"` does that after each applied turn, "auto" commits at
once with the model's message. The git side is session.commit's (in worker threads)."""

from __future__ import annotations

import asyncio
import shlex
from typing import TYPE_CHECKING, Protocol

from ..base.errors import SparkPairError
from ..base.printable import shown
from .dialogs.confirm import ConfirmScreen
from .dialogs.message import MessageScreen
from .host import ScreenParts

if TYPE_CHECKING:
    from ..edits.journal import Journal
    from ..session.revert import UndoneCommit
    from .driver import Driver


class CommitHost(ScreenParts, Protocol):
    """What committing uses of the main screen: its driver (settings, client)."""

    driver: Driver


class Commits:
    """The turns this app session applied, and committing them."""

    def __init__(self, screen: CommitHost) -> None:
        self.screen = screen
        self.applied: list[str] = []  # turn ids, oldest first
        self.revert: UndoneCommit | None = None  # the undone commit /commit records a revert of
        self.busy = False  # a commit is being made (asked, planned, written)

    @property
    def mode(self) -> str:
        settings = self.screen.driver.settings
        return settings.git.commit if settings is not None else "off"

    def turn_applied(self, turn_id: str, *, offer: bool = True) -> None:
        """A turn was applied: remembered for /commit; with `offer`, committed now under
        [git] commit = ask or auto (a turn being tried with alt+t waits for /commit)."""
        self.applied.append(turn_id)
        self.revert = None
        if offer:
            self.offer()

    def offer(self) -> None:
        """Commit the pending turns now when [git] commit is ask or auto (a turn just ended)."""
        if self.mode != "off":
            self.start(auto=self.mode == "auto", after_turn=True)

    def start(self, *, auto: bool = False, after_turn: bool = False) -> None:
        self.screen.run_worker(self.commit(auto=auto, after_turn=after_turn), group="commit",
                               exit_on_error=False)

    async def after_undo(self) -> str | None:
        """/undo restored a turn: what to say when its commit stays in history (/commit
        records the revert)."""
        from ..edits.journal import Journal
        from ..session.revert import committed_undo, stays_note

        root = self.screen.launch.root
        found = await asyncio.to_thread(lambda: committed_undo(Journal(root)))
        self.revert = found
        return None if found is None else stays_note(found.commit, "/commit")

    async def commit(self, *, auto: bool = False, after_turn: bool = False) -> None:
        """Commit the pending turns (`after_turn`: started by the end of the turn itself)."""
        screen = self.screen
        if screen.turn_worker is not None and not after_turn:
            screen.say(screen.busy("/commit"))
            return
        if self.busy:
            screen.say("a commit is being made: wait for it, then /commit again")
            return
        self.busy = True
        try:
            await self._commit(auto)
        except SparkPairError as exc:  # a CommitError; or a damaged journal entry
            screen.show_error(exc)
        finally:
            self.busy = False

    async def _commit(self, auto: bool) -> None:
        from ..edits.journal import Journal
        from ..session.commit import make_commit, plan_commit, with_trailer, write_message
        from ..session.revert import check_whole, revert_message

        screen, root = self.screen, self.screen.launch.root
        journal = Journal(root)
        revert = self.revert
        if revert is not None:
            check_whole(revert, "/undo")
        turns = revert.undos if revert else await asyncio.to_thread(self._pending, journal)
        if not turns:
            screen.say("nothing to commit: every turn applied since the last commit is "
                       "committed or undone")
            return
        plan = await asyncio.to_thread(plan_commit, root, turns, journal)
        if not plan.files:
            screen.say("nothing to commit: HEAD holds the turns' files as they are")
            return
        whole = False
        if plan.mixed:
            listed = "; ".join(f"{shown(p)} ({why})" for p, why in plan.mixed.items())
            whole = await screen.app.push_screen_wait(ConfirmScreen(
                f"{listed}.\nCommit the whole file(s), your own edits in them included?"))
            if not whole:
                screen.say("not committed (the turn stays applied); commit by hand what you "
                           f"want: git add -p -- {' '.join(map(shlex.quote, plan.mixed))}")
                return
        settings = screen.driver.settings
        if revert is not None:
            message, why = revert_message(root, revert.commit), None
            message = with_trailer(message, settings.git.trailer if settings else "")
        else:
            screen.say("writing the commit message…")
            message, why = await write_message(screen.driver.client, plan,
                                               prompt="\n".join(plan.summaries),
                                               settings=settings)
        if not auto:
            title = (f"commit {len(plan.files)} file(s): "
                     + ", ".join(map(shown, plan.paths[:4]))
                     + (" …" if len(plan.paths) > 4 else ""))
            hint = f"the model could not write it ({why}): a plain template" if why else ""
            edited = await screen.app.push_screen_wait(MessageScreen(title, message, hint))
            if edited is None:
                screen.say("not committed (the turn stays applied); /commit asks again")
                return
            message = edited
        commit = await asyncio.to_thread(make_commit, plan, message, whole=whole,
                                         journal=journal)
        if revert is not None:
            self.revert = None
        subject = message.strip().splitlines()[0]
        screen.say(f"committed {commit[:12]}: {subject}"
                   + (f" ({plan.note})" if plan.note else ""))

    def _pending(self, journal: Journal) -> list[str]:
        """This session's applied turns that are neither undone nor committed; with none, the
        earlier ones made since HEAD's commit (an earlier session's, a headless run's)
        (blocking)."""
        from ..session.commit import uncommitted

        undone = {t.turn_id for t in journal.list_turns() if t.undone}
        mine = [t for t in self.applied if t not in undone and journal.commit_of(t) is None]
        return mine or uncommitted(self.screen.launch.root, journal)
