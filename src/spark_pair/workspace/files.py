"""Git-aware files: the repo root, the listing that respects .gitignore, guarded reads."""

from __future__ import annotations

import fnmatch
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ..base.errors import PathRefused, UsageError
from ..edits.paths import looks_binary

if TYPE_CHECKING:  # git (and subprocess) load on the first git call
    import subprocess


ALWAYS_IGNORED = frozenset({".git", ".venv", "node_modules", "__pycache__"})
MAX_FILE_BYTES = 1_000_000
_WALK_LIMIT = 100_000  # files listed by the fallback walk, at most


def _git(root: Path, *args: str,
         stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes] | None:
    from ..base.git import run_git

    return run_git(root, *args, stdin=stdin, timeout=10)


def find_root(cwd: Path | None = None) -> Path:
    """The git top-level directory of cwd; cwd itself when it is not inside a git repo."""
    return find_root_soon(cwd)()


def find_root_soon(cwd: Path | None = None) -> Callable[[], Path]:
    """`find_root` in two steps: git starts now and the returned call reads its answer, so the
    caller can load and prepare other things while git runs."""
    from ..base.git import git_ok_later

    start = Path(cwd or Path.cwd()).resolve()
    top = git_ok_later(start, "rev-parse", "--show-toplevel", timeout=10)

    def answer() -> Path:
        out = top()
        return Path(out.decode().strip()).resolve() if out and out.strip() else start

    return answer


# variables that change where git finds the repository (GIT_CONFIG*: a core.worktree given)
_GIT_PLACES = ("GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_CEILING_DIRECTORIES",
               "GIT_DISCOVERY_ACROSS_FILESYSTEM")


def plain_top(cwd: Path) -> Path | None:
    """The git top level of `cwd` found without running git, when a plain look is certain to
    give git's answer: a `.git` folder (or file) in cwd or a parent, owned by this user, no
    variable set that moves git's search, cwd not inside .git; else None (ask git: `find_root`)."""
    if any(name in os.environ for name in _GIT_PLACES) or any(
            name.startswith("GIT_CONFIG") for name in os.environ):
        return None
    here = os.path.realpath(cwd)
    if ".git" in here.split(os.sep):
        return None
    uid = os.getuid() if hasattr(os, "getuid") else None
    while True:
        try:
            marker = os.stat(os.path.join(here, ".git"))
        except OSError:
            marker = None
        if marker is not None:
            if uid is None or marker.st_uid != uid or os.stat(here).st_uid != uid:
                return None  # git may refuse another user's repository: let it say
            return Path(here)
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def list_files(root: Path) -> list[str]:
    """Tracked plus untracked-not-ignored files, repo-relative with '/' separators, sorted."""
    root = Path(root)
    names = listed_names(root)
    if names is not None:
        return [n for n in names if (root / n).is_file()]
    return _walk(root)


def listed_names(root: Path) -> list[str] | None:
    """What git lists (tracked plus untracked-not-ignored), sorted, without looking at the
    disk; None outside git (then `list_files` walks the folder)."""
    res = _git(Path(root), "ls-files", "-co", "--exclude-standard", "-z")
    if res is None or res.returncode != 0:
        return None
    names = res.stdout.decode("utf-8", "replace").split("\0")
    return sorted({n for n in names if n and not _has_always_ignored(n)})


def uncommitted(root: Path, limit: int = 5, within_s: float = 3600.0) -> list[str]:
    """Files with changes git has not committed (modified, added, untracked), changed within
    `within_s` seconds, newest first; [] outside git."""
    import time

    res = _git(Path(root), "status", "--porcelain", "-z", "--untracked-files=all")
    if res is None or res.returncode != 0:
        return []
    entries = res.stdout.decode("utf-8", "replace").split("\0")
    found: list[tuple[float, str]] = []
    skip_next = False
    now = time.time()
    for entry in entries:
        if skip_next or len(entry) < 4:
            skip_next = False
            continue
        status, rel = entry[:2], entry[3:]
        skip_next = status[0] in "RC"  # a rename's source follows
        if "D" in status or _has_always_ignored(rel):
            continue
        try:
            mtime = os.stat(os.path.join(root, rel)).st_mtime
        except OSError:
            continue
        if now - mtime <= within_s:
            found.append((mtime, rel))
    found.sort(reverse=True)
    return [rel for _, rel in found[:limit]]


MAX_CHANGED_LINES = 60  # changed lines of one file kept as its focus, at most


def uncommitted_lines(root: Path, paths: list[str]) -> dict[str, tuple[int, ...]]:
    """The lines of each of `paths` that differ from HEAD (git's view of the working tree,
    `git diff -U0`), in file order, 1-based; a file git does not track or that has no change
    is left out ({} outside git)."""
    if not paths:
        return {}
    res = _git(Path(root), "diff", "-U0", "--no-color", "--no-ext-diff", "HEAD", "--", *paths)
    if res is None or res.returncode != 0:
        return {}
    out: dict[str, list[int]] = {}
    rel = None
    for raw in res.stdout.splitlines():
        line = raw.decode("utf-8", "replace")
        if line.startswith("+++ "):
            rel = line[6:] if line.startswith("+++ b/") else None
        elif line.startswith("@@") and rel is not None:
            new = line.split(" ")[2]  # +start[,count]
            start, _, count = new[1:].partition(",")
            n = int(count) if count else 1
            first = max(1, int(start))
            got = out.setdefault(rel, [])
            got.extend(range(first, first + max(n, 1)))
    return {rel: tuple(dict.fromkeys(lines))[:MAX_CHANGED_LINES] for rel, lines in out.items()}


def _has_always_ignored(rel: str) -> bool:
    return any(part in ALWAYS_IGNORED for part in rel.split("/"))


