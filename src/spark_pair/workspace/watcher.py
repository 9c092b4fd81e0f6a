"""The working-tree watcher: watchfiles, debounced and coalesced, ignored paths skipped."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
from collections.abc import AsyncIterator, Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..edits.fsio import TMP_MARK
from .aicomments import AIComment, find_ai_comments
from .files import ALWAYS_IGNORED, IgnoreRules, read_text

if TYPE_CHECKING:  # watchfiles (and anyio) load when the watcher starts
    import watchfiles

log = logging.getLogger(__name__)

ChangeCallback = Callable[[set[str]], Any]
AICallback = Callable[[list[AIComment]], Any]


class Watcher:
    """Watches `root`; keeps the files changed since the last turn and reports change batches.

    Callbacks run on the event loop with a set of repo-relative paths (created, modified or
    deleted); an exception in one is logged and does not stop the watcher. A directory the user
    cannot read is left out (one note each in `notes`, logged as a one-line warning) and the
    rest stays watched.
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
        self._inner: asyncio.Task[None] | None = None
        self._inner_stop = asyncio.Event()
        self._dirs: list[str] = []
        self._task: asyncio.Task[None] | None = None
        self._handling = asyncio.Lock()
        self.notes: list[str] = []  # what is not watched and why, one line each
        self._own: dict[str, tuple[int, int] | None] = {}  # as spark-pair last left each file

    # --- lifecycle -------------------------------------------------------------------------
    async def start(self) -> None:
        if self._stop is not None:  # started (or starting)
            return
        self._stop = asyncio.Event()
        self._dirs = await asyncio.to_thread(self._top_dirs)  # git check-ignore: off the loop
        self._task = asyncio.create_task(self._run(), name="spark-pair-watcher")
        # awatch sets up the OS watches synchronously in the task's first step, before its first
        # real await; yielding to the loop a few times lets that step run.
        for _ in range(3):
            await asyncio.sleep(0)

    def stop_soon(self) -> None:
        """Ask the watches to end (each notices within its 50 ms step); `stop` waits for it."""
        if self._stop is not None:
            self._stop.set()
        self._inner_stop.set()

    async def stop(self) -> None:
        if self._task is None:
            return
        self.stop_soon()
        try:
            await asyncio.wait_for(self._task, timeout=5.0)
        except TimeoutError:
            pass  # wait_for has cancelled the task
        except Exception:  # noqa: BLE001 - already logged by _run
            pass
        self._task = None
        self._stop = None

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
        # a copy first: the session reads this from a worker thread while the loop adds to it
        return {p for p, s in list(self._changed.items()) if s > mark}

    def recent(self, limit: int = 5) -> list[str]:
        """The files a person changed on disk since the watcher started, newest first (not
        those as spark-pair itself last wrote them; blocking: stats them)."""
        changed = list(self._changed.items())  # a copy: read from a worker thread
        changed.sort(key=lambda kv: -kv[1])
        mine = [p for p, _ in changed if p in self._own]
        theirs = self.by_person(mine)
        return [p for p, _ in changed if p not in self._own or p in theirs][:limit]

    def own(self, rels: Iterable[str]) -> None:
        """spark-pair itself wrote, restored or removed these files: as they are now, they are
        not a person's edit (blocking: stats each)."""
        for rel in rels:
            self._own[rel] = _stamp(self.root / rel)

    def by_person(self, rels: Iterable[str]) -> set[str]:
        """Of `rels`, the files on disk not as spark-pair last left them (a file that came and
        went, or that spark-pair wrote and nobody touched since, is not; blocking: stats)."""
        out = set()
        for rel in rels:
            stamp = _stamp(self.root / rel)
            if stamp is not None and (rel not in self._own or self._own[rel] != stamp):
                out.add(rel)
        return out

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
        """Two watches: the root itself (not recursive) and every top-level directory that is
        not ignored (recursive), so .venv/, node_modules/ and the like never cost OS watches."""
        assert self._stop is not None
        self._restart_inner()
        await self._watch([self.root], recursive=False, stop=self._stop)
        self._inner_stop.set()
        if self._inner is not None:
            await asyncio.gather(self._inner, return_exceptions=True)

    def _top_dirs(self) -> list[str]:
        try:
            names = sorted(e.name for e in os.scandir(self.root)
                           if e.is_dir(follow_symlinks=False) and e.name not in ALWAYS_IGNORED)
        except OSError:
            return []
        ignored = self.rules.is_ignored_many(names)
        return [n for n in names if n not in ignored]

    def _restart_inner(self) -> None:
        if self._inner is not None:
            self._inner_stop.set()
        self._inner_stop = asyncio.Event()
        paths = [self.root / d for d in self._dirs]
        self._inner = (asyncio.create_task(self._watch(paths, recursive=True,
                                                       stop=self._inner_stop))
                       if paths else None)

    async def _watch(self, paths: list[Path], *, recursive: bool, stop: asyncio.Event) -> None:
        try:
            import watchfiles

            watch = watchfiles.awatch(*paths, stop_event=stop, debounce=self.debounce_ms,
                                      step=min(50, max(10, self.debounce_ms)),
                                      watch_filter=self._keep, recursive=recursive)
            async for batch in watch:
                await self._handle({p for _, p in batch})
        except PermissionError as exc:  # a directory the user cannot read
            blocked = await asyncio.to_thread(_unreadable_dirs, paths, str(exc), recursive)
            if not blocked or stop.is_set():
                self._note(f"the file watcher stopped: {exc}")
                return
            for d in sorted(blocked):
                rel = self.rules.relative(d) or d
                self._note(f"cannot read {rel}/ (permission denied): changes inside it are "
                           "not watched")
            deep, flat = _split_roots(paths if recursive else [], blocked)
            flat += [p for p in paths if not recursive and str(p) not in blocked]
            await asyncio.gather(*(self._watch(roots, recursive=rec, stop=stop)
                                   for roots, rec in ((deep, True), (flat, False)) if roots))
        except Exception as exc:  # noqa: BLE001 - a broken watcher must not crash the session
            self._note(f"the file watcher stopped: {type(exc).__name__}: {exc}")

    def _note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)
            log.warning("%s", text)

    def _new_top_dirs(self, rels: set[str]) -> list[str]:
        new = [r for r in rels if "/" not in r and r not in self._dirs
               and (self.root / r).is_dir() and not (self.root / r).is_symlink()]
        return [r for r in new if r not in self.rules.is_ignored_many(new)]

    def _keep(self, change: watchfiles.Change, path: str) -> bool:
        # Cheap checks only (no subprocess on the event loop per path); git decides per batch.
        # spark-pair's own temp files (an atomic write's, a rollback's) are not changes.
        rel = self.rules.relative(path)
        return (rel is not None and rel != "" and TMP_MARK not in rel.rpartition("/")[2]
                and not self.rules.is_ignored_cached(rel))

    async def _handle(self, abs_paths: set[str]) -> None:
        """One batch: filtered in a worker thread (stat, git check-ignore, reading files for AI
        comments), reported on the loop. The two watches hand batches over one at a time."""
        async with self._handling:
            rels, new_dirs = await asyncio.to_thread(self._filter, abs_paths)
            if new_dirs:
                self._dirs = sorted({*self._dirs, *new_dirs})
                self._restart_inner()
            if not rels:
                return
            self._seq += 1
            for rel in rels:
                self._changed[rel] = self._seq
            for sub in list(self._subs):
                _call(sub, set(rels))
            if self._ai and self._ai_subs:
                new = await asyncio.to_thread(
                    lambda: [c for rel in sorted(rels) for c in self._new_ai_comments(rel)])
                for ai_sub in list(self._ai_subs) if new else []:
                    _call(ai_sub, new)

    def _filter(self, abs_paths: set[str]) -> tuple[set[str], list[str]]:
        """The repo paths of a batch that count (files, not ignored) and the new top-level
        directories to watch (blocking: runs in a thread)."""
        rels = {rel for p in abs_paths if (rel := self.rules.relative(p))}
        new_dirs = self._new_top_dirs(rels)
        for d in new_dirs:  # files made before its watch existed count too
            rels |= {f"{d}/{f}" for f in _walk_files(self.root / d)}
        rels = {r for r in rels if not (self.root / r).is_dir()}
        if any(r.endswith(".gitignore") for r in rels):
            self.rules.forget()
        rels -= self.rules.is_ignored_many(sorted(rels))
        return rels, new_dirs

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


