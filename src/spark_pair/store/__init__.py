"""The local stores (SQLite in the user data dir): the request log (every request, every bench
run, the review verdicts, the fix rounds; `stats` reads it) and the stored sessions."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .sqlite import RequestStore

__all__ = ["RequestStore"]


def __getattr__(name: str) -> Any:
    # RequestStore (and sqlite3) load on first use: a run keeps its record once the reply is in
    if name == "RequestStore":
        from .sqlite import RequestStore

        return RequestStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
