"""Which stored session to open (a module of its own: a front end names one before the store
and its modules are loaded)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Pick:
    newest: bool = False  # --continue: the newest session of the repository
    name: str | None = None  # --session NAME / --resume NAME
    create: bool = False  # a name not found begins a new session under it
