"""Which files changed on disk during a turn: the hashes the model saw, and those seen since."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from ..base.errors import SparkPairError
from ..edits.ops import Create, Delete, Operation, OpKind, content_hash


class StaleTracker:
    """The hashes one turn keeps per path, to tell which targets changed on disk."""

    def __init__(self, root: Path, hashes: dict[str, str | None]) -> None:
        self.root = root
        self.base = dict(hashes)  # path -> the hash of the content the model saw
        self.disk = dict(hashes)  # path -> the hash last seen on disk (one Stale per change)
        self.shown = dict(hashes)  # path -> the hash of what the model saw (never grows)
        self.changed_early: set[str] = set()  # changed before any operation named them
        self.existed: dict[str, bool] = {}  # a create's target was there when it was parsed
        self.writing: str | None = None  # path of the file being parsed now

    def add(self, hashes: dict[str, str | None]) -> None:
        """Files shown later in the turn (the second look): their hashes as the model saw them."""
        for table in (self.base, self.disk, self.shown):
            for path, digest in hashes.items():
                table.setdefault(path, digest)

    def is_stale(self, path: str) -> bool:
        return path in self.base and self.disk.get(path) != self.base[path]

    async def file_started(self, path: str, kind: OpKind) -> bool:
        """The parser began an operation on `path`; True when the file changed before (a
        Stale is due for it now)."""
        if path not in self.disk:
            self.disk[path] = await asyncio.to_thread(hash_of, self.root, path)
        # not shown to the model: the operation is computed against the file as it is now
        self.base.setdefault(path, self.disk[path])
        if kind == OpKind.CREATE and path not in self.existed:
            self.existed[path] = (self.base.get(path) is not None
                                  or await asyncio.to_thread(present, self.root, path))
        if path in self.changed_early:
            self.changed_early.discard(path)
            return True
        return False

    def base_of(self, op: Operation) -> str | None:
        """The hash an operation is computed against: a delete goes only with the file the
        model saw, or one matching its lines exactly (a file the model never saw is compared
        as it is on disk)."""
        seen = self.shown if isinstance(op, Delete) else self.base
        return seen.get(op.path)

    async def changed(self, path: str, named: bool) -> bool:
        """The watcher saw `path` change (`named`: an operation names it); True when that is a
        change to report now. A file no operation names yet is reported when its operation
        starts."""
        if path not in self.disk and not named:
            return False  # the model never saw it: an operation on it takes it as it is then
        now = await asyncio.to_thread(hash_of, self.root, path)
        if path in self.disk and now == self.disk[path]:
            return False  # touched but not changed (or a late event for an earlier write)
        self.disk[path] = now
        if not named and path != self.writing:
            self.changed_early.add(path)
            return False
        self.changed_early.discard(path)
        return True

    def seen_now(self, op: Operation, now: str | None) -> bool:
        """The last look found `op`'s target at hash `now`: True when that is news."""
        if now == self.disk.get(op.path, op.base_hash):
            return False
        self.disk[op.path] = now
        return True

    def look(self, ops: list[tuple[int, Operation]]) -> dict[int, tuple[bool, str | None]]:
        """For each operation (in a worker thread): whether its target differs from what it
        was computed against, and the target's hash now."""
        root, out = self.root, {}
        for i, op in ops:
            now = hash_of(root, op.path)
            if isinstance(op, Create):  # stale only if it appeared during the turn; a file that
                # was already there is a conflict (a create never overwrites), not a stale file
                existed = self.existed.get(op.path, self.base.get(op.path) is not None)
                out[i] = (not existed and (now is not None or present(root, op.path)), now)
            else:
                out[i] = (op.base_hash is not None and now != op.base_hash, now)
        return out


def present(root: Path, rel: str) -> bool:
    """Whether something is at this repository path (False for a path outside it)."""
    from ..edits.paths import confine

    try:
        _, full = confine(root, rel)
    except SparkPairError:
        return False
    return os.path.lexists(full)


def hash_of(root: Path, rel: str) -> str | None:
    """The content hash of a regular file inside the repository, else None (blocking: call it
    in a thread)."""
    from ..edits.paths import read_regular

    data = read_regular(root, rel)
    return None if data is None else content_hash(data)