def _read_gitignore(root: Path) -> list[str]:
    try:
        lines = (root / ".gitignore").read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
    return [ln.strip() for ln in lines if ln.strip() and not ln.startswith(("#", "!"))]


def _match(rel: str, patterns: list[str]) -> bool:
    """A rough .gitignore match: a pattern hits the path or any of its parent directories."""
    parts = rel.split("/")
    for pat in patterns:
        anchored = pat.startswith("/") or "/" in pat.rstrip("/")
        pat = pat.strip("/")
        if anchored:
            for i in range(1, len(parts) + 1):
                if fnmatch.fnmatchcase("/".join(parts[:i]), pat):
                    return True
        elif any(fnmatch.fnmatchcase(p, pat) for p in parts):
            return True
    return False


def _walk(root: Path) -> list[str]:
    patterns = _read_gitignore(root)
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root).replace(os.sep, "/")
        rel_dir = "" if rel_dir == "." else rel_dir + "/"
        dirnames[:] = [d for d in dirnames if d not in ALWAYS_IGNORED
                       and not _match(rel_dir + d, patterns)]
        for name in filenames:
            rel = rel_dir + name
            if not _match(rel, patterns):
                out.append(rel)
            if len(out) >= _WALK_LIMIT:
                return sorted(out)
    return sorted(out)


class IgnoreRules:
    """Cheap, cached `is_ignored(rel)` decisions for the watcher (git check-ignore, or the rough
    .gitignore match when git is absent)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root).resolve()
        self._cache: dict[str, bool] = {}
        self._use_git: bool | None = None  # decided on first use (it runs git once)
        self._patterns: list[str] = []

    @property
    def _uses_git(self) -> bool:
        if self._use_git is None:
            self._use_git = (self.root / ".git").exists() and \
                _git(self.root, "--version") is not None
            self._patterns = [] if self._use_git else _read_gitignore(self.root)
        return self._use_git

    def relative(self, path: str | Path) -> str | None:
        """The repo-relative '/' path, or None when outside the root."""
        p = Path(path)
        if not p.is_absolute():
            return p.as_posix()
        try:
            return p.resolve().relative_to(self.root).as_posix()
        except ValueError:
            try:
                return p.relative_to(self.root).as_posix()
            except ValueError:
                return None

    def is_ignored(self, rel: str) -> bool:
        if _has_always_ignored(rel):
            return True
        hit = self._cache.get(rel)
        if hit is None:
            hit = self._check(rel)
            if len(self._cache) > 50_000:
                self._cache.clear()
            self._cache[rel] = hit
        return hit

    def is_ignored_cached(self, rel: str) -> bool:
        """True only when already known to be ignored (never runs git)."""
        if _has_always_ignored(rel):
            return True
        if self._uses_git:
            return self._cache.get(rel, False)
        return self.is_ignored(rel)

    def is_ignored_many(self, rels: list[str]) -> set[str]:
        """The ignored subset of rels, asking git once for all unknown ones."""
        unknown = [r for r in rels if r not in self._cache and not _has_always_ignored(r)]
        if self._uses_git and unknown:
            res = _git(self.root, "check-ignore", "--no-index", "-z", "--stdin",
                       stdin="\0".join(unknown).encode())
            hits = set()
            if res is not None and res.returncode in (0, 1):
                hits = {n for n in res.stdout.decode("utf-8", "replace").split("\0") if n}
            for r in unknown:
                self._cache[r] = r in hits
        return {r for r in rels if self.is_ignored(r)}

    def forget(self) -> None:
        """Drop cached decisions (after a .gitignore changed)."""
        self._cache.clear()
        if not self._uses_git:
            self._patterns = _read_gitignore(self.root)

    def _check(self, rel: str) -> bool:
        if not self._uses_git:
            return _match(rel, self._patterns)
        res = _git(self.root, "check-ignore", "--no-index", "-q", rel)
        return res is not None and res.returncode == 0


def read_text(root: Path, rel: str, *, max_bytes: int = MAX_FILE_BYTES) -> str | None:
    """The file's text, or None when it does not exist. Refuses binary or oversized files, and
    anything that resolves outside the repository or into .git/ (never sent to a model)."""
    data = read_checked(root, rel, max_bytes=max_bytes)
    return None if data is None else data.decode("utf-8", errors="replace")


def read_checked(root: Path, rel: str, *, max_bytes: int = MAX_FILE_BYTES) -> bytes | None:
    """`read_text`'s bytes: None when the file does not exist; the same refusals."""
    base = os.path.realpath(root)
    path = Path(os.path.realpath(os.path.join(base, rel)))
    git_dir = os.path.join(base, ".git")
    if not str(path).startswith(base.rstrip(os.sep) + os.sep) or (
            str(path) == git_dir or str(path).startswith(git_dir + os.sep)):
        raise PathRefused(f"{rel} is outside the repository (or inside .git/)",
                          hint="only files inside the repository are sent to the model")
    try:
        info = path.stat()
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(rel)
        if not stat.S_ISREG(info.st_mode):
            raise UsageError(f"{rel} is not a regular file (a device, FIFO or socket)",
                             hint="only regular text files are sent to the model")
        size = info.st_size
        if size > max_bytes:
            raise UsageError(f"{rel} is too large for the context ({size} bytes)",
                             hint=f"files over {max_bytes} bytes are not sent; name a smaller file")
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except IsADirectoryError as exc:
        raise UsageError(f"{rel} is a directory", hint="name files, not directories") from exc
    except OSError as exc:
        raise UsageError(f"cannot read {rel}: {exc.strerror}",
                         hint="check the path and its permissions") from exc
    if looks_binary(data):
        raise UsageError(f"{rel} looks binary", hint="only text files can be sent to the model")
    return data
