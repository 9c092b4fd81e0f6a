"""Word-level marks for the live diff, computed off the event loop and kept per hunk.

A painted row asks for its hunk's marks: when they are known they are returned at once;
otherwise the hunk's lines go to one worker thread and None comes back (the row is painted
plain). When the worker is done, `ready(key)` is called on the loop so the view repaints that
hunk's rows. A comparison can take tens of milliseconds on long lines; on the loop that would
stall every frame, in the worker it only shares the interpreter with it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Hashable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Generic, TypeVar

from ..edits.words import Span, hunk_word_spans

Marks = dict[int, list[Span]]  # a hunk's line index -> its changed spans
K = TypeVar("K", bound=Hashable)  # what names a hunk (the live diff's: operation, hunk)


class WordMarks(Generic[K]):
    """Each hunk's word marks, by key; computed once, in a worker thread."""

    def __init__(self, ready: Callable[[K], None]) -> None:
        self._ready = ready
        self._done: dict[K, Marks] = {}
        self._pending: set[K] = set()
        self._generation = 0  # a clear() forgets the work in flight
        self._pool: ThreadPoolExecutor | None = None

    @property
    def pending(self) -> bool:
        """Some hunk's marks are being worked out."""
        return bool(self._pending)

    def get(self, key: K, lines: Callable[[], Sequence[str]]) -> Marks | None:
        """The hunk's marks, or None while they are worked out (`lines()`: the hunk's lines
        with their markers, asked for once)."""
        found = self._done.get(key)
        if found is not None or key in self._pending:
            return found
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # painted outside the app's loop: work it out here
            found = self._done[key] = hunk_word_spans(lines())
            return found
        if self._pool is None:
            self._pool = ThreadPoolExecutor(1, thread_name_prefix="spark-pair-words")
        self._pending.add(key)
        generation = self._generation
        job = self._pool.submit(hunk_word_spans, list(lines()))

        def finished(job: Future[Marks]) -> None:
            with contextlib.suppress(RuntimeError):  # the app's loop has closed
                loop.call_soon_threadsafe(self._finish, generation, key, job)

        job.add_done_callback(finished)
        return None

    def _finish(self, generation: int, key: K, job: Future[Marks]) -> None:
        if generation != self._generation:
            return
        self._pending.discard(key)
        failed = job.cancelled() or job.exception() is not None
        self._done[key] = {} if failed else job.result()
        self._ready(key)

    def clear(self) -> None:
        self._generation += 1
        self._done.clear()
        self._pending.clear()

    def close(self) -> None:
        self.clear()
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
