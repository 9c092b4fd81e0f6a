"""The conversation kept in the session store: which one a front end opens, and each turn
written once it is over.

    stored = StoredSession.open(root, pick=Pick(resume=True))   # blocking: call it in a thread
    stored.attach(rt.session, rt.workspace)                # history restored, turns kept
    ...
    stored.close()                                       # waits for the pending writes

`Pick`: a new session (the default), the newest of the repository (`newest`), or one by name
(`name`; created under that name when `create` allows). A session open in another live
process is refused (UsageError naming it); a name that is taken is refused too.

The store is written from one worker thread (never on the event loop), one transaction per
finished turn: a process killed mid-turn loses that turn only. A store that cannot be opened
never fails a turn: the warning says so and the turns go unrecorded.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..base.errors import UsageError, redact
from ..store.sessions import (
    ROLLED_BACK,
    UNDONE,
    SessionInfo,
    SessionStore,
    StoredTurn,
    is_fix_round,
    this_owner,
)
from .history import DROPPED, SessionHistory, outcome_note
from .pick import Pick

if TYPE_CHECKING:
    from ..store.verdicts import Verdict
    from ..workspace.context import Workspace
    from .events import TurnResult
    from .session import Session


class StoredSession:
    """One stored session, open in this process."""

    def __init__(self, store: SessionStore, info: SessionInfo, turns: list[StoredTurn],
                 warn: Callable[[str], None]) -> None:
        self.store = store
        self.info = info
        self.turns = turns  # as stored when it was opened, then each turn kept here
        self.warn = warn
        self.resumed = bool(turns)
        self.history: SessionHistory | None = None
        self.context: list[str] = list(info.context)
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="spark-pair-sessions")
        self._owner = this_owner()
        self.one_shot = False  # the process ends after one turn: its write lets the session go
        # the context set a person keeps (the app's pinned files); None: a turn's own files
        self.pinned: Callable[[], list[str]] | None = None

    # ---- opening (blocking) ------------------------------------------------------------------

    @classmethod
    def open(cls, root: Path, pick: Pick | None = None, *, model: str = "",
             path: Path | None = None, warn: Callable[[str], None] | None = None
             ) -> StoredSession:
        """The session `pick` names (a new one named free in the store), claimed for this
        process. Raises UsageError (none to continue, a name not found, a session open
        elsewhere) and ConfigError (no store)."""
        say = warn or (lambda _text: None)
        pick = pick or Pick()
        store = SessionStore(path, warn=say)
        try:
            info = _chosen(store, root, pick, model)
            other = store.claim(info.id)
            if other:
                raise UsageError(
                    f"the session {info.name!r} is open in another spark-pair ({other})",
                    hint="finish there first, or start a new session (leave out --continue "
                         "/ --session), or fork it there with /fork")
            turns = store.turns(info.id)
        except BaseException:
            store.close()
            raise
        return cls(store, info, turns, say)

    # ---- the live session -------------------------------------------------------------------

    def attach(self, session: Session, workspace: Workspace, *, max_turns: int = 6,
               budget_tokens: int = 8000, rule: bool = True) -> None:
        """Resend the stored turns with the next request (within budget) and keep each new
        turn. The first request after a resume sends the history afresh, never a chain.
        `rule=False` resends every turn whole (to measure what the rule saves)."""
        history = SessionHistory(max_turns, budget_tokens, rule=rule)
        review = history.restore(self.turns)
        workspace.restore(history, review)
        self.history = history
        if self.turns:
            session.turns = len(self.turns)
        session.keep = self.keep

    @property
    def going(self) -> int:
        """How many of the stored turns the next request resends (once attached)."""
        if self.history is None:
            return sum(t.status not in DROPPED for t in self.turns)
        return len(self.history.kept())

    def keep(self, prompt: str, files: Sequence[str], result: TurnResult,
             verdicts: Sequence[Verdict], remembered: bool) -> None:
        """The session calls this once a turn is over (on the loop): the turn is written in
        the store's thread; `remembered` says the workspace added it to the history."""
        turn = StoredTurn(
            instruction=prompt, reply=result.text, model=result.model, status=str(result.status),
            turn_id=result.turn_id if result.changed else "",
            decisions=[v.as_dict() for v in verdicts], changed=list(result.changed),
            error=result.error.message if result.error is not None else "",
            input_tokens=result.usage.input_tokens if result.usage is not None else 0,
            ts=time.time())
        if remembered and self.history is not None:
            self.history.mark_last(turn.status, outcome_note(turn), turn.turn_id)
        self.context = list(files if self.pinned is None else self.pinned())
        self.turns.append(turn)
        release = self._owner if self.one_shot else None
        # the session's model is one that answered: a turn that failed before any reply (a
        # model not found) does not make `-c` carry on with its model
        model = result.model if result.text or result.error is None else ""
        self._submit(lambda: self.store.add_turn(self.info.id, turn, model=model or None,
                                                 context=self.context, release=release))

    def checked(self, turn_id: str, command: str, ok: bool, tail: str) -> None:
        """The configured check's result for an applied turn."""
        check = {"command": redact(command), "ok": ok, "tail": redact(tail)[-2000:]}
        for t in self.turns:
            if t.turn_id == turn_id:
                t.check = check
        self._marked(turn_id)
        self._submit(lambda: self.store.set_check(self.info.id, turn_id, check))

    def rolled_back(self, turn_id: str) -> str:
        """An applied turn was rolled back (its check failed): kept so; returns the note the
        next request tells the model (with the check's output, when it ran)."""
        return self._status(turn_id, ROLLED_BACK)

    def undone(self, turn_id: str, undone: bool = True) -> str:
        """An applied turn of this session was undone by the user (/undo), or written again
        (/redo: `undone` False); returns the note the next request tells the model ("" when
        the turn is not one of this session's)."""
        turn = next((t for t in self.turns if turn_id and t.turn_id == turn_id), None)
        if turn is None:
            return ""
        if undone:
            return self._status(turn_id, UNDONE) if turn.status == "applied" else ""
        return self._status(turn_id, "applied") if turn.status in (UNDONE, ROLLED_BACK) else ""

    def _status(self, turn_id: str, status: str) -> str:
        """A kept turn's outcome changed: stored so; returns the model's note of it."""
        for t in self.turns:
            if t.turn_id == turn_id:
                t.status = status
        self._submit(lambda: self.store.set_status(self.info.id, turn_id, status))
        return self._marked(turn_id)

    def _marked(self, turn_id: str) -> str:
        """The history's entry of a turn takes its stored outcome again (returned)."""
        turn = next((t for t in self.turns if turn_id and t.turn_id == turn_id), None)
        if turn is None:
            return ""
        note = outcome_note(turn)
        if self.history is not None:
            self.history.mark(turn_id, turn.status, note)
        return note

    def rename(self, name: str) -> Future[None]:
        """Rename the session (UsageError from the future when the name is taken)."""
        def run() -> None:
            self.store.rename(self.info.id, name)
            self.info.name = name.strip()
        return self._pool.submit(run)

    def fork(self) -> Future[StoredSession]:
        """A new session with this one's turns (this one stays as it is), claimed here."""
        def run() -> StoredSession:
            info = self.store.fork(self._current())
            self.store.claim(info.id)
            self.store.release(self.info.id, self._owner)
            new = StoredSession(SessionStore(self.store.path, warn=self.warn), info,
                                self.store.turns(info.id), self.warn)
            new.pinned = self.pinned
            return new
        return self._pool.submit(run)

    def listing(self) -> Future[list[SessionInfo]]:
        return self._pool.submit(lambda: self.store.listed(self.info.repo))

    def _current(self) -> SessionInfo:
        info = self.info
        info.turns = len(self.turns)
        info.last_instruction = next((t.instruction for t in reversed(self.turns)
                                      if not is_fix_round(t.instruction)), "")
        return info

    def _submit(self, write: Callable[[], Any]) -> None:
        def run() -> None:
            try:
                write()
            except Exception as exc:  # noqa: BLE001 - a store's failure never fails a turn
                self.warn(f"could not store the session's turn ({exc})")
        self._pool.submit(run)

    def flush(self) -> None:
        """Wait for the pending writes (each is committed when it returns)."""
        self._pool.submit(lambda: None).result()

    def close(self) -> None:
        """Wait for the pending writes, let the session go, close the store."""
        def end() -> None:
            try:
                self.store.release(self.info.id, self._owner)
                if not self.turns:  # opened (or forked empty) and left: not kept
                    self.store.drop_if_empty(self.info.id)
            finally:
                self.store.close()
        self._pool.submit(end)
        self._pool.shutdown(wait=True)


def _chosen(store: SessionStore, root: Path, pick: Pick, model: str) -> SessionInfo:
    repo = str(root)
    if pick.name is not None:
        found = store.named(repo, pick.name)
        if found is not None:
            return found
        if pick.create:
            try:
                return store.create(repo, model=model, name=pick.name)
            except UsageError:  # begun by another process meanwhile: that one
                found = store.named(repo, pick.name)
                if found is None:
                    raise
                return found
        raise UsageError(f"there is no session named {pick.name!r} in this repository",
                         hint="`spark-pair sessions` lists them")
    if pick.newest:
        found = store.newest(repo)
        if found is None:
            raise UsageError("there is no earlier session in this repository to continue",
                             hint="leave out --continue to begin one")
        return found
    return store.create(repo, model=model)
