"""What a server offers: the auto transport probe's result, kept per base URL in the data dir.

A chat-only server is then not probed (ws -> responses -> chat) on every run. An entry is
forgotten after a day (servers gain modes) and after a failure of the remembered transport.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections import namedtuple
from pathlib import Path

from ..base import dirs
from ..base.transport import Transport

MAX_AGE_S = 24 * 3600.0
FILE_NAME = "transports.json"


class Remembered(namedtuple("Remembered", "transport at")):
    """A transport found to work (`at`: when, seconds since the epoch)."""

    __slots__ = ()
    transport: str
    at: float

    def age_s(self, now: float | None = None) -> float:
        return (time.time() if now is None else now) - self.at


def default_path() -> Path:
    return dirs.data_dir() / FILE_NAME


def recall_all(path: Path, now: float | None = None) -> dict[str, Remembered]:
    """Every entry younger than a day (an unreadable file remembers nothing)."""
    now = time.time() if now is None else now
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    out = {}
    for base_url, entry in (data.items() if isinstance(data, dict) else ()):
        if not isinstance(entry, dict):
            continue
        transport, at = entry.get("transport"), entry.get("at")
        if isinstance(transport, str) and isinstance(at, (int, float)) \
                and -60 <= now - at < MAX_AGE_S:  # a minute of clock skew is not the future
            out[base_url] = Remembered(transport, float(at))
    return out


def candidates(setting: str, path: Path | None, base_url: str
               ) -> tuple[list[Transport], str | None]:
    """The transports to try, in order, for the `transport` setting (auto: from the one
    remembered for `base_url` on), and the remembered one (None when nothing is)."""
    order = list(Transport)
    if setting != "auto":
        return [Transport(setting)], None
    known = recall(path, base_url) if path is not None else None
    if known is None or known.transport not in order:
        return order, None
    return order[order.index(Transport(known.transport)):], known.transport


def recall(path: Path, base_url: str, now: float | None = None) -> Remembered | None:
    return recall_all(path, now).get(base_url)


def remember(path: Path, base_url: str, transport: str, now: float | None = None) -> None:
    entries = recall_all(path, now)
    entries[base_url] = Remembered(transport, time.time() if now is None else now)
    _write(path, entries)


def forget(path: Path, base_url: str) -> None:
    entries = recall_all(path)
    if entries.pop(base_url, None) is not None:
        _write(path, entries)


def _write(path: Path, entries: dict[str, Remembered]) -> None:
    """Best effort: a data dir that cannot be written only costs a probe next time."""
    data = {url: {"transport": r.transport, "at": r.at} for url, r in entries.items()}
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(data, indent=1), encoding="utf-8")
        tmp.replace(path)
    except OSError:
        with contextlib.suppress(OSError):  # (a full disk: no empty temp file stays behind)
            tmp.unlink(missing_ok=True)
