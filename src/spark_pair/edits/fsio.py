"""Disk I/O for edits: decoding that remembers the file's encoding, and crash-safe writes."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from ..errors import ApplyError

BOM = b"\xef\xbb\xbf"
TMP_MARK = ".sp-tmp-"


def decode(data: bytes, path: str = "") -> tuple[str, str]:
    """(text, encoding) for a text file: utf-8, utf-8 with BOM ('utf-8-sig'), else latin-1.

    Files holding NUL bytes are binary and refused.
    """
    if b"\x00" in data:
        raise ApplyError(f"{path or 'file'} is a binary file; spark-pair does not edit binary files",
                         hint="edit binary files by hand; nothing was changed")
    if data.startswith(BOM):
        try:
            return data[len(BOM):].decode("utf-8"), "utf-8-sig"
        except UnicodeDecodeError:
            pass
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        return data.decode("latin-1"), "latin-1"


def encode(text: str, encoding: str, path: str = "") -> bytes:
    """Text back to bytes in the file's own encoding (refusing characters it cannot hold)."""
    try:
        if encoding == "utf-8-sig":
            return BOM + text.encode("utf-8")
        return text.encode(encoding)
    except UnicodeEncodeError as exc:
        raise ApplyError(f"{path or 'file'}: the new text cannot be written as {encoding} ({exc.reason})",
                         hint="the file keeps its encoding; nothing was changed") from exc


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


def _stem(target: Path) -> str:
    """The target's name cut to at most 200 bytes (names are limited in bytes, not chars)."""
    return os.fsencode(target.name)[:200].decode("utf-8", "ignore") if len(
        os.fsencode(target.name)) > 200 else target.name


def tmp_name(target: Path) -> Path:
    return target.with_name(f".{_stem(target)}{TMP_MARK}{secrets.token_hex(4)}")


def atomic_write(target: Path, data: bytes, mode: int | None = None) -> None:
    """Write `data` to `target` so that a crash leaves either the old or the new file, whole.

    A temp file in the same directory is written, fsynced, given its mode bits, moved over the
    target with os.replace, and the directory is fsynced.
    """
    tmp = tmp_name(target)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fchmod(fd, default_mode() if mode is None else mode & 0o7777)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        tmp.unlink(missing_ok=True)
        raise
    os.close(fd)
    try:
        os.replace(tmp, target)
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


def clean_temp_files(target: Path) -> None:
    """Remove temp files a crashed atomic_write left next to `target`."""
    prefix = f".{_stem(target)}{TMP_MARK}"
    try:
        for name in os.listdir(target.parent):
            tail = name[len(prefix):]
            # exactly our own shape: prefix + 8 hex digits (a user's look-alike file stays)
            if name.startswith(prefix) and len(tail) == 8 and all(
                    c in "0123456789abcdef" for c in tail):
                (target.parent / name).unlink(missing_ok=True)
    except OSError:
        pass
