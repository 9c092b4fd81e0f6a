"""The request a draft would send, built without touching the workspace's state (for a
pre-warm while the prompt is typed): the build runs on a copy that forgets what it marks.

The files pane's figures (`preview_context`) and the pre-warm (`preview`) of one settled draft
share one build: the last one is kept per workspace with what it was built from (the draft,
its files, the content of every file it may show, the files changed since the last turn, the
plan's lines and map, the history, the chain and the order of the last request), and a second
ask with all of that the same takes it (in its thread: a build in progress is waited for).
"""

from __future__ import annotations

import copy
import dataclasses
import threading
import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from .prompt import ContextSnapshot

if TYPE_CHECKING:
    from ..protocol.request import TurnRequest
    from .context import Workspace
    from .filecache import Cached
    from .prompt import Context
    from .sentorder import SentOrder


class _Peek:
    """The watcher as a build reads it, except that asking for the files changed since the
    last turn does not start a new one."""

    def __init__(self, watcher: Any) -> None:
        self._watcher = watcher

    def mark_turn(self) -> set[str]:
        return self._watcher.changed_since()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._watcher, name)


def _copy(workspace: Workspace) -> Workspace:
    """A copy of `workspace` whose build leaves it as it was."""
    draft = copy.copy(workspace)
    draft.snapshot = ContextSnapshot()
    draft.snapshot.update(workspace.snapshot.texts)
    draft._whole = set(workspace._whole)
    if workspace.watcher is not None:
        draft.watcher = _Peek(workspace.watcher)  # type: ignore[assignment]
    return draft


class _Built(NamedTuple):
    key: tuple[object, ...]
    request: TurnRequest
    context: Context | None
    order: SentOrder  # the order of the files as this build left it


class DraftBuilds:
    """The last draft build of one workspace, and how often one was made or shared."""

    def __init__(self) -> None:
        self.lock = threading.Lock()  # one draft build at a time: a second ask waits, shares
        self.last: _Built | None = None
        self.built = 0
        self.shared = 0


_builds: weakref.WeakKeyDictionary[Workspace, DraftBuilds] = weakref.WeakKeyDictionary()
_builds_lock = threading.Lock()


def builds_of(workspace: Workspace) -> DraftBuilds:
    """The draft builds of `workspace` (made on the first ask)."""
    with _builds_lock:
        found = _builds.get(workspace)
        if found is None:
            found = _builds[workspace] = DraftBuilds()
        return found


def preview(workspace: Workspace, prompt: str, files: Sequence[str], *,
            followup: bool) -> TurnRequest:
    """What `workspace.build(prompt, files, followup=followup)` would send now (blocking: it
    may read files; call it in a thread). The workspace is left as it was, but for the order
    of the files, which the turn then follows (a pre-warm's layout is the turn's)."""
    built = _draft(workspace, prompt, files, followup, follow=True)
    request = built.request  # a copy: the one kept may be handed out again
    return dataclasses.replace(request, new_input=list(request.new_input),
                               history=list(request.history))


def preview_context(workspace: Workspace, prompt: str, files: Sequence[str], *,
                    followup: bool) -> Context | None:
    """The file context a request for `prompt` would send now (what each file takes, the
    regions of those cut), or None; built as `preview` builds it, without the order of the
    files changing (the files pane shows it; it is not sent)."""
    return _draft(workspace, prompt, files, followup, follow=False).context


def _draft(workspace: Workspace, prompt: str, files: Sequence[str], followup: bool, *,
           follow: bool) -> _Built:
    """The build of a draft on a copy of `workspace`, or the last one when it was built from
    the same state; `follow`: the workspace takes the order of the files it laid out."""
    builds = builds_of(workspace)
    with builds.lock:
        entries = workspace.files.refresh(workspace._involved(files))
        key = _key(workspace, prompt, files, followup, entries)
        built = builds.last
        if built is not None and built.key == key:
            builds.shared += 1
        else:
            draft = _copy(workspace)
            draft.order = copy.copy(workspace.order)
            request = draft._build(prompt, files, followup, entries)[0]
            built = builds.last = _Built(key, request, draft.last_context, draft.order)
            builds.built += 1
        if follow:
            workspace.order = copy.copy(built.order)
        return built


def _key(workspace: Workspace, prompt: str, files: Sequence[str], followup: bool,
         entries: dict[str, Cached]) -> tuple[object, ...]:
    """Everything a draft's build reads (see Workspace._build)."""
    ws = workspace
    plan = ws._plan if ws._plan is not None and ws._plan.instruction == prompt else None
    history = ws.history
    turns = getattr(history, "entries", None)
    if turns is None:  # a plain History
        told: tuple[object, ...] = tuple((hash(t.instruction), hash(t.sent), hash(t.reply))
                                         for t in history.turns)
    else:
        told = tuple((hash(t.instruction), hash(t.sent), hash(t.reply), t.status, t.outcome)
                     for t in turns)
    return (
        prompt, tuple(files), followup, ws.budget_tokens, ws.max_tokens, ws.temperature,
        ws.system_prompt, ws._fresh, ws._review, bool(ws.chained()),
        None if plan is None else (plan.map, tuple(sorted(plan.focus().items()))),
        None if ws.watcher is None else frozenset(ws.watcher.changed_since()),
        tuple((rel, e.digest, None if e.text is None else hash(e.text),
               None if e.error is None else str(e.error)) for rel, e in entries.items()),
        tuple((rel, None if text is None else hash(text))
              for rel, text in ws.snapshot.texts.items()),
        frozenset(ws._whole), tuple(ws.order._last), history.max_turns,
        getattr(history, "budget_tokens", None), getattr(history, "rule", None), told)
