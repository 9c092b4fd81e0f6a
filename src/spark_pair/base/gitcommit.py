"""A commit of exactly the given files, through git commands only (nothing under .git is
written by hand; never a reset, never a rewrite of history).

The tree is built in a separate index (GIT_INDEX_FILE: a temp file outside the repository):
HEAD's tree is read into it and each file is put in through `hash-object --path`, so the
person's clean filters apply as for `git add`. Their hooks run on that index (base.githooks:
pre-commit, prepare-commit-msg, commit-msg, then post-commit), `commit-tree` makes the commit
(with `-S` when commit.gpgsign is set: user.signingkey and gpg.format are git's own business;
author and committer are theirs), and `update-ref` moves HEAD only if it still names the commit
the tree was built on, so a commit another process made meanwhile is found, never overwritten.
The person's index changes only for committed paths whose entry was HEAD's (so `git status`
shows them clean, as after `git commit`); anything they staged stays staged.

Blocking (git processes, hooks): call it from a worker thread.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .errors import CommitError
from .git import run_git
from .githooks import hooks as find_hooks

SYNC_WAITS_S = (0.2, 0.5, 1.0, 2.0)  # the person's index locked: try again after these
LITERAL = {"GIT_LITERAL_PATHSPECS": "1"}  # paths are paths, never patterns
SIGN_HINT = ("commit.gpgsign is set: spark-pair cannot ask for a key's passphrase, so the "
             "key must be in an agent (ssh-add KEY for gpg.format ssh; gpg-agent for gpg), or "
             "its passphrase empty; `git commit -S` in a terminal shows whether signing works")
_BUSY = ("MERGE_HEAD", "merge", "rebase-merge", "rebase", "rebase-apply", "rebase",
         "CHERRY_PICK_HEAD", "cherry-pick", "REVERT_HEAD", "revert")


@dataclass(frozen=True, slots=True)
class FileState:
    """What a path holds after the commit: its bytes and stat mode (None: it is deleted)."""

    path: str
    data: bytes | None
    mode: int | None = None


@dataclass(frozen=True, slots=True)
class TreeEntry:
    """A path's entry in a tree or an index: git mode (e.g. "100644") and object id."""

    mode: str
    oid: str


def check_state(root: Path, *, before: bool = True) -> str | None:
    """Refuse (CommitError, reason "state") a folder where a commit cannot go now: not a
    repository, a merge, rebase, cherry-pick or revert under way (`before`: asked before
    anything is written, else after the turn). Returns a note worth saying (a detached HEAD),
    else None. Reads only, through git."""
    done = "nothing was written" if before else "the files stay as they are"
    names = _BUSY[0::2]
    out = _git_text(root, "rev-parse", "--is-inside-work-tree",
                    *(a for n in names for a in ("--git-path", n)))
    lines = (out or "").splitlines()
    if not lines or lines[0] != "true":
        raise CommitError(f"{root} is not in a git repository, so there is nothing to commit to",
                          reason="state", hint="run `git init` there first, or " + (
                              "leave out --commit" if before else
                              "set [git] commit = \"off\" in .spark-pair.toml"))
    for name, what, path in zip(names, _BUSY[1::2], lines[1:], strict=False):
        if (root / path).exists():
            raise CommitError(f"a {what} is in progress in this repository, so no commit is "
                              f"made ({done})", reason="state",
                              hint=f"finish it or abort it first (git {what} --continue, or "
                                   f"git {what} --abort); {name} is git's own"
                                   + ("" if before else "; then commit (/commit in the app, "
                                      "or git add and git commit)"))
    if _git_text(root, "symbolic-ref", "-q", "HEAD") is None:
        return ("HEAD is detached: the commit goes on no branch (`git switch -c NAME` keeps "
                "it on one)")
    return None


def head(root: Path) -> str | None:
    """The commit HEAD names; None on a branch with no commit yet."""
    return _git_text(root, "rev-parse", "-q", "--verify", "HEAD^{commit}")


def ignored(root: Path, paths: list[str]) -> list[str]:
    """Those of `paths` (untracked) that the person's ignore rules exclude, as `git add`
    sees them."""
    if not paths:
        return []
    res = run_git(root, "check-ignore", "-z", "--stdin", stdin=_records(paths))
    if res is None or res.returncode not in (0, 1):
        return []
    found = {os.fsdecode(p) for p in res.stdout.split(b"\0") if p}
    return [p for p in paths if p in found]


def tree_entries(root: Path, commit: str | None, paths: list[str]) -> dict[str, TreeEntry]:
    """The entries of `paths` in a commit's tree (absent paths are left out)."""
    if commit is None or not paths:
        return {}
    res = run_git(root, "ls-tree", "-z", "--full-tree", commit, "--", *paths, env=LITERAL)
    return _entries(res.stdout if res is not None and res.returncode == 0 else b"", tree=True)


