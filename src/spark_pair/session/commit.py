"""A git commit of exactly the applied turn(s): the paths and bytes they wrote, nothing else.

    plan = plan_commit(root, [turn_id])          # blocking: git and the journal
    message = await write_message(client, plan, prompt=...)   # the model, else a template
    commit = make_commit(plan, message)          # blocking: hooks, signing, update-ref

A file a turn wrote that also holds the person's own uncommitted edits (before the turn, staged,
or changed since) is `mixed`: it is never committed silently (headless refuses, the app asks and
then commits the whole file with `whole=True`). The git side is base.gitcommit's.
"""

from __future__ import annotations

import asyncio
import difflib
import functools
import re
import shlex
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..base.errors import CommitError, SparkPairError
from ..base.gitcommit import (
    FileState,
    TreeEntry,
    blob_id,
    check_state,
    commit_files,
    git_mode,
    head,
    index_entries,
    tree_entries,
)
from ..edits.journal import Journal
from ..edits.journal.recovery import read_state
from ..edits.paths import content_hash
from ..protocol.request import Message, TurnRequest
from .parts import TurnRecorder

SUBJECT_MAX = 72
BODY_WIDTH = 72  # git's convention for a message's body
DIFF_CHARS = 12_000  # the diff the message request carries, at most
MESSAGE_TOKENS = 300
MESSAGE_TIMEOUT_S = 20.0
INSTRUCTIONS = (
    "You write git commit messages. This request asks for a commit message only, not for "
    "code: the diff below is already applied. Answer with a subject line of at most 72 "
    "characters in the imperative mood (\"Fix ...\", \"Add ...\"), then, only if the change "
    "needs explaining, a blank line and a short body wrapped at 72 columns saying why. No "
    "code fences, no diff, no trailers, no co-author lines.")
_PREAMBLE = re.compile(r"^((sure|okay|ok|certainly)\b[^:]*[,.!]\s*)?((here|below)\b.*|"
                       r"(the\s+)?(suggested\s+|proposed\s+)?(git\s+)?commit message"
                       r"( for [^:]*)?|subject( line)?)\s*:$", re.I)
_HUNK = re.compile(r"^@@ -\d+(,\d+)? \+\d+(,\d+)? @@")
MESSAGE_TASK = "commit-message"  # the request log's task of a message request
_TRAILER = re.compile(r"^(co-authored-by|signed-off-by|generated-by|assisted-by)\s*:", re.I)


@dataclass(slots=True)
class CommitPlan:
    """What a commit of the turns would hold, and what stands in its way."""

    root: Path
    turn_ids: list[str]
    files: list[FileState] = field(default_factory=list)  # what goes in (the bytes on disk)
    befores: dict[str, bytes | None] = field(default_factory=dict)  # HEAD's, for the diff
    mixed: dict[str, str] = field(default_factory=dict)  # path -> how the person's edits are in
    base: str | None = None  # the commit HEAD named when planned
    note: str | None = None  # worth saying (a detached HEAD)
    summaries: list[str] = field(default_factory=list)  # the turns' instructions
    ignored: list[str] = field(default_factory=list)  # new files the ignore rules exclude

    @property
    def paths(self) -> list[str]:
        return [f.path for f in self.files]


def plan_commit(root: Path, turn_ids: list[str], journal: Journal | None = None
                ) -> CommitPlan:
    """The plan for committing `turn_ids` (oldest first). Raises CommitError for a folder where
    no commit can go (not a repository, a merge or rebase under way). Blocking."""
    plan = CommitPlan(Path(root), list(turn_ids))
    plan.note = check_state(plan.root, before=False)
    plan.base = head(plan.root)
    journal = journal or Journal(plan.root)
    first: dict[str, tuple[bytes | None, int | None]] = {}
    last: dict[str, tuple[str | None, int | None]] = {}
    broken: set[str] = set()
    summaries = {t.turn_id: t.summary for t in journal.list_turns()}
    for tid in turn_ids:
        plan.summaries.append(summaries.get(tid, ""))
        for f in journal.files_of(tid):
            if f.path in last and last[f.path][0] != content_hash(f.before):
                broken.add(f.path)  # changed by hand between two turns
            first.setdefault(f.path, (f.before, f.before_mode))
            last[f.path] = (f.after_sha256, f.after_mode)
    paths = list(last)
    heads = tree_entries(plan.root, plan.base, paths)
    staged = index_entries(plan.root, paths)

    @functools.cache
    def head_copy(path: str) -> bytes | None:  # HEAD's copy, asked of git once (when needed)
        return _head_bytes(plan.root, plan.base, path) if path in heads else None

    for path in paths:
        now, mode = read_state(plan.root / path)
        before = first[path][0]
        at_head = heads.get(path)
        why = None
        if content_hash(now) != last[path][0]:
            why = "changed since the turn"
        elif path in broken:
            why = "changed by hand between the turns"
        elif staged.get(path) != at_head:
            why = "holds changes you staged"
        elif not _same(plan.root, path, before, at_head) and not _turn_only(
                head_copy(path), before, now):
            why = "held your own uncommitted edits before the turn"
        if why is not None and _same(plan.root, path, now, at_head, mode):
            continue  # HEAD holds it as it is (committed by hand)
        if why is None and before == now and first[path][1] == mode:
            continue  # the turns left it as it was
        if why is not None:
            plan.mixed[path] = why
        plan.files.append(FileState(path, now, mode))
        plan.befores[path] = before if why is None else head_copy(path)
    _leave_out_ignored(plan, [f.path for f in plan.files
                              if f.data is not None and f.path not in heads
                              and f.path not in staged])
    return plan


