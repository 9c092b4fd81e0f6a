"""Loading websockets for the WebSocket transport, without importlib.metadata.

websockets' version module imports importlib.metadata (with email, zipfile and more: about a
sixth of a WebSocket run's imports) for code only an unreleased build runs. While websockets
loads, a stand-in holds that name: on first use it loads the real module, so nothing breaks
if it is used after all; taken out once websockets is in, so any later import is the real one.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any

METADATA = "importlib.metadata"


def load_websockets() -> None:
    """Import websockets (the first WebSocket of the process calls this before any import of
    it; a process that holds either module already imports as usual)."""
    if "websockets" in sys.modules or METADATA in sys.modules:
        import websockets  # noqa: F401
        return
    stand_in = types.ModuleType(METADATA)
    parent = sys.modules["importlib"]

    def real(name: str) -> Any:
        _take_out(stand_in, parent)
        return getattr(importlib.import_module(METADATA), name)

    stand_in.__getattr__ = real  # type: ignore[method-assign]
    sys.modules[METADATA] = stand_in
    parent.metadata = stand_in  # type: ignore[attr-defined]
    try:
        import websockets.asyncio.client  # noqa: F401
    finally:
        _take_out(stand_in, parent)


def _take_out(stand_in: types.ModuleType, parent: types.ModuleType) -> None:
    if sys.modules.get(METADATA) is stand_in:
        del sys.modules[METADATA]
    if getattr(parent, "metadata", None) is stand_in:
        del parent.metadata
