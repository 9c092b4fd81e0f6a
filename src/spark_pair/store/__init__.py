"""The local request log (SQLite in the user data dir): every request, every bench run."""

from .records import Recorder, RequestRecord
from .sqlite import RequestStore

__all__ = ["Recorder", "RequestRecord", "RequestStore"]
