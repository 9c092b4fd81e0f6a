"""The workspace pieces a headless run needs: repo root, the Workspace and its file watcher."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any


@contextlib.asynccontextmanager
async def open_context(root: Path, settings: Any, client: Any) -> AsyncIterator[tuple[Any, Any]]:
    """(Workspace, watch) for a Session; the watcher runs for the block's duration."""
    from ..workspace import Watcher, Workspace

    session_cfg = getattr(settings, "session", None)
    budget = getattr(session_cfg, "context_tokens", None)
    turns = getattr(session_cfg, "history_turns", None)
    watcher = Watcher(root)
    workspace = Workspace(root, watcher=watcher, chained=lambda: client.transport == "ws",
                          **({"budget_tokens": int(budget)} if budget else {}),
                          **({"history_turns": int(turns)} if turns else {}))
    try:
        yield workspace, watcher.watch  # the session starts it once its request is on the way
    finally:
        await watcher.stop()
