"""Disk I/O for edits: decoding that remembers the file's encoding, and crash-safe writes."""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from ..base.errors import ApplyError

BOM = b"\xef\xbb\xbf"
TMP_MARK = ".sp-tmp-"


_MULTIBYTE = re.compile(
    rb"[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}|[\xf0-\xf4][\x80-\xbf]{3}"
)


def decode(data: bytes, path: str = "") -> tuple[str, str]:
    """(text, encoding) for a text file: utf-8, utf-8 with BOM ('utf-8-sig'), else latin-1.

    A UTF-8 file with a few invalid bytes stays UTF-8: those bytes are carried as escapes
    (surrogateescape) and written back unchanged, so new text is UTF-8 and untouched bytes stay
    byte-identical. Only a file with invalid bytes and no UTF-8 multibyte character at all is
    read as latin-1 (a legacy single-byte file). Files holding NUL bytes are binary and refused.
    """
    if b"\x00" in data:
        raise ApplyError(
            f"{path or 'file'} is a binary file; spark-pair does not edit binary files",
            hint="edit binary files by hand; nothing was changed",
        )
    bom = data.startswith(BOM)
    body = data[len(BOM):] if bom else data
    encoding = "utf-8-sig" if bom else "utf-8"
    try:
        return body.decode("utf-8"), encoding
    except UnicodeDecodeError:
        if bom or _MULTIBYTE.search(body):
            return body.decode("utf-8", "surrogateescape"), encoding
        return data.decode("latin-1"), "latin-1"


ESCAPED = re.compile("[\udc80-\udcff]")  # the undecodable bytes of a UTF-8 file


def has_escapes(text: str) -> bool:
    """Whether decoded text carries undecodable bytes as escapes."""
    return not text.isascii() and ESCAPED.search(text) is not None


def encode(text: str, encoding: str, path: str = "") -> bytes:
    """Text back to bytes in the file's own encoding (refusing characters it cannot hold);
    escaped bytes of a UTF-8 file go back as the bytes they were."""
    try:
        if encoding == "latin-1":
            return text.encode("latin-1")
        data = text.encode("utf-8", "surrogateescape")
        return BOM + data if encoding == "utf-8-sig" else data
    except UnicodeEncodeError as exc:
        raise ApplyError(
            f"{path or 'file'}: the new text cannot be written as {encoding} ({exc.reason})",
            hint="the file keeps its encoding; nothing was changed",
        ) from exc


def default_mode() -> int:
    """Mode bits for a new file under the current umask."""
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def make_dirs(path: Path) -> bool:
    """Create the folder `path` and its missing parents, each made durable (the folder holding
    it is synced once it is made); True when `path` was made. An existing folder costs one
    look."""
    if path.is_dir():
        return False
    missing = []
    while not path.is_dir() and path != path.parent:
        missing.append(path)
        path = path.parent
    for folder in reversed(missing):
        folder.mkdir(exist_ok=True)
        fsync_dir(folder.parent)
    return True


def _stem(target: Path) -> str:
    """The target's name cut to at most 200 bytes (names are limited in bytes, not chars)."""
    return os.fsencode(target.name)[:200].decode("utf-8", "ignore") if len(
        os.fsencode(target.name)) > 200 else target.name


def tmp_name(target: Path, key: str | None = None) -> Path:
    """A temp file name beside `target`: random, or the same for the same `key` (so a later
    run knows the name and can remove what a crash left)."""
    tail = os.urandom(4).hex() if key is None else hashlib.sha256(key.encode()).hexdigest()[:8]
    return target.with_name(f".{_stem(target)}{TMP_MARK}{tail}")


def is_tmp_name_of(target: Path, name: str) -> bool:
    """Whether `name` has exactly the shape of a temp file atomic_write makes for `target`."""
    prefix = f".{_stem(target)}{TMP_MARK}"
    tail = name[len(prefix):]
    return name.startswith(prefix) and len(tail) == 8 and all(c in "0123456789abcdef"
                                                              for c in tail)


def create_file(path: Path, data: bytes, mode: int | None = None) -> int:
    """Create `path` (never over an existing file) holding `data`, with its mode bits; returns
    the open file for the caller to sync (sync_files). On a failure nothing of it is left."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fchmod(fd, default_mode() if mode is None else mode & 0o7777)
    except BaseException:
        os.close(fd)
        path.unlink(missing_ok=True)
        raise
    return fd


def sync_files(fds: list[int]) -> None:
    """fsync each open file, then close it (every one is closed, also after a failure)."""
    try:
        for fd in fds:
            os.fsync(fd)
    finally:
        close_files(fds)


def close_files(fds: list[int]) -> None:
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass


def sync_dirs(dirs: list[Path]) -> None:
    """fsync each directory once: its new, replaced and removed names become durable."""
    for d in dict.fromkeys(dirs):
        fsync_dir(d)


def replace_file(tmp: Path, target: Path) -> None:
    """os.replace(tmp, target), and when the new file has the old one's size and modification
    time in the same whole second, that time moves on a second: tools that judge a file by its
    size and whole-second time (Python's bytecode cache, make) would otherwise keep what they
    built from the old content (a check running the code before the edit)."""
    try:
        old = os.stat(target)
    except OSError:
        old = None
    os.replace(tmp, target)
    if old is None:
        return
    try:
        new = os.stat(target)
        if new.st_size == old.st_size and int(new.st_mtime) == int(old.st_mtime):
            os.utime(target, ns=(new.st_atime_ns, (int(old.st_mtime) + 1) * 1_000_000_000))
    except OSError:
        pass  # (the content is written; only the time could not move)


def atomic_write(target: Path, data: bytes, mode: int | None = None, *,
                 tmp: Path | None = None) -> None:
    """Write `data` to `target` so that a crash leaves either the old or the new file, whole.

    A temp file in the same directory (`tmp`, or a fresh name) is created (never an existing
    one), written, given its mode bits, fsynced, moved over the target with os.replace, and the
    directory is fsynced.
    """
    tmp = tmp or tmp_name(target)
    fd = create_file(tmp, data, mode)
    try:
        sync_files([fd])
        replace_file(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(target.parent)


def remove_file(target: Path) -> None:
    """Delete a file (if present) and make the deletion durable."""
    try:
        os.unlink(target)
    except FileNotFoundError:
        return
    fsync_dir(target.parent)
