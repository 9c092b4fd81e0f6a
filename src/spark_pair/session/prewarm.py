"""Pre-warm while the prompt is typed: once the draft has been still for `[session] prewarm_ms`,
the request it would send goes out with `generate: false` (WebSocket mode only), chained on the
conversation; enter then continues the warm response and the server has little left to read.

    warmer = DraftWarmer(runtime, delay_ms=300)
    warmer.draft_changed(text, files_for)   # each keystroke; files_for(text) -> the files
    await warmer.settled()                  # before a turn's request (one response per socket)

Bounds: one pre-warm in flight at most, one every two seconds at most, none while a turn
runs, none for a draft left alone over a minute, none over the HTTP transports, and none for a
draft whose request differs from the last pre-warm's only in its instruction (the end of the
request: workspace.sentorder): the server read all before it with that pre-warm and its
prompt cache gives that to the turn (bench_prewarm, two turns typed at a human pace: 7
pre-warms, ~24,000 input tokens a turn, before this rule; 2, ~6,800 a turn, with it; the same
first-token gain, 470 -> 156 ms). The client counts the hits (a turn continued the warm
response), the prefix ones (the turn differed from it only in its last item's tail) and the
misses."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from ..base.transport import Transport

log = logging.getLogger(__name__)

MIN_GAP_S = 2.0  # between two pre-warms
IDLE_S = 60.0  # a draft left alone this long is not pre-warmed (any more)
FilesFor = Callable[[str], Awaitable[list[str]]]


class WarmerHost(Protocol):
    """What the warmer uses of the runtime (session.runtime.Runtime)."""

    session: Any
    client: Any
    workspace: Any

    async def warmed_socket(self) -> None: ...


class DraftWarmer:
    def __init__(self, runtime: WarmerHost, delay_ms: int,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.runtime = runtime
        self.delay_s = max(0, delay_ms) / 1000
        self.clock = clock
        self.sent = 0  # pre-warms that went out
        self.tokens = 0  # their input tokens, estimated (the server reads each of them)
        self.skipped = 0  # drafts not sent: the last pre-warm asked the same but the instruction
        self._timer: asyncio.TimerHandle | None = None
        self._task: asyncio.Task[None] | None = None
        self._typed_at = 0.0
        self._sent_at = -MIN_GAP_S
        self._warmed = ""  # the draft warmed last (not warmed again while it stays)
        self._warmed_head: tuple[str, ...] = ()  # its request up to the instruction
        self._warm_mark: tuple[Any, ...] | None = None  # what it was sent on (_mark)

    @property
    def enabled(self) -> bool:
        return self.delay_s > 0

    @property
    def counts(self) -> tuple[int, int, int]:
        """(hits, prefix, misses) of the client in use (protocol.client.warm_counts)."""
        return self.runtime.client.warm_counts

    def draft_changed(self, text: str, files_for: FilesFor) -> None:
        """The prompt now holds `text`: pre-warm it once it has been still long enough."""
        self.cancel_timer()
        text = text.strip()
        if not self.enabled or not text or text.startswith("/"):
            return
        self._typed_at = self.clock()
        self._later(self.delay_s, text, files_for)

    def cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    async def settled(self) -> None:
        """Wait for the pre-warm in flight (the socket answers one response at a time); the
        timer of a draft not warmed yet is dropped (a turn is about to start)."""
        self.cancel_timer()
        task = self._task
        if task is not None and not task.done():
            await asyncio.wait({task})

    async def close(self) -> None:
        self.cancel_timer()
        if self._task is not None and not self._task.done():
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    def _later(self, delay: float, text: str, files_for: FilesFor) -> None:
        loop = asyncio.get_running_loop()
        self._timer = loop.call_later(delay, self._fire, text, files_for)

    def _fire(self, text: str, files_for: FilesFor) -> None:
        self._timer = None
        now = self.clock()
        if now - self._typed_at > IDLE_S or text == self._warmed:
            return
        if self._task is not None and not self._task.done():  # one at a time: after it
            self._later(0.05, text, files_for)
            return
        gap = self._sent_at + MIN_GAP_S - now
        if gap > 0:
            self._later(gap, text, files_for)
            return
        self._task = asyncio.create_task(self._warm(text, files_for))

    def _may_send(self) -> bool:
        rt = self.runtime
        return not rt.session.running and rt.client.transport == Transport.WS

    async def _warm(self, text: str, files_for: FilesFor) -> None:
        from ..workspace.preview import preview

        rt = self.runtime
        if not self._may_send():
            return
        await rt.warmed_socket()
        try:
            files = await files_for(text)
            request = await asyncio.to_thread(preview, rt.workspace, text, files,
                                              followup=rt.session.turns > 0)
        except Exception as exc:  # noqa: BLE001 - best effort: the turn reports real problems
            log.debug("no pre-warm for the draft: %r", exc)
            return
        if not self._may_send():  # a turn started meanwhile
            return
        from ..protocol.metrics import estimate_request_tokens
        from ..workspace.sentorder import before_instruction

        head = before_instruction(request)
        self._warmed = text
        if head == self._warmed_head and self._mark() == self._warm_mark:
            self.skipped += 1  # the server holds all of it but the instruction
            return
        self._sent_at = self.clock()
        self._warmed_head = head
        self.sent += 1
        self.tokens += estimate_request_tokens(request)
        self._warm_mark = self._mark() if await rt.client.warm_draft(request) else None

    def _mark(self) -> tuple[Any, ...]:
        """What a pre-warm's prefix was read by: the client (`/model` or a transport switch
        makes a new one, whose counts start again at zero), its model, its socket (a reopened
        one is a new connection), and the turns and hits since (a turn met the pre-warm)."""
        rt = self.runtime
        client = rt.client
        return (client, client.model, client.connection_count, rt.session.turns,
                client.warm_counts)
