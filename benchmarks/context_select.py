"""The commits bench_context.py measures, chosen mechanically (`--select` writes the list), and
the git helpers it shares: a commit's message as an instruction."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from spark_pair.workspace import symbols

RULE = (
    "From the snapshot's head, newest first (`git log --no-merges`), the first N commits such "
    "that: the author is not a bot (no '[bot]', dependabot, renovate, pre-commit-ci, "
    "github-actions); the subject is not a release, version bump, merge or revert; the subject, "
    "without a conventional-commit prefix ('fix(x): '), has at least 3 words; the commit only "
    "modifies or adds files (no deletion, rename, copy or type change); it modifies 1 to 5 "
    "files that existed at the parent, at least one of them a source file (a suffix the "
    "definitions index reads), and adds at most 3. No commit is picked or dropped by hand.")
_BOT = re.compile(r"\[bot\]|dependabot|renovate|pre-commit-ci|github-actions", re.I)
_SKIP_SUBJECT = re.compile(r"^(merge|revert|bump|release|prepare|version|v?\d+\.\d+)\b"
                           r"|^\S+\(release\)|^\S+\(deps\)|^release:", re.I)
_PREFIX = re.compile(r"^\w+(\([^)]*\))?!?:\s*")
_TRAILER = re.compile(r"^\s*(signed-off-by|co-authored-by|reviewed-by|acked-by|tested-by|"
                      r"reported-by|suggested-by|helped-by|change-id|cc|fixes|closes|refs?|"
                      r"see-also|pr-url|backport-of)\s*:|^\s*\(cherry picked from", re.I)


def git(gitdir: Path | str, *args: str, cwd: Path | None = None) -> str:
    cmd = ["git", *args] if cwd is not None else ["git", f"--git-dir={gitdir}", *args]
    out = subprocess.run(cmd, cwd=cwd, capture_output=True, check=True)
    return out.stdout.decode("utf-8", "replace")


def instruction_of(message: str) -> str:
    """The commit message as an instruction: subject and body, trailers removed."""
    lines = [ln for ln in message.strip().splitlines() if not _TRAILER.match(ln)]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def select(gitdir: Path, head: str, n: int) -> list[dict]:
    out: list[dict] = []
    log = git(gitdir, "log", "--no-merges", "--format=%H%x00%P%x00%an%x00%B%x01", head)
    for entry in log.split("\x01"):
        parts = entry.strip("\n").split("\x00")
        if len(parts) != 4:
            continue
        sha, parents, author, message = parts
        subject = message.strip().splitlines()[0] if message.strip() else ""
        if _BOT.search(author) or _SKIP_SUBJECT.search(subject) or len(parents.split()) != 1:
            continue
        if len(re.findall(r"[A-Za-z]{2,}", _PREFIX.sub("", subject))) < 3:
            continue
        status = git(gitdir, "diff-tree", "--no-commit-id", "-r", "--name-status", "-M", sha)
        rows = [ln.split("\t") for ln in status.splitlines() if ln]
        kinds = {r[0][0] for r in rows}
        modified = [r[1] for r in rows if r[0] == "M"]
        added = [r[1] for r in rows if r[0] == "A"]
        if not kinds <= {"M", "A"} or not 1 <= len(modified) <= 5 or len(added) > 3:
            continue
        if not any(os.path.splitext(p)[1].lower() in symbols.SOURCE_SUFFIXES for p in modified):
            continue
        out.append({"sha": sha, "parent": parents.split()[0], "subject": subject[:100]})
        if len(out) >= n:
            break
    return out
