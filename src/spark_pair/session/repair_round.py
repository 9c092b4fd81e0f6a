"""The repair round as the turn runs it: once the stream has ended, look at how the reply fits
(in a thread), ask the model once about the hunks that match nowhere, and hand the outcome to
the turn's loop through its inbox (`News`, then `Done`), so decisions and file changes are
still handled meanwhile and a cancel ends it at once."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from ..base.errors import Cancelled, SparkPairError
from ..edits.ops import Operation
from ..protocol.events import Completed, Failed, Retrying, TextDelta, TurnRequest
from . import repair
from .events import RepairRetrying, RepairStarted
from .parts import Parts


class News(NamedTuple):
    event: RepairStarted | RepairRetrying  # the round began, its request is retried: yielded


class Done(NamedTuple):
    survey: repair.Survey | None  # None: the look was stopped
    outcome: repair.RepairOutcome | None  # None: no round ran


class RepairRound:
    """One turn's look at its reply and (at most) one repair request."""

    def __init__(self, parts: Parts, put: Callable[[Any], None],
                 stop: Callable[[], bool]) -> None:
        self.s = parts
        self.put = put
        self.stop = stop
        self.task: asyncio.Task[None] | None = None

    @property
    def running(self) -> bool:
        return self.task is not None and not self.task.done()

    def start(self, ops: Sequence[Operation], request: TurnRequest, reply: str,
              model: str) -> None:
        if self.task is None:
            self.task = asyncio.create_task(self._run(list(ops), request, reply, model))

    async def cancel(self) -> None:
        task = self.task
        if task is not None and not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def _run(self, ops: list[Operation], request: TurnRequest, reply: str,
                   model: str) -> None:
        survey = outcome = None
        try:
            survey = await asyncio.to_thread(repair.survey, self.s.root, ops, stop=self.stop)
            if survey.misses and self.s.repair:
                outcome = await self._ask(ops, survey.misses, request, reply, model)
        except Cancelled:
            pass  # the turn is stopping: its cancel ends it
        except Exception as exc:  # noqa: BLE001 - a bug here must not hang or fail the turn
            if survey is not None and survey.misses:
                outcome = _failed(survey.misses, f"the repair round failed: {exc!r}")
        self.put(Done(survey, outcome))

    async def _ask(self, ops: list[Operation], misses: list[repair.Miss],
                   request: TurnRequest, reply: str, model: str) -> repair.RepairOutcome:
        self.put(News(RepairStarted(tuple((m.op_index, m.hunk_index, m.path) for m in misses),
                                    model)))
        ask = repair.follow_up(request, reply, repair.ask_text(misses))
        texts: list[str] = []
        done: Completed | None = None
        error: SparkPairError | None = None
        async for event in self.s.client.stream(ask):
            if type(event) is TextDelta:
                texts.append(event.text)
                continue
            if self.s.observe is not None:
                self.s.observe(event)
            if isinstance(event, Retrying):  # said as the main request's retries are
                self.put(News(RepairRetrying(event)))
            elif isinstance(event, Completed):
                done, error = event, event.shortfall()
            elif isinstance(event, Failed):
                error = event.error
        if error is not None:
            outcome = _failed(misses, f"the repair request failed: {error.message}")
        else:
            outcome = await asyncio.to_thread(repair.merge, self.s.root, ops, misses,
                                              "".join(texts), stop=self.stop)
        if done is not None:
            outcome.metrics, outcome.usage = done.metrics, done.usage
        return outcome


def _failed(misses: Sequence[repair.Miss], cause: str) -> repair.RepairOutcome:
    return repair.RepairOutcome(
        mended=[repair.Mended(m.op_index, m.hunk_index, m.path, False, cause) for m in misses],
        cause=cause)
