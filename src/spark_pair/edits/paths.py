"""Path confinement: every path an operation names must stay inside the repository root."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from ..base import dirs as app_dirs
from ..base.errors import PathRefused

# Names Windows treats as devices (with any extension); refused everywhere so a repo stays portable.
_DEVICE_RE = re.compile(
    r"^(con|prn|aux|nul|clock\$|conin\$|conout\$|com[0-9¹²³]|lpt[0-9¹²³])(\..*)?$", re.IGNORECASE
)


_NAME_HINT = ("spark-pair never writes a file name holding control characters or bytes that "
              "are not UTF-8; regenerate the turn")


def _refuse(path: str, why: str, hint: str | None = None) -> PathRefused:
    return PathRefused(f"refused path {path!r}: {why}", hint=hint)


def clean_rel_path(path: str) -> str:
    """The normalised repo-relative form of `path` ('a/b.py'), or PathRefused. Pure: no disk
    access."""
    if not isinstance(path, str) or not path.strip():
        raise _refuse(str(path), "empty path")
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in path):
        raise _refuse(path, "control character or NUL byte in the path", _NAME_HINT)
    if any("\ud800" <= ch <= "\udfff" for ch in path):
        raise _refuse(path, "bytes that are not UTF-8 in the path", _NAME_HINT)
    if not path.isprintable():
        raise _refuse(path, "an invisible or text-direction character in the path (it could "
                            "make the name look like another file's)")
    if len(path.encode("utf-8", "surrogatepass")) > 1024:
        raise _refuse(path, "a path longer than 1,024 bytes")
    if "\\" in path:
        raise _refuse(path, "backslash in the path")
    if path.startswith("/") or path.startswith("~") or re.match(r"^[A-Za-z]:", path):
        raise _refuse(path, "absolute path")
    if path.endswith("/"):
        raise _refuse(path, "names a directory, not a file")
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if not parts:
        raise _refuse(path, "names the repository root itself")
    for part in parts:
        if part == "..":
            raise _refuse(path, "'..' leaves the repository")
        if part.rstrip(" .").lower() in (".git", "git~1"):
            raise _refuse(path, "inside .git/")
        if _DEVICE_RE.match(part) or part != part.rstrip(" ."):
            raise _refuse(path, f"{part!r} is a device name or ends in a space or dot")
        if len(part.encode("utf-8", "surrogatepass")) > 255:
            raise _refuse(path, "a name longer than 255 bytes")
    return "/".join(parts)


def real_root(root: Path) -> Path:
    """The repository root with every symlink resolved."""
    try:
        return Path(os.path.realpath(root, strict=True))
    except OSError as exc:
        raise PathRefused(f"repository root {str(root)!r} is not reachable: {exc}") from exc


def _inside(child: str, parent: str) -> bool:
    return child == parent or child.startswith(parent.rstrip(os.sep) + os.sep)


def confine(root: Path, path: str) -> tuple[str, Path]:
    """(clean relative path, absolute path under the real root) or PathRefused.

    Parent directories are resolved through symlinks and must stay inside the root and outside
    .git/; the last component itself must not be a symlink (it would be replaced or followed).
    """
    rel = clean_rel_path(path)
    base = real_root(root)
    parts = rel.split("/")
    parent = os.path.realpath(os.path.join(base, *parts[:-1])) if len(parts) > 1 else str(base)
    if not _inside(parent, str(base)):
        raise _refuse(path, "a symlink in the path leads outside the repository")
    if _inside(parent, os.path.join(base, ".git")):
        raise _refuse(path, "a symlink in the path leads into .git/")
    full = Path(parent) / parts[-1]
    try:
        if full.is_symlink():
            raise _refuse(path, "the file is a symlink")
    except OSError as exc:  # e.g. a name too long for this file system
        raise _refuse(path, exc.strerror or str(exc)) from exc
    return Path(os.path.relpath(full, base)).as_posix(), full


OWN_FILE_HINT = ("a model never writes, moves or removes spark-pair's own config or data (project "
                 "config, user config, undo journal, request log); edit them yourself")


def confine_target(root: Path, path: str, data_dirs: tuple[Path, ...] = ()) -> tuple[str, Path]:
    """confine(), for a path to be written, moved or removed: spark-pair's own files (its
    project config, its config and data folders, `data_dirs` too) are refused wherever they lie."""
    rel, full = confine(root, path)
    why = app_dirs.own_file(full, data_dirs)
    if why is not None:
        raise PathRefused(f"refused path {path!r}: {why}", hint=OWN_FILE_HINT)
    return rel, full


MAX_READ_BYTES = 64 * 1024 * 1024
BINARY_SNIFF_BYTES = 8192


def looks_binary(data: bytes) -> bool:
    """Whether file content is binary (a NUL byte near its start): such a file is never sent
    to a model."""
    return b"\0" in data[:BINARY_SNIFF_BYTES]


def content_hash(data: bytes | None) -> str | None:
    """The base hash an operation is computed against (None: the file did not exist)."""
    if data is None:
        return None
    import hashlib

    return hashlib.sha256(data).hexdigest()


def read_regular(root: Path, rel: str, max_bytes: int = MAX_READ_BYTES) -> bytes | None:
    """The bytes of `rel` if it is a regular file inside the repository (not a symlink, device
    or FIFO, not over `max_bytes`), else None. For paths a model names: never followed outside
    the repo, never a read that blocks or has no end."""
    try:
        _, full = confine(root, rel)
        info = os.stat(full, follow_symlinks=False)
        if not stat.S_ISREG(info.st_mode) or info.st_size > max_bytes:
            return None
        return full.read_bytes()
    except (OSError, PathRefused):
        return None
