"""What the repository's recent history says: which files its commits changed together, and
what each commit was about (its subject).

    commits = recent_commits(root, index)          # newest first, each a set of paths
    changed_with(commits, ["src/printer.rs"], index.files)
    # -> [("CHANGELOG.md", "src/printer.rs", 0.6)]
    recent_log(root, index)[0]                     # Commit("Fix the pager ...", {...})

A change to a file usually comes with a change to its test, its changelog, the file that
registers it: the commits that changed the file say which. One `git log` per HEAD (at most
LOG_COMMITS commits, GIT_SECONDS), kept in the index's cache file (a new process reads it
back instead of asking git again).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from .index import RepoIndex

LOG_COMMITS = 1000  # recent commits read (merges left out)
GIT_SECONDS = 10  # the git log's time, at most (a slower one: no history)
LOG_FORMAT = "v2"  # the kept log's format (subjects and paths), part of its key in the cache
MAX_COMMIT_FILES = 12  # a commit changing more files (a sweep) says little about what goes together
MIN_TOGETHER = 2  # commits that changed both files, at least
MIN_SHARE = 0.4  # the share of a file's commits that changed the other one too, at least
# written by a package manager, not by hand
LOCK_FILES = frozenset({"cargo.lock", "package-lock.json", "yarn.lock", "pnpm-lock.yaml",
                        "go.sum", "poetry.lock", "uv.lock", "pdm.lock", "gemfile.lock",
                        "composer.lock", "pipfile.lock", "bun.lock", "bun.lockb"})


class Commit(NamedTuple):
    subject: str  # the first line of its message
    files: frozenset[str]  # the paths it changed


_last: tuple[dict, str, str, list[Commit]] | None = None  # listed, root, head, commits


def recent_commits(root: Path, index: RepoIndex) -> list[frozenset[str]]:
    """The paths each of the last LOG_COMMITS commits changed, newest first ([] without a
    commit)."""
    return [c.files for c in recent_log(root, index)]


def recent_log(root: Path, index: RepoIndex) -> list[Commit]:
    """The last LOG_COMMITS commits, newest first ([] without a commit). Asks git for HEAD
    once per snapshot of the index, and for the log once per HEAD."""
    global _last
    listed, last = index.files, _last
    if last is not None and last[0] is listed and last[1] == str(root):
        return last[3]
    from ..base.git import git_ok

    out = git_ok(root, "rev-parse", "--verify", "-q", "HEAD", timeout=5)
    head = out.decode("ascii", "replace").strip() if out else ""
    if not head:
        commits: list[Commit] = []
    elif last is not None and last[1] == str(root) and last[2] == head:
        commits = last[3]
    else:
        key = f"{head}:{LOG_FORMAT}"
        log = index.commit_log(key)
        if log is None:
            raw = git_ok(root, "log", f"-n{LOG_COMMITS}", "--no-merges", "--format=%x01%s",
                         "--name-only", "--no-renames", "HEAD", timeout=GIT_SECONDS)
            log = raw.decode("utf-8", "replace") if raw is not None else ""
            if raw is not None:
                index.keep_commit_log(key, log)
        commits = []
        for chunk in log.split("\x01")[1:]:
            subject, _, paths = chunk.partition("\n")
            commits.append(Commit(subject.strip(), frozenset(paths.split("\n")) - {""}))
    _last = (listed, str(root), head, commits)
    return commits


def changed_with(commits: Sequence[frozenset[str]], paths: Sequence[str], listed: dict
                 ) -> list[tuple[str, str, float]]:
    """(file, one of `paths`, share): for each of `paths`, the listed file its commits changed
    most often too, when that is at least MIN_SHARE of them (and MIN_TOGETHER). A commit of
    more than MAX_COMMIT_FILES files and lock files are left out."""
    out: list[tuple[str, str, float]] = []
    for rel in dict.fromkeys(paths):
        mine = [c for c in commits if rel in c and len(c) <= MAX_COMMIT_FILES]
        if len(mine) < MIN_TOGETHER:
            continue
        counts: dict[str, int] = {}
        for c in mine:
            for other in c:
                if (other != rel and other in listed
                        and other.rsplit("/", 1)[-1].lower() not in LOCK_FILES):
                    counts[other] = counts.get(other, 0) + 1
        if not counts:
            continue
        other, n = min(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        if n >= MIN_TOGETHER and n / len(mine) >= MIN_SHARE:
            out.append((other, rel, n / len(mine)))
    return out
