"""The stored session of a headless run: a new one, the newest (`--continue`) or a named one
(`--session NAME`, begun when there is none by that name). Each run's turn is kept, so the
next `run --continue` carries the conversation on.

A continued or named session is opened before the runtime (its model is the run's). A new one
is opened in its own thread while the runtime starts, so its name is stored (free in the
store) before the `session` line says it; its turn is written in that thread when the turn is
over (that write lets it go too).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

from ..base.errors import SparkPairError
from .options import RunOptions

if TYPE_CHECKING:
    from ..session.events import TurnResult
    from ..session.runtime import Runtime
    from ..session.stored import StoredSession
    from ..store.verdicts import Verdict


class RunStoredSession:
    """The session one run keeps (see the module docstring)."""

    def __init__(self, root: Path, opts: RunOptions, warn: Callable[[str], None]) -> None:
        self.root, self.opts, self.warn = root, opts, warn
        self.current: StoredSession | None = None
        self.name: str | None = None
        self.earlier = 0  # turns before this run
        self._pool: ThreadPoolExecutor | None = None  # a new session's thread
        self._opening: Future[None] | None = None  # a new session being opened

    @property
    def named(self) -> bool:
        return self.opts.continue_ or self.opts.session is not None

    async def before(self) -> None:
        """--continue / --session: open it now (UsageError when it can not be); its model is
        the run's unless --model says otherwise. A new one: opened meanwhile (`attach`)."""
        if not self.named:
            self._pool = ThreadPoolExecutor(max_workers=1,
                                            thread_name_prefix="spark-pair-sessions")
            self._opening = self._pool.submit(self._open,
                                              self.opts.overrides.get("model.name", ""))
            return
        opts = self.opts

        def open_it() -> StoredSession:
            from ..session.stored import Pick, StoredSession

            pick = Pick(newest=opts.continue_, name=opts.session, create=opts.session is not None)
            return StoredSession.open(self.root, pick, model=opts.overrides.get("model.name", ""),
                                      warn=self.warn)

        stored = self.current = await asyncio.to_thread(open_it)
        self.name, self.earlier = stored.info.name, len(stored.turns)
        if stored.info.model and "model.name" not in opts.overrides:
            opts.overrides["model.name"] = stored.info.model

    def attach(self, rt: Runtime) -> None:
        """Resend the earlier turns with this run's request; keep its turn. A new session is
        waited for here, so the name said is the one stored (or none, said why)."""
        if self._opening is not None:
            self._opening.result()
            if self.current is not None:
                rt.session.keep = self._keep
            return
        stored = self.current
        if stored is not None:
            session = rt.settings.session
            stored.attach(rt.session, rt.workspace, max_turns=int(session.history_turns),
                          budget_tokens=int(session.history_tokens))
            stored.one_shot = self.opts.leave is not None

    def _open(self, model: str) -> None:
        """Open a new session: the store gives it a name free there (none when it fails)."""
        if self.current is not None:
            return
        from ..session.stored import StoredSession

        try:
            stored = StoredSession.open(self.root, model=model, warn=self.warn)
        except SparkPairError as exc:
            self.warn(f"the session is not stored: {exc.message}")
            self.name = None
            return
        stored.one_shot = True
        self.name, self.current = stored.info.name, stored

    def _keep(self, prompt: str, files: Sequence[str], result: TurnResult,
              verdicts: list[Verdict], remembered: bool) -> None:
        def write() -> None:
            if self.current is not None:
                self.current.keep(prompt, files, result, verdicts, remembered)
                self.current.flush()

        assert self._pool is not None
        self._pool.submit(write)

    def checked(self, turn_id: str, command: str, ok: bool, tail: str) -> None:
        """The check's result for the run's applied turn (after that turn's write)."""
        def write() -> None:
            if self.current is not None:
                self.current.checked(turn_id, command, ok, tail)
                self.current.flush()

        if self._pool is not None:
            self._pool.submit(write)
        else:
            write()

    def flush(self) -> None:
        """Wait for the turn's write (it is committed once this returns)."""
        if self._pool is not None:
            self._pool.submit(lambda: None).result()
        elif self.current is not None:
            self.current.flush()

    async def close(self) -> None:
        """Wait for the writes and let the session go."""
        pool, self._pool = self._pool, None
        if pool is not None:
            await asyncio.to_thread(pool.shutdown, True)
        if self.current is not None:
            await asyncio.to_thread(self.current.close)
