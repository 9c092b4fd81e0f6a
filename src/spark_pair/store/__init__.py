"""The local request log (SQLite in the user data dir): every request, every bench run."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .records import Recorder, RequestRecord

if TYPE_CHECKING:
    from .sqlite import RequestStore

__all__ = ["Recorder", "RequestRecord", "RequestStore"]


def __getattr__(name: str) -> Any:
    # RequestStore (and sqlite3) load on first use: the client needs only the records module,
    # before its first request
    if name == "RequestStore":
        from .sqlite import RequestStore

        return RequestStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
