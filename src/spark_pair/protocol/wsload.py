"""Loading websockets for the WebSocket transport, without the two modules it imports and never
uses here: importlib.metadata (its version module imports it for code only an unreleased build
runs) and urllib.request (for the system's proxies: spark-pair connects with proxy=None), with
email, http.client, zipfile and more: about half of what importing websockets costs.

While websockets loads, a stand-in holds each name; on first use it loads the real module, so
nothing breaks if one is used after all. Once websockets is in, the stand-ins leave
sys.modules, so any later import is of the real module.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any

UNUSED = ("importlib.metadata", "urllib.request")


def load_websockets() -> None:
    """Import websockets (call this before the process's first import of it)."""
    if "websockets" not in sys.modules:
        stand_ins = [_stand_in(name) for name in UNUSED if name not in sys.modules]
        try:
            import websockets.asyncio.client  # noqa: F401
        finally:
            for stand_in in stand_ins:
                _take_out(stand_in)


def _stand_in(name: str) -> types.ModuleType:
    """A module under `name` that loads the real one on the first look at an attribute."""
    stand_in = types.ModuleType(name)

    def real(attr: str) -> Any:
        _take_out(stand_in)
        return getattr(importlib.import_module(name), attr)

    stand_in.__getattr__ = real  # type: ignore[method-assign]
    sys.modules[name] = stand_in
    parent, _, child = name.rpartition(".")
    setattr(importlib.import_module(parent), child, stand_in)  # (till the real one is loaded)
    return stand_in


def _take_out(stand_in: types.ModuleType) -> None:
    if sys.modules.get(stand_in.__name__) is stand_in:
        del sys.modules[stand_in.__name__]
