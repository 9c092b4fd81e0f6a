"""A folder's files as bytes and modes, and a log of the file-system calls a turn makes."""

from __future__ import annotations

import os
from pathlib import Path


def tree(root: Path, temps: bool = True) -> dict[str, tuple[bytes, int] | str]:
    out: dict[str, tuple[bytes, int] | str] = {}
    for dirpath, dirnames, files in os.walk(root):
        for d in dirnames:
            out[os.path.relpath(os.path.join(dirpath, d), root)] = "dir"
        for f in files:
            if not temps and ".sp-tmp-" in f:
                continue
            p = os.path.join(dirpath, f)
            out[os.path.relpath(p, root)] = (Path(p).read_bytes(), os.stat(p).st_mode & 0o7777)
    return out


class DiskLog:
    """Records the file-system calls of a turn: ("fsync", path), ("replace", src, dst),
    ("unlink", path), ("link", src, dst), ("mkdir", path), ("create", path), ("write", path)."""

    def __init__(self, monkeypatch) -> None:
        self.events: list[tuple[str, ...]] = []
        self.fds: dict[int, str] = {}
        real = {name: getattr(os, name) for name in
                ("open", "fsync", "replace", "unlink", "link", "mkdir", "write", "close")}

        def open_(path, flags, mode=0o777, **kw):
            fd = real["open"](path, flags, mode, **kw)
            self.fds[fd] = os.path.abspath(path)
            if flags & os.O_CREAT and flags & os.O_EXCL:
                self.events.append(("create", self.fds[fd]))
            return fd

        def close(fd):
            self.fds.pop(fd, None)
            real["close"](fd)

        def log(name, *paths):
            self.events.append((name, *(os.path.abspath(p) for p in paths)))

        monkeypatch.setattr(os, "open", open_)
        monkeypatch.setattr(os, "close", close)
        monkeypatch.setattr(os, "fsync", lambda fd: (
            self.events.append(("fsync", self.fds[fd])), real["fsync"](fd))[1])
        monkeypatch.setattr(os, "write", lambda fd, data: (
            self.events.append(("write", self.fds.get(fd, "?"))), real["write"](fd, data))[1])
        for name in ("replace", "unlink", "link", "mkdir"):
            def wrapped(*args, _name=name, **kw):
                paths = args[:2] if _name in ("replace", "link") else args[:1]
                log(_name, *paths)
                return real[_name](*args, **kw)
            monkeypatch.setattr(os, name, wrapped)

    def synced_between(self, path: str, start: int, end: int) -> bool:
        return any(e == ("fsync", path) for e in self.events[start + 1:end])

    def last(self, pred, end: int) -> int:
        return max((i for i, e in enumerate(self.events[:end]) if pred(e)), default=-1)


def snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    out = {}
    for dirpath, dirnames, files in os.walk(root):
        for d in dirnames:
            out[os.path.relpath(os.path.join(dirpath, d), root) + "/"] = (b"", 0)
        for f in files:
            p = os.path.join(dirpath, f)
            out[os.path.relpath(p, root)] = (Path(p).read_bytes(), os.stat(p).st_mode & 0o7777)
    return out
