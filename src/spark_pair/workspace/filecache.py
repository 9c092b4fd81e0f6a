"""The context files, read ahead and kept current, so a turn's request is built without reading.

    cache = FileCache(root)
    entries = cache.refresh(["src/a.py"])  # in a thread: reads what changed since the last read
    entries = cache.fresh(["src/a.py"])    # stat only: the entries if none changed, else None
    entries["src/a.py"].text               # None: missing; .error, .digest, .tokens

Whether a file changed is decided by stat alone (device, inode, size, mtime and ctime, of the
path and, for a symlink, of what it points to). A file whose ctime is within RACY_NS of the
moment it was read could change again within the same timestamp tick without a visible stat
change (coarse file-system clocks): it is never trusted by `fresh` and is read again by the next
`refresh` (`settle_s()` says when that read will be trustworthy).
"""

from __future__ import annotations

import os
import stat
import time
from collections import namedtuple
from collections.abc import Callable, Iterable
from pathlib import Path

from ..base.errors import PathRefused, SparkPairError
from ..edits.paths import confine, content_hash, read_regular
from ..protocol.metrics import estimate_tokens
from .files import read_checked

RACY_NS = 2_000_000_000  # the coarsest common file-system timestamp (FAT: 2 s)

Stamp = tuple[int, ...]


class Cached(namedtuple("Cached", "stamp text error digest tokens racy")):
    """One file as it was read."""

    __slots__ = ()
    stamp: Stamp
    text: str | None  # None: the file does not exist (or could not be read: `error`)
    error: SparkPairError | None  # why it cannot be sent (binary, too large, outside the repo)
    digest: str | None  # the content hash an operation on it is computed against
    tokens: int  # the estimate for the whole text
    racy: bool  # changed too close to the read to trust the stamp alone


class FileCache:
    """Repo files by relative path; entries are replaced whole (safe to read from the loop while
    a worker thread refreshes)."""

    def __init__(self, root: Path, *, clock: Callable[[], int] = time.time_ns) -> None:
        self.root = Path(root)
        self.clock = clock  # wall time in ns, as file times are
        self._base = os.path.realpath(self.root)
        self._entries: dict[str, Cached] = {}

    def get(self, rel: str) -> Cached | None:
        return self._entries.get(rel)

    def fresh(self, rels: Iterable[str]) -> dict[str, Cached] | None:
        """The entries of `rels` if every one is cached and unchanged since it was read (stat
        only: cheap enough for the event loop), else None."""
        entries = self._entries
        out = {}
        for rel in rels:
            entry = entries.get(rel)
            if entry is None or entry.racy or _stamp(os.path.join(self._base, rel)) != entry.stamp:
                return None
            out[rel] = entry
        return out

    def refresh(self, rels: Iterable[str], *, keep_only: bool = False) -> dict[str, Cached]:
        """The current entries of `rels`: each file not cached, or changed since it was read, is
        read again (blocking: call it in a thread). `keep_only` forgets every other file."""
        out = {}
        for rel in dict.fromkeys(rels):
            entry = self._entries.get(rel)
            if entry is None or entry.racy or \
                    _stamp(os.path.join(self._base, rel)) != entry.stamp:
                entry = self._entries[rel] = self._read(rel)
            out[rel] = entry
        if keep_only:
            self._entries = {rel: e for rel, e in self._entries.items() if rel in out}
        return out

    def settle_s(self) -> float | None:
        """Seconds until a refresh would make every racy entry trustworthy (None: none is)."""
        racy = [e.stamp[-1] for e in self._entries.values() if e.racy and len(e.stamp) > 2]
        if not racy:
            return None
        return max(0.0, (max(racy) + RACY_NS - self.clock()) / 1e9)

    def _read(self, rel: str) -> Cached:
        now = self.clock()
        stamp = _stamp(os.path.join(self._base, rel))
        racy = len(stamp) > 2 and stamp[-1] > now - RACY_NS
        try:
            data = read_checked(self.root, rel)
        except SparkPairError as exc:  # not sent; its hash still tells a change from none
            return Cached(stamp, None, exc, content_hash(read_regular(self.root, rel)), 0, racy)
        if data is None:
            return Cached(stamp, None, None, None, 0, racy)
        text = data.decode("utf-8", errors="replace")
        return Cached(stamp, text, None, _digest(self.root, rel, data), estimate_tokens(text),
                      racy)


def _stamp(path: str) -> Stamp:
    """What stat says about `path`: the path itself and, through symlinks, its target; an
    error's number when there is none. The last item is the newest ctime (for the racy test)."""
    try:
        link = os.lstat(path)
    except OSError as exc:
        return (-1, exc.errno or 0)
    if not stat.S_ISLNK(link.st_mode):
        return (link.st_dev, link.st_ino, link.st_mode, link.st_size, link.st_mtime_ns,
                link.st_ctime_ns)
    try:
        info = os.stat(path)
    except OSError as exc:
        return (-2, link.st_ino, exc.errno or 0, link.st_ctime_ns)
    return (link.st_dev, link.st_ino, info.st_dev, info.st_ino, info.st_mode, info.st_size,
            info.st_mtime_ns, max(link.st_ctime_ns, info.st_ctime_ns))


def _digest(root: Path, rel: str, data: bytes) -> str | None:
    """The hash a write to `rel` is checked against, as `edits.paths.read_regular` reads it:
    none for a path a model may not write (a symlink, a refused name)."""
    try:
        confine(root, rel)
    except (PathRefused, OSError):
        return None
    return content_hash(data)
