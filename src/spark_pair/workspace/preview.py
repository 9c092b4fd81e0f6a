"""The request a draft would send, built without touching the workspace's state (for a
pre-warm while the prompt is typed): the build runs on a copy that forgets what it marks."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .prompt import ContextSnapshot

if TYPE_CHECKING:
    from ..protocol.request import TurnRequest
    from .context import Workspace
    from .prompt import Context


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


def preview(workspace: Workspace, prompt: str, files: Sequence[str], *,
            followup: bool) -> TurnRequest:
    """What `workspace.build(prompt, files, followup=followup)` would send now (blocking: it
    may read files; call it in a thread). The workspace is left as it was."""
    return _copy(workspace).build(prompt, files, followup=followup)[0]


def preview_context(workspace: Workspace, prompt: str, files: Sequence[str], *,
                    followup: bool) -> Context | None:
    """The file context a request for `prompt` would send now (what each file takes, the
    regions of those cut), or None; built as `preview` builds it, without the order of the
    files changing (the files pane shows it; it is not sent)."""
    draft = _copy(workspace)
    draft.order = copy.copy(workspace.order)
    draft.build(prompt, files, followup=followup)
    return draft.last_context