def _leave_out_ignored(plan: CommitPlan, new: list[str]) -> None:
    """Leave out of the plan the new files the person's ignore rules exclude (.gitignore,
    .git/info/exclude, core.excludesFile), as `git add` would, with a note saying so."""
    from ..base.gitcommit import ignored

    out = plan.ignored = ignored(plan.root, new)
    if not out:
        return
    plan.files = [f for f in plan.files if f.path not in out]
    plan.mixed = {p: why for p, why in plan.mixed.items() if p not in out}
    listed = " ".join(shlex.quote(p) for p in out)
    said = (f"not committed: {listed} (your ignore rules exclude "
            f"{'it' if len(out) == 1 else 'them'}; `git add -f {listed}` adds it anyway)")
    plan.note = f"{plan.note}; {said}" if plan.note else said


def make_commit(plan: CommitPlan, message: str, *, whole: bool = False,
                journal: Journal | None = None) -> str:
    """Commit the plan's files with `message`; the new commit's id, noted in the journal for
    each turn. Refuses mixed files unless `whole` (the person agreed to commit them whole).
    Blocking."""
    if not plan.files:
        if plan.ignored:
            raise CommitError(f"nothing to commit: {plan.note}", reason="empty",
                              hint="the turn stays applied")
        raise CommitError("nothing to commit: the turn's files are as HEAD has them",
                          reason="empty", hint="`git log -p` shows where they went")
    if plan.mixed and not whole:
        listed = "; ".join(f"{p} ({why})" for p, why in plan.mixed.items())
        raise CommitError(
            f"not committed: {listed}; a commit of the turn would mix in your own edits",
            reason="mixed", hint="the turn stays applied; commit by hand what you want in it: "
            f"git add -p -- {' '.join(map(shlex.quote, plan.mixed))} && git commit")
    notes: list[str] = []
    commit = commit_files(plan.root, plan.files, message, plan.base, notes)
    plan.note = "; ".join(n for n in (plan.note, *notes) if n) or None
    journal = journal or Journal(plan.root)
    for tid in plan.turn_ids:
        journal.note_commit(tid, commit)
    return commit


def uncommitted(root: Path, journal: Journal) -> list[str]:
    """The applied turns made since HEAD's commit that are neither undone nor committed by
    spark-pair, oldest first: what /commit reaches after a restart (or after a headless run
    whose commit failed). Blocking."""
    from ..base.git import git_ok
    from ..edits.journal import TurnKind

    out = (git_ok(root, "log", "-1", "--format=%ct", "HEAD") or b"").strip()
    since = float(out) if out.isdigit() else 0.0
    return [t.turn_id for t in reversed(journal.list_turns())
            if t.kind == TurnKind.APPLY and not t.undone and t.time >= since
            and journal.commit_of(t.turn_id) is None]


def diff_text(plan: CommitPlan, limit: int = DIFF_CHARS) -> str:
    """The plan's change as a unified diff (HEAD to the files), cut at `limit` characters."""
    parts = []
    for f in plan.files:
        before = plan.befores.get(f.path)
        try:
            a = [] if before is None else before.decode("utf-8").splitlines(keepends=True)
            b = [] if f.data is None else f.data.decode("utf-8").splitlines(keepends=True)
        except UnicodeDecodeError:
            parts.append(f"Binary file {f.path} changed\n")
            continue
        parts.append("".join(difflib.unified_diff(
            a, b, "/dev/null" if before is None else f"a/{f.path}",
            "/dev/null" if f.data is None else f"b/{f.path}")))
    text = "".join(parts)
    return text if len(text) <= limit else text[:limit] + "\n[... the rest of the diff is cut]\n"


def template_message(plan: CommitPlan) -> str:
    """The plain message used when the model cannot be reached."""
    paths = plan.paths
    names = ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
    asked = [s.strip() for s in plan.summaries if s.strip()]
    body = "\n".join(textwrap.fill(f"Asked: {_one_line(s)}", BODY_WIDTH,
                                   subsequent_indent="  ", break_long_words=False,
                                   break_on_hyphens=False) for s in asked)
    return _subject(f"Update {names}") + (f"\n\n{body}" if body else "")


def tidy_message(text: str) -> str:
    """The model's reply as a commit message: no fences or trailers, a subject of at most 72
    characters, then the body (empty when the reply holds none)."""
    lines = [ln.rstrip() for ln in text.strip().splitlines()
             if not ln.strip().startswith("```") and not _TRAILER.match(ln.strip())]
    while lines and (not lines[0].strip() or _PREAMBLE.match(lines[0].strip())):
        lines.pop(0)  # blank lines, and "Here is the commit message:" before the message
    if not lines:
        return ""
    subject = _subject(re.sub(r"^(subject|commit message)\s*:\s*", "", lines[0].strip(),
                              flags=re.I))
    body = "\n".join(lines[1:]).strip()
    return subject + (f"\n\n{body}" if body else "")