def index_entries(root: Path, paths: list[str], index: Path | None = None) -> dict[str, TreeEntry]:
    """The stage entries of `paths` in the person's index (or `index`); a path in conflict
    (stages 1-3) has its entry with mode "conflict"."""
    if not paths:
        return {}
    env = dict(LITERAL, **({"GIT_INDEX_FILE": str(index)} if index is not None else {}))
    res = run_git(root, "ls-files", "-s", "-z", "--full-name", "--", *paths, env=env)
    return _entries(res.stdout if res is not None and res.returncode == 0 else b"", tree=False)


def blob_id(root: Path, path: str, data: bytes) -> str:
    """The object id `git add` would give these bytes at `path` (the person's filters apply);
    nothing is written."""
    res = run_git(root, "hash-object", f"--path={path}", "--stdin", stdin=data)
    if res is None or res.returncode != 0:
        raise _git_failed("git hash-object", res)
    return res.stdout.decode().strip()


def git_mode(mode: int | None) -> str:
    """The git file mode of a stat mode (executable or not; a link is never written here)."""
    return "100755" if mode is not None and mode & 0o111 else "100644"


def commit_files(root: Path, files: list[FileState], message: str, base: str | None,
                 notes: list[str] | None = None) -> str:
    """Commit `files` on top of `base` (HEAD when the turn's plan was made) with `message`;
    returns the new commit's id; `notes` gets what is worth saying after it (a post-commit
    hook that failed, an index that could not be updated). Raises CommitError: a hook refused
    (reason "hook") or was interrupted ("interrupted"), HEAD is no longer `base` ("moved"), or
    git failed ("git")."""
    with tempfile.TemporaryDirectory(prefix="spark-pair-commit-") as tmp:
        index = Path(tmp) / "index"
        env = {"GIT_INDEX_FILE": str(index)}
        _must(root, "git read-tree", "read-tree", *([base] if base else ["--empty"]), env=env)
        lines = []
        mode_of = _modes(root, base, [f.path for f in files])
        for f in files:
            if f.data is None:
                lines.append(f"0 {'0' * 40}\t{f.path}")
            else:
                oid = _must(root, "git hash-object", "hash-object", "-w", f"--path={f.path}",
                            "--stdin", stdin=f.data).strip()
                lines.append(f"{mode_of(f)} {oid}\t{f.path}")
        _must(root, "git update-index", "update-index", "-z", "--index-info",
              stdin=_records(lines), env=env)
        hooks = find_hooks(root)
        hooks.run("pre-commit", env)
        msg_file = Path(tmp) / "COMMIT_EDITMSG"
        msg_file.write_text(message.rstrip() + "\n", encoding="utf-8")
        hooks.run("prepare-commit-msg", env, str(msg_file), "message")
        hooks.run("commit-msg", env, str(msg_file))
        cleaned = strip_space(msg_file.read_text(encoding="utf-8", errors="replace"))
        if not cleaned.strip():
            raise CommitError("the commit message is empty (after the commit-msg hook), so no "
                              "commit was made", reason="hook")
        msg_file.write_text(cleaned, encoding="utf-8")
        # the tree as the hooks left the index (a pre-commit hook may `git add` its fixes)
        tree = _must(root, "git write-tree", "write-tree", env=env).strip()
        paths = _changed(root, base, [f.path for f in files], env)
        new = index_entries(root, paths, index)
        sign = ["-S"] if _git_text(root, "config", "--type=bool", "commit.gpgsign") == "true" \
            else []
        commit = _must(root, "git commit-tree", "commit-tree", tree,
                       *(["-p", base] if base else []), *sign, "-F", str(msg_file),
                       hint=SIGN_HINT if sign else
                       "`git commit` shows the same error (git needs user.name and user.email)"
                       ).strip()
        subject = cleaned.splitlines()[0]
        moved = run_git(root, "update-ref", "-m", f"commit: {subject}", "HEAD", commit,
                        base or "")
        if moved is None or moved.returncode != 0:
            now = head(root)
            if now != base:
                raise CommitError(
                    f"another commit ({(now or 'none')[:12]}) landed on HEAD while this one was "
                    "made, so it was not committed (the other commit is untouched)",
                    reason="moved", hint="the turn stays applied; commit again (/commit in the "
                    "app) or by hand with `git add` and `git commit`")
            raise _git_failed("git update-ref", moved)
        hooks.run("post-commit", env, must=False)
    left = _sync_index(root, paths, base, new)
    if notes is not None:
        notes.extend(hooks.notes)
        if left:
            listed = " ".join(shlex.quote(p) for p in left)
            notes.append(f"your index could not be updated for {listed} (another git held "
                         f"it locked), so `git status` shows the commit's change staged in "
                         f"reverse; `git reset -q -- {listed}` puts it right (it touches only "
                         f"the index)")
    return commit


