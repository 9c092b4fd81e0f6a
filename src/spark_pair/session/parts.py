"""What a session is built from, and what each of its turns gets of it (`Parts`).

The session holds the parts (a front end may swap the client between turns); a turn gets them
as one value when it starts, so the turn's code never reaches back into the session.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ..protocol.events import Event, Transport, TurnRequest
from .approval import Approver

if TYPE_CHECKING:  # the store package opens SQLite; not needed before the request
    from ..protocol.records import Recorder, RequestRecord
    from ..store.forms import Form
    from ..store.verdicts import Verdict

WatchFn = Callable[[Callable[[set[str]], None]], Any]  # watch(on_change) -> async context manager


class WorkspaceLike(Protocol):
    """What the session needs from the workspace (files, prompt, history, watcher)."""

    def build(self, prompt: str, files: Sequence[str], *, followup: bool) -> tuple[
            TurnRequest, dict[str, str | None]]:
        """The request for a turn and the content hash of every file it showed the model."""
        ...

    def build_now(self, prompt: str, files: Sequence[str], *, followup: bool) -> tuple[
            TurnRequest, dict[str, str | None]] | None:
        """`build` without blocking (no file read): called on the event loop, so the request
        goes out at once; None when it would have to read (then `build` runs in a thread)."""
        ...

    def finish(self, request: TurnRequest, reply: str, applied: Sequence[str],
               review: str = "") -> None:
        """Remember a completed turn (history) and what the turn itself wrote; `review` is what
        a person made of the reply (rejections with reasons, amendments), for the next request."""
        ...


class ClientLike(Protocol):
    """What the session needs from a model client (protocol.client.ModelClient)."""

    @property
    def transport(self) -> Transport: ...

    def stream(self, request: TurnRequest, *, gather: bool = False) -> AsyncIterator[Event]:
        """The reply's events; ends with Completed or Failed and never raises ModelError.
        A TextDelta per server message; `gather`: the text of one read may come as one."""
        ...


class TurnRecorder:
    """Holds a turn's request records until the session knows the turn id, then stores them."""

    def __init__(self, store: Recorder | None = None) -> None:
        self.store = store
        self.pending: list[RequestRecord] = []

    def record(self, rec: RequestRecord) -> None:
        self.pending.append(rec)

    def flush(self, turn_id: str | None) -> list[RequestRecord]:
        records, self.pending = self.pending, []
        for rec in records:
            rec.turn_id = turn_id
            if self.store is not None:
                self.store.record(rec)
        return records

    def file_now(self, task: str, turn_id: str) -> None:
        """Store at once, under `turn_id`, the held records of `task`: a request beside the
        turns (a commit's message) that no later turn would file, or would file wrongly."""
        now = [rec for rec in self.pending if rec.task == task]
        self.pending = [rec for rec in self.pending if rec.task != task]
        for rec in now:
            rec.turn_id = turn_id
            if self.store is not None:
                self.store.record(rec)

    def form(self, turn_id: str, model: str, form: Form) -> None:
        """Keep how well-formed the turn's diff was (in a store that keeps it)."""
        if isinstance(self.store, FormStore):
            self.store.record_form(turn_id, model, form)

    def verdicts(self, turn_id: str, model: str, verdicts: Sequence[Verdict]) -> None:
        """Keep what a person made of the turn's hunks (in a store that keeps them)."""
        if verdicts and isinstance(self.store, VerdictStore):
            self.store.record_verdicts(turn_id, model, verdicts)


@runtime_checkable
class VerdictStore(Protocol):
    """A request store that also keeps review verdicts (spark-pair stats reads them)."""

    def record_verdicts(self, turn_id: str, model: str, verdicts: Sequence[Verdict]) -> None: ...


@runtime_checkable
class FormStore(Protocol):
    """A request store that also keeps how well-formed each reply's diff was."""

    def record_form(self, turn_id: str, model: str, form: Form) -> None: ...


@dataclass(frozen=True, slots=True)
class Parts:
    """What one turn works with: the session's parts as they were when the turn began."""

    root: Path
    client: ClientLike
    approver: Approver
    journal: Any  # edits.journal.Journal | None (loads with the first write)
    recorder: TurnRecorder | None
    watch: WatchFn | None  # watch(on_change) -> async context manager of changed paths
    observe: Callable[[Event], None] | None  # sees every protocol event but text
    ready: Callable[[], Awaitable[None]] | None  # awaited before the request goes out
    repair: bool = True  # hunks that match nowhere go back to the model once ([review] repair)
    look: Callable[[Sequence[str]], Any] | None = None  # the workspace's second look (None: off)
