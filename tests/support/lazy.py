"""A module imported when a test first uses it, not when the test module is collected: every
xdist worker collects every test module (openai: 0.6 s of CPU a worker)."""

from __future__ import annotations

import importlib
from typing import Any


class Lazy:
    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("_"):  # pytest looks for its markers on whatever a module holds
            raise AttributeError(attr)
        return getattr(importlib.import_module(self._name), attr)