def with_trailer(message: str, trailer: str) -> str:
    """The message with the configured trailer line (none unless `[git] trailer` is set)."""
    trailer = trailer.strip()
    if not trailer or trailer in message:
        return message
    return message.rstrip() + "\n\n" + trailer


async def write_message(client: Any, plan: CommitPlan, *, prompt: str = "",
                        timeout: float = MESSAGE_TIMEOUT_S, settings: Any = None
                        ) -> tuple[str, str | None]:
    """The commit message for the plan: (message, None) from the model, or (the template, why
    the model's was not used) when it cannot be reached or answers nothing usable, or
    `[git] message = "template"` asks for no request; with `[git] trailer` added."""
    git = getattr(settings, "git", None)
    trailer = git.trailer if git is not None else ""
    if git is not None and git.message == "template":
        return with_trailer(template_message(plan), trailer), None
    try:
        message, why = await _ask_model(client, plan, prompt, timeout)
    finally:  # its request is logged under the (last) turn it commits, now
        recorder = getattr(client, "recorder", None)
        if isinstance(recorder, TurnRecorder) and plan.turn_ids:
            recorder.file_now(MESSAGE_TASK, plan.turn_ids[-1])
    return with_trailer(message, trailer), why


async def _ask_model(client: Any, plan: CommitPlan, prompt: str, timeout: float
                     ) -> tuple[str, str | None]:
    asked = prompt.strip() or "\n".join(plan.summaries).strip()
    user = ("Write the commit message for this change.\n\n"
            + (f"What was asked: {asked}\n\n" if asked else "")
            + f"```diff\n{diff_text(plan)}```\n")
    request = TurnRequest(INSTRUCTIONS, [Message("user", user)], max_tokens=MESSAGE_TOKENS,
                          task=MESSAGE_TASK)
    aside = getattr(client, "complete_aside", None) or client.complete
    try:
        done = await asyncio.wait_for(aside(request), timeout)
    except TimeoutError:
        return template_message(plan), f"the model did not answer within {timeout:.3g} s"
    except SparkPairError as exc:
        return template_message(plan), exc.message
    if _is_diff(done.text):
        return template_message(plan), "the model's answer was a diff, not a message"
    message = tidy_message(done.text)
    if not message:
        return template_message(plan), "the model's answer held no message"
    return message, None


def _is_diff(text: str) -> bool:
    """A diff or patch (fenced or not) where a message was asked for."""
    lines = text.splitlines()
    return any(_HUNK.match(ln) or ln.startswith(("diff --git ", "*** Begin Patch"))
               or (ln.startswith("--- ") and nxt.startswith("+++ "))
               for ln, nxt in zip(lines, [*lines[1:], ""], strict=True))


def _same(root: Path, path: str, data: bytes | None, entry: TreeEntry | None,
          mode: int | None = None) -> bool:
    """Whether `data` (None: absent) is what HEAD's `entry` holds at `path` (and, given `mode`,
    with its mode)."""
    if data is None or entry is None:
        return data is None and entry is None
    return blob_id(root, path, data) == entry.oid and (
        mode is None or git_mode(mode) == entry.mode)


def _turn_only(head_bytes: bytes | None, before: bytes | None, now: bytes | None) -> bool:
    """Whether the person's edits (HEAD's copy `head_bytes` -> before) are all inside lines the
    turn rewrote (before -> now), so none of them is left in `now` apart from what the turn
    wrote there (an `AI!` comment the turn replaced)."""
    if head_bytes is None or before is None or now is None:
        return False
    a, b, c = (x.splitlines(keepends=True) for x in (head_bytes, before, now))
    mine = [(j1, j2) for tag, _, _, j1, j2 in
            difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes() if tag != "equal"]
    turn = [(i1, i2) for tag, i1, i2, _, _ in
            difflib.SequenceMatcher(None, b, c, autojunk=False).get_opcodes() if tag != "equal"]
    # a line the person deleted (an empty range, j1 == j2) is never inside the turn's lines:
    # the commit would carry the deletion, so it counts as their own edit
    return all(any(t1 <= j1 < j2 <= t2 for t1, t2 in turn) for j1, j2 in mine)


def _subject(line: str) -> str:
    line = _one_line(line).rstrip(".")
    if len(line) <= SUBJECT_MAX:
        return line
    cut = line[:SUBJECT_MAX - 3].rsplit(" ", 1)[0]
    if len(cut) < SUBJECT_MAX // 2:  # one long word: cut inside it, not before it
        cut = line[:SUBJECT_MAX - 3]
    return cut + "..."


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _head_bytes(root: Path, base: str | None, path: str) -> bytes | None:
    from ..base.git import git_ok

    return None if base is None else git_ok(root, "cat-file", "blob", f"{base}:{path}")