def _changed(root: Path, base: str | None, paths: list[str], env: dict[str, str]
             ) -> list[str]:
    """`paths` and any other the hooks staged in the commit's index."""
    res = run_git(root, "diff-index", "--cached", "-z", "--name-only", base, env=env) \
        if base else run_git(root, "ls-files", "-z", env=env)
    more = [] if res is None or res.returncode != 0 else [
        os.fsdecode(p) for p in res.stdout.split(b"\0") if p]
    return paths + [p for p in more if p not in paths]


def _modes(root: Path, base: str | None, paths: list[str]) -> Callable[[FileState], str]:
    """Each file's git mode as `git add` gives it: from disk, or with core.fileMode false
    (the executable bit on disk means nothing) HEAD's mode, 100644 for a new file."""
    if _git_text(root, "config", "--type=bool", "core.fileMode") != "false":
        return lambda f: git_mode(f.mode)
    known = tree_entries(root, base, paths)

    def mode(f: FileState) -> str:
        entry = known.get(f.path)
        return entry.mode if entry is not None and entry.mode in ("100644", "100755") \
            else "100644"

    return mode


def strip_space(message: str) -> str:
    """A message as `git stripspace` leaves it: no trailing whitespace, no blank lines at
    either end, runs of blank lines made one, a final newline."""
    out: list[str] = []
    for line in message.splitlines():
        line = line.rstrip()
        if line or (out and out[-1]):
            out.append(line)
    while out and not out[-1]:
        out.pop()
    return "\n".join(out) + "\n" if out else ""


def _sync_index(root: Path, paths: list[str], base: str | None, new: dict[str, TreeEntry]
                ) -> list[str]:
    """Point the person's index at the new commit for the paths whose entry was the old
    HEAD's (or absent in both), as `git commit` would; any other entry is theirs and stays.
    `new`: the committed entries (a path without one was deleted). Returns the paths left
    as they were because the index stayed locked (another git at work) after a few tries."""
    old = tree_entries(root, base, paths)
    lines, todo = [], []
    for path in paths:
        if new.get(path) == old.get(path):
            continue
        entry = new.get(path)
        todo.append(path)
        lines.append(f"0 {'0' * 40}\t{path}" if entry is None
                     else f"{entry.mode} {entry.oid}\t{path}")
    for wait in (0.0, *SYNC_WAITS_S):
        time.sleep(wait)
        mine = index_entries(root, todo)  # (read again each try: the person may be at work)
        keep = [i for i, p in enumerate(todo) if mine.get(p) == old.get(p)]
        if not keep:
            return []
        res = run_git(root, "update-index", "-z", "--index-info",
                      stdin=_records([lines[i] for i in keep]))
        if res is not None and res.returncode == 0:
            return []
    return [todo[i] for i in keep]


def _records(lines: list[str]) -> bytes:
    """`update-index -z --index-info` input: any byte a path may hold goes through."""
    return b"".join(os.fsencode(line) + b"\0" for line in lines)


def _must(root: Path, what: str, *args: str, stdin: bytes | None = None,
          env: dict[str, str] | None = None, hint: str | None = None) -> str:
    res = run_git(root, *args, stdin=stdin, env=env)
    if res is None or res.returncode != 0:
        raise _git_failed(what, res, hint)
    return res.stdout.decode("utf-8", "replace")


def _git_failed(what: str, res: subprocess.CompletedProcess[bytes] | None,
                hint: str | None = None) -> CommitError:
    lines = [] if res is None else res.stderr.decode("utf-8", "replace").strip().splitlines()
    why = "it did not run" if res is None else (lines[-1].strip() if lines
                                                 else f"exit {res.returncode}")
    return CommitError(f"{what} failed, so nothing was committed: {why}", reason="git",
                       hint=hint)


def _git_text(root: Path, *args: str) -> str | None:
    res = run_git(root, *args)
    return res.stdout.decode().strip() if res is not None and res.returncode == 0 else None


def _entries(raw: bytes, *, tree: bool) -> dict[str, TreeEntry]:
    out: dict[str, TreeEntry] = {}
    for rec in raw.split(b"\0"):
        if not rec:
            continue
        meta, _, name = rec.partition(b"\t")
        parts = meta.decode().split()
        path = os.fsdecode(name)
        if tree:  # "<mode> <type> <oid>"
            out[path] = TreeEntry(parts[0], parts[2])
        elif parts[2] != "0":  # "<mode> <oid> <stage>": a conflict
            out[path] = TreeEntry("conflict", "")
        else:
            out[path] = TreeEntry(parts[0], parts[1])
    return out
