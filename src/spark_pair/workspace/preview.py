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


class _Peek:
    """The watcher as a build reads it, except that asking for the files changed since the
    last turn does not start a new one."""

    def __init__(self, watcher: Any) -> None:
        self._watcher = watcher

    def mark_turn(self) -> set[str]:
        return self._watcher.changed_since()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._watcher, name)


def preview(workspace: Workspace, prompt: str, files: Sequence[str], *,
            followup: bool) -> TurnRequest:
    """What `workspace.build(prompt, files, followup=followup)` would send now (blocking: it
    may read files; call it in a thread). The workspace is left as it was."""
    draft = copy.copy(workspace)
    draft.snapshot = ContextSnapshot()
    draft.snapshot.update(workspace.snapshot.texts)
    draft._whole = set(workspace._whole)
    if workspace.watcher is not None:
        draft.watcher = _Peek(workspace.watcher)  # type: ignore[assignment]
    return draft.build(prompt, files, followup=followup)[0]
