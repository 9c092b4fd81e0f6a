"""The working-tree watcher: watchfiles, debounced and coalesced, ignored paths skipped."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import watchfiles

from .aicomments import AIComment, find_ai_comments
from .files import IgnoreRules, read_text

log = logging.getLogger(__name__)

ChangeCallback = Callable[[set[str]], Any]
AICallback = Callable[[list[AIComment]], Any]


class Watcher:
    """Watches `root`; keeps the files changed since the last turn and reports change batches.

    Callbacks run on the event loop with a set of repo-relative paths (created, modified or
    deleted); an exception in one is logged and does not stop the watcher.
    """

    def __init__(self, root: Path, debounce_ms: int = 50, *, ai_comments: bool = True) -> None:
        self.root = Path(root).resolve()
        self.debounce_ms = debounce_ms
        self.rules = IgnoreRules(self.root)
        self._changed: dict[str, int] = {}  # path -> sequence number of its last change
        self._seq = 0
        self._mark = 0
        self._subs: list[ChangeCallback] = []
        self._ai_subs: list[AICallback] = []
        self._ai_seen: dict[str, set[tuple[str, str, str]]] = {}
        self._ai = ai_comments
        self._stop: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None

    # --- lifecycle -------------------------------------------------------------------------
    async def start(self) -> None:
        if self._task is not None:
            return
        self._stop = asyncio.Event()
        self._task = asyncio.create_task(self._run(), name="spark-pair-watcher")
        # awatch sets up the OS watches synchronously in the task's first step, before its first
        # real await; yielding to the loop a few times lets that step run.
        for _ in range(3):
            await asyncio.sleep(0)

    async def stop(self) -> None:
        if self._task is None:
            return
        assert self._stop is not None
        self._stop.set()
        try:
            await asyncio.wait_for(self._task, timeout=5.0)
        except (asyncio.TimeoutError, asyncio.CancelledError):
            self._task.cancel()
        except Exception:  # noqa: BLE001 - already logged by _run
            pass
        self._task = None

    async def __aenter__(self) -> Watcher:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # --- queries -------------------------------------------------------------------------
    def subscribe(self, callback: ChangeCallback) -> Callable[[], None]:
        """Call `callback(paths)` for every change batch; returns an unsubscribe function."""
        self._subs.append(callback)
        return lambda: self._subs.remove(callback) if callback in self._subs else None

    @contextlib.asynccontextmanager
    async def watch(self, callback: ChangeCallback) -> AsyncIterator[Watcher]:
        """Subscribe `callback` for the duration of a block (starting the watcher if needed);
        fits `Session(watch=watcher.watch)`."""
        await self.start()
        unsubscribe = self.subscribe(callback)
        try:
            yield self
        finally:
            unsubscribe()

    def subscribe_ai(self, callback: AICallback) -> Callable[[], None]:
        """Call `callback(comments)` with AI!/AI? comments that newly appeared in changed files."""
        self._ai_subs.append(callback)
        return lambda: self._ai_subs.remove(callback) if callback in self._ai_subs else None

    def mark_turn(self) -> set[str]:
        """Files changed since the previous mark; starts a new turn."""
        out = self.changed_since(self._mark)
        self._mark = self._seq
        return out

    def changed_since(self, mark: int | None = None) -> set[str]:
        """Files changed after `mark` (default: the last `mark_turn`)."""
        mark = self._mark if mark is None else mark
        return {p for p, s in self._changed.items() if s > mark}

    @property
    def mark(self) -> int:
        return self._seq

    def scan_ai_comments(self, paths: list[str]) -> list[AIComment]:
        """Remember the AI comments already in these files (so only new ones are reported)."""
        found: list[AIComment] = []
        for rel in paths:
            found += self._ai_comments_of(rel)
        return found

    # --- internals -----------------------------------------------------------------------
    async def _run(self) -> None:
        assert self._stop is not None
        try:
            watch = watchfiles.awatch(self.root, stop_event=self._stop, debounce=self.debounce_ms,
                                      step=min(50, max(10, self.debounce_ms)),
                                      watch_filter=self._keep, recursive=True,
                                      yield_on_timeout=True, rust_timeout=200)
            async for batch in watch:
                if batch:
                    self._handle({p for _, p in batch})
        except Exception:  # noqa: BLE001 - a broken watcher must not crash the session
            log.exception("the file watcher stopped")

    def _keep(self, change: watchfiles.Change, path: str) -> bool:
        # Cheap checks only (no subprocess on the event loop per path); git decides per batch.
        rel = self.rules.relative(path)
        return rel is not None and rel != "" and not self.rules.is_ignored_cached(rel)

    def _handle(self, abs_paths: set[str]) -> None:
        rels = set()
        for p in abs_paths:
            rel = self.rules.relative(p)
            if rel and not (self.root / rel).is_dir():
                rels.add(rel)
        if any(r.endswith(".gitignore") for r in rels):
            self.rules.forget()
        rels -= self.rules.is_ignored_many(sorted(rels))
        if not rels:
            return
        self._seq += 1
        for rel in rels:
            self._changed[rel] = self._seq
        for cb in list(self._subs):
            _call(cb, set(rels))
        if self._ai and self._ai_subs:
            new = [c for rel in sorted(rels) for c in self._new_ai_comments(rel)]
            if new:
                for cb in list(self._ai_subs):
                    _call(cb, new)

    def _ai_comments_of(self, rel: str) -> list[AIComment]:
        try:
            text = read_text(self.root, rel)
        except Exception:  # noqa: BLE001 - binary / too large / unreadable: no comments
            text = None
        found = find_ai_comments(rel, text) if text else []
        self._ai_seen[rel] = {c.key for c in found}
        return found

    def _new_ai_comments(self, rel: str) -> list[AIComment]:
        before = self._ai_seen.get(rel, set())
        return [c for c in self._ai_comments_of(rel) if c.key not in before]


_tasks: set[asyncio.Task[Any]] = set()  # keeps async callbacks alive until they finish


def _call(cb: Callable[[Any], Any], arg: Any) -> None:
    try:
        res = cb(arg)
        if asyncio.iscoroutine(res):
            task = asyncio.ensure_future(res)
            _tasks.add(task)
            task.add_done_callback(_done)
    except Exception:  # noqa: BLE001
        log.exception("a watcher callback failed")


def _done(task: asyncio.Task[Any]) -> None:
    _tasks.discard(task)
    if not task.cancelled() and task.exception() is not None:
        log.error("a watcher callback failed: %r", task.exception())