_ABOUT = re.compile(r"about (\[.*\])")


def _unreadable_dirs(paths: list[Path], message: str, recursive: bool) -> set[str]:
    """The directories under `paths` that cannot be listed (the ones a watch fails on), and
    those the watcher's error names."""
    found: set[str] = set()
    match = _ABOUT.search(message)
    if match:
        with contextlib.suppress(ValueError, TypeError):
            found |= {str(p) for p in json.loads(match.group(1)) if isinstance(p, str)}
    for top in paths:
        try:
            os.listdir(top)
        except OSError:
            found.add(str(top))
            continue
        if recursive:
            for _ in os.walk(top, onerror=lambda err: found.add(str(err.filename))):
                pass
    return {d for d in found if any(d == str(p) or d.startswith(str(p) + os.sep)
                                    for p in paths)}


def _split_roots(paths: list[Path], blocked: set[str]) -> tuple[list[Path], list[Path]]:
    """(recursive, flat) watch roots that cover `paths` except the `blocked` directories."""
    deep: list[Path] = []
    flat: list[Path] = []
    todo = list(paths)
    while todo:
        path = todo.pop()
        here = str(path)
        if here in blocked:
            continue
        if not any(b.startswith(here + os.sep) for b in blocked):
            deep.append(path)
            continue
        flat.append(path)
        with contextlib.suppress(OSError):
            todo += [Path(e.path) for e in os.scandir(path) if e.is_dir(follow_symlinks=False)]
    return sorted(deep), sorted(flat)


def _walk_files(top: Path, limit: int = 2000) -> list[str]:
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames[:] = [d for d in dirnames if d not in ALWAYS_IGNORED]
        rel = Path(dirpath).relative_to(top).as_posix()
        out += [n if rel == "." else f"{rel}/{n}" for n in filenames]
        if len(out) >= limit:
            break
    return out[:limit]


_tasks: set[asyncio.Task[Any]] = set()  # keeps async callbacks alive until they finish


def _stamp(path: Path) -> tuple[int, int] | None:
    """A file's modification time and size (None: not a file on disk)."""
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size) if not os.path.isdir(path) else None


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
