"""Turning operations into file changes: hunk location, stale checks, all-or-nothing writes.

apply_hunks (edits.hunks) is pure. apply_turn plans every new file content first (nothing
written), journals the before-images, then writes; any failure rolls the turn back.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..base.errors import ApplyError, ConflictError, EditError, StaleError
from ..base.git import git_ok
from ..base.ids import new_turn_id
from ..base.printable import shown
from . import fsio
from .hunks import apply_hunks, split_lines, tidy
from .journal import FileChange, Journal, missing_dirs, write_changes
from .locate import Locator, Stop, check_stop
from .ops import Create, Delete, Hunk, Modify, Operation, Rename, content_hash
from .paths import MAX_READ_BYTES, confine_target, looks_binary, real_root
from .place import conflict
from .placement import Loose, Placement
from .pycheck import broken

__all__ = ["AppliedTurn", "apply_hunks", "apply_turn", "check_each", "check_ops",
           "flag_uncommitted", "revise"]

_MISSING = "the model named a file that is not in the repository; regenerate the turn"
_TWICE = ("nothing was written; the reply names the file in two operations that cannot both be "
          "done: regenerate the turn")
_PARTIAL = ("nothing was written; the file holds lines the reply does not show (your own "
            "work?): regenerate the turn with the file in the context, or delete it yourself")
_UNSEEN = ("nothing was written; put the file in the context (`-f PATH`, or space in the files "
           "pane) and ask again, or delete it yourself")
_NOT_A_FILE = "spark-pair only edits regular files; regenerate the turn naming a file"


def _unseen_binary(rel: str) -> str:
    import shlex

    return ("nothing was written; a reply never deletes a binary file, as the model is never "
            f"shown one: delete it yourself (`git rm {shlex.quote(rel)}`)")


@dataclass(slots=True)
class AppliedTurn:
    turn_id: str
    changed: list[str]
    notes: list[str] = field(default_factory=list)


# the bytes and mode of each file read, by its repository path: kept across the checks of one
# look (a hunk checked alone after its operation) so each file is read once. Never for a write
Reads = dict[str, tuple[bytes | None, int | None]]


class _Tree:
    """The repository as the turn's operations see it: disk state plus planned changes."""

    def __init__(self, root: Path, own: tuple[Path, ...] = (), reads: Reads | None = None
                 ) -> None:
        self.root = real_root(root)
        self.own = own  # data folders besides the default ones (the journal's)
        self.reads = reads  # files an earlier check of the same look read (filled here too)
        self.disk: dict[str, tuple[bytes | None, int | None]] = {}
        self.state: dict[str, tuple[bytes | None, int | None]] = {}
        self.by: dict[str, str] = {}  # what an earlier operation of the turn did to a path
        # the hunks of the turn's modifies of a path, block by block, each placed on the file as
        # it was on disk (None once one was placed on another's result): what a later block
        # may revise
        self.edits: dict[str, list[list[Hunk]] | None] = {}

    def stale(self, rel: str, base_hash: str | None) -> bool:
        """Whether the file on disk differs from what the operation was computed against."""
        data = self.disk[rel][0]
        return base_hash is not None and data is not None and content_hash(data) != base_hash

    def gone(self, rel: str, verb: str, base_hash: str | None) -> EditError:
        """Why there is no file at `rel` to `verb`."""
        by = self.by.get(rel)
        if by is not None:
            return ConflictError(f"cannot {verb} {rel}: an earlier operation in this reply {by}",
                                 hint=_TWICE)
        if base_hash is not None:
            return StaleError(f"{rel} was deleted since the request")
        return ConflictError(f"cannot {verb} {rel}: the file does not exist", hint=_MISSING)

    def path(self, path: str) -> str:
        rel, full = confine_target(self.root, path, self.own)
        if rel not in self.disk and self.reads is not None and rel in self.reads:
            self.disk[rel] = self.state[rel] = self.reads[rel]
        elif rel not in self.disk:
            if full.is_dir():
                raise ConflictError(f"{rel} is a directory, not a file", hint=_NOT_A_FILE)
            for parent in list(full.parents)[: len(rel.split("/")) - 1]:
                if parent.exists() and not parent.is_dir():
                    raise ConflictError(f"{rel}: {parent.relative_to(self.root)} is a file, "
                                        "not a directory", hint=_NOT_A_FILE)
            try:
                st = os.stat(full)
                if not stat.S_ISREG(st.st_mode):
                    raise ConflictError(f"{rel} is not a regular file", hint=_NOT_A_FILE)
                self.disk[rel] = (full.read_bytes(), st.st_mode & 0o7777)
            except FileNotFoundError:
                self.disk[rel] = (None, None)
            except OSError as exc:
                raise ApplyError(f"cannot read {rel}: {exc}") from exc
            self.state[rel] = self.disk[rel]
            if self.reads is not None:
                self.reads[rel] = self.disk[rel]
        return rel

    def check_shape(self, rel: str) -> None:
        """A file about to appear at `rel` must not need a planned file as its folder, nor be
        the folder of one (`x` and `x/y` in one turn)."""
        for other, (data, _) in self.state.items():
            if data is None or other == rel:
                continue
            if rel.startswith(other + "/") or other.startswith(rel + "/"):
                folder, inside = (other, rel) if rel.startswith(other + "/") else (rel, other)
                raise ConflictError(f"{folder} would be both a file and the folder of {inside} "
                                    "in this turn", hint=_NOT_A_FILE)


def _edit(rel: str, data: bytes, hunks: list[Hunk], stale: bool, notes: list[str],
          stop: Stop) -> bytes:
    """`data` with the hunks applied. A file changed since the request (`stale`) takes them
    only where their lines are exactly as the model saw them: a line the person changed is
    never matched loosely and overwritten."""
    text, encoding = fsio.decode(data, rel)
    if any(fsio.has_escapes(ln) for h in hunks for ln in h.lines):  # never written as bytes
        raise ApplyError(f"{rel}: the reply holds a lone surrogate, which is not a character",
                         hint="regenerate the turn; nothing was changed")
    if not stale:
        new = apply_hunks(text, hunks, rel, stop=stop)
        _compiles_still(rel, text, new, hunks)
        return fsio.encode(new, encoding, rel)
    try:
        new = apply_hunks(text, hunks, rel, stop=stop, exact=True)
    except ConflictError as exc:
        detail = "\n".join("  " + line for line in exc.message.splitlines())
        raise StaleError(f"{rel} changed since the request; its hunks no longer apply exactly"
                         f"\n{detail}") from exc
    notes.append(f"{rel} changed since the request; its hunks still matched it exactly, so "
                 "they were applied and the change on disk was kept")
    return fsio.encode(new, encoding, rel)


def revise(rel: str, data: bytes, earlier: list[list[Hunk]], later: list[Hunk],
           notes: list[str], stop: Stop) -> tuple[bytes, list[list[Hunk]]]:
    """A later diff block for `rel` that does not fit the earlier blocks' result but does fit
    the file as it was: it revises them. Each earlier block with a hunk it overlaps is
    superseded whole (not written: a model that rewrites its diff takes back all of it); the
    other blocks go with it. Raises ConflictError when it does not fit the file either.
    (The new content, the blocks now placed on the file as it was.)"""
    _edit(rel, data, later, False, [], stop)
    gone = [b for b in earlier if _touches(b, later)]
    kept = [b for b in earlier if not any(b is g for g in gone)]
    merged = sorted([h for b in kept for h in b] + later,
                    key=lambda h: (h.placement.line or 0) if h.placement else 0)
    new = _edit(rel, data, merged, False, notes, stop)
    for h in (h for b in gone for h in b):
        h.placement = Placement(None, (Loose.SUPERSEDED,))
    for h in later:
        if h.placement is not None and gone:
            h.placement = h.placement.with_parsed((Loose.REVISES,))
    same = all(len(b) == len(later) and all(x.lines == y.lines for x, y in zip(
        b, later, strict=True)) for b in gone)
    notes.append(f"{rel}: a later diff block in the reply {'repeats' if same else 'revises'} "
                 f"{len(gone)} earlier one(s) (its lines match the file as it was, not as the "
                 "earlier blocks left it); it was applied in their place")
    return new, kept + [later]


def _compiles_still(rel: str, before: str, after: str, hunks: list[Hunk]) -> None:
    """A Python file that compiled must still compile once a hunk was placed loosely: else the
    loose hunk nearest above the error is refused, naming the line."""
    loose = [h for h in hunks if h.placement is not None and h.placement.loose]
    bad = broken(rel, before, after) if loose else None
    if bad is None:
        return
    line, why = bad
    above = [h for h in loose if h.placement and (h.placement.line or 0) <= line]
    hunk = (above or loose)[-1]
    how = hunk.placement.describe() if hunk.placement else ""
    raise conflict(hunk, rel, f"placed loosely ({how}), it leaves "
                   f"Python that does not compile: line {line} of the result: {why}; the file "
                   "compiled before, so it is not placed")


def _once(rel: str, hunks: list[Hunk], notes: list[str]) -> list[Hunk]:
    """The block's hunks without a hunk that repeats an earlier one of it (the same lines and
    the same @@ position): it would otherwise land at a second place its @@ does not name."""
    out: list[Hunk] = []
    dropped = 0
    for h in hunks:
        if any(tidy(h).lines == tidy(x).lines and h.old_start == x.old_start for x in out):
            h.placement = Placement(None, (Loose.REPEATED,))
            dropped += 1
        else:
            out.append(h)
    if dropped:
        notes.append(f"{rel}: {dropped} hunk(s) of a diff block repeat an earlier hunk of it "
                     "(the same lines at the same @@ position); each was written once")
    return out


def alongside(rel: str, data: bytes, now: bytes, earlier: list[list[Hunk]], later: list[Hunk],
              notes: list[str], stop: Stop) -> tuple[bytes, list[list[Hunk]]] | None:
    """A later diff block for `rel` that fits the file as it was (`data`), placed there next to
    the earlier blocks: one whose changes touch an earlier block's in the original repeats or
    revises it (`revise`: never both written, even where the later block would also fit the
    earlier blocks' result, as an insertion or an append does); one that touches none is
    applied with them. None when it does not fit the original, or the blocks do not go
    together there: the caller then places it on the earlier blocks' result (`now`). One that
    only adds at the edge of an earlier block's change and fits `now` too is refused: it may
    revise that block or go with it, and which cannot be told."""
    try:
        _edit(rel, data, later, False, [], stop)
    except ConflictError:
        return None
    meets = max(_touches(b, later) for b in earlier)
    if meets == 1 and _fits(rel, now, later, stop):
        raise conflict(later[0], rel, "a later diff block adds lines at the edge of an earlier "
                       "block's change and fits both the file as it was and as the earlier "
                       "block left it: whether it revises that block or goes with it cannot "
                       "be told, so it is not placed")
    if meets:
        return revise(rel, data, earlier, later, notes, stop)
    merged = sorted([h for b in earlier for h in b] + later,
                    key=lambda h: (h.placement.line or 0) if h.placement else 0)
    try:
        return _edit(rel, data, merged, False, notes, stop), earlier + [later]
    except ConflictError:
        return None


def _fits(rel: str, data: bytes, hunks: list[Hunk], stop: Stop) -> bool:
    """Whether the hunks go on `data` (their placements are then set there: place them again)."""
    try:
        _edit(rel, data, hunks, False, [], stop)
    except ConflictError:
        return False
    return True


def _changed(h: Hunk) -> list[tuple[int, int]]:
    """The file lines [first, end) a placed hunk changes: each removed line, and each point
    where it adds lines (first == end); its whole old side when an edge line was left out."""
    p = h.placement
    if p is None or p.line is None:
        return []
    if p.skipped:
        return [(p.line - p.skipped, p.line + len(h.old_lines))]
    out: list[tuple[int, int]] = []
    i, run = p.line, None  # run: where the current run of -/+ lines starts
    for ln in [*h.lines, " "]:
        if ln[:1] == " ":
            if run is not None:
                out.append((run, i))  # removed lines, or the point where lines are added
            run = None
            i += 1
            continue
        run = i if run is None else run
        i += ln[:1] == "-"
    return out


def _touches(block: list[Hunk], later: list[Hunk]) -> int:
    """How the later block meets `block` in the original file (both placed there): 2 when it
    changes lines `block` changes or adds at the point `block` adds, 1 when it only adds at the
    edge of lines `block` changes (or `block` at the edge of its), 0 when not at all."""
    mine = [c for h in block for c in _changed(h)]
    return max((_meet(a, b) for h in later for b in _changed(h) for a in mine), default=0)


def _meet(a: tuple[int, int], b: tuple[int, int]) -> int:
    """2: two removed ranges share a line, an insertion point is inside a removed range, or
    both are the same point; 1: an insertion point at the edge of a removed range; 0: apart
    (two edits of neighbouring lines are separate: each is written)."""
    (a0, a1), (b0, b1) = a, b
    if a0 == a1 and b0 == b1:
        return 2 * (a0 == b0)
    if a0 == a1 or b0 == b1:
        point, (r0, r1) = (a0, b) if a0 == a1 else (b0, a)
        return 2 if r0 < point < r1 else int(point in (r0, r1))
    return 2 * (a0 < b1 and b0 < a1)


def _whole_file(rel: str, data: bytes, lines: list[str], loose: bool) -> str | None:
    """How the lines a delete removes differ from the file's whole content, or None when they
    are all of it (line by line; spacing is forgiven only when `loose`)."""
    text, _ = fsio.decode(data, rel)
    have = split_lines(text)[0]
    keys = list(Locator(have, escapes=fsio.has_escapes(text), loose=loose).keys)
    if loose:  # nothing is written by a delete: spacing inside a line may slip too
        keys.append(lambda line: " ".join(line.split()))
    for i, (mine, theirs) in enumerate(zip(have, lines, strict=False)):
        if not any(key(mine) == key(theirs) for key in keys):
            return (f"line {i + 1} is {shown(mine[:60])!r} in the file but "
                    f"{shown(theirs[:60])!r} in the reply")
    if len(have) > len(lines):
        return (f"the reply removes {len(lines)} line(s), the file has {len(have)}; line "
                f"{len(lines) + 1} is {shown(have[len(lines)][:60])!r}")
    if len(have) < len(lines):
        return f"the reply removes {len(lines)} line(s), the file has {len(have)}"
    return None


def _plan_op(tree: _Tree, op: Operation, notes: list[str], stop: Stop = None) -> None:
    check_stop(stop)
    if isinstance(op, Modify):
        rel = tree.path(op.path)
        data, mode = tree.state[rel]
        if data is None:
            raise tree.gone(rel, "modify", op.base_hash)
        stale = tree.stale(rel, op.base_hash)
        hunks = _once(rel, op.hunks, notes)
        earlier = tree.edits.get(rel) if rel in tree.by else None
        original = tree.disk[rel][0]
        if earlier and not stale and original is not None:
            both = alongside(rel, original, data, earlier, hunks, notes, stop)
            if both is not None:
                tree.state[rel] = (both[0], mode)
                tree.edits[rel] = both[1]
                return
        try:
            tree.state[rel] = (_edit(rel, data, hunks, stale, notes, stop), mode)
            tree.edits[rel] = None if rel in tree.by else [hunks]
        except ConflictError:
            if not earlier or stale or original is None:
                raise
            new, tree.edits[rel] = revise(rel, original, earlier, hunks, notes, stop)
            tree.state[rel] = (new, mode)
        tree.by.setdefault(rel, "modifies it")
    elif isinstance(op, Create):
        rel = tree.path(op.path)
        if tree.state[rel][0] is not None:
            if rel in tree.by and tree.disk[rel][0] is None:
                raise ConflictError(f"cannot create {rel}: an earlier operation in this reply "
                                    f"{tree.by[rel]}", hint=_TWICE)
            raise ConflictError(f"{rel} already exists; a create never overwrites",
                                hint="regenerate the turn as a modification of the existing file")
        tree.check_shape(rel)
        if fsio.has_escapes(op.content):  # never written as raw bytes
            raise ApplyError(f"{rel}: the reply holds a lone surrogate, which is not a character",
                             hint="regenerate the turn; nothing was changed")
        tree.state[rel] = (fsio.encode(op.content, "utf-8", rel), fsio.default_mode())
        tree.by[rel] = "creates it"
    elif isinstance(op, Delete):
        rel = tree.path(op.path)
        data, _ = tree.state[rel]
        if data is None:
            raise tree.gone(rel, "delete", op.base_hash)
        stale = tree.stale(rel, op.base_hash)
        if op.lines is not None:
            # spacing slips are forgiven only in the very file the model was shown
            seen = op.base_hash is not None and not stale
            differ = _whole_file(rel, data, op.lines, loose=seen)
            if differ is not None and stale:
                raise StaleError(f"{rel} changed since the request and is no longer what the "
                                 f"reply deletes ({differ}); it is not deleted")
            if differ is not None:
                raise ConflictError(f"cannot delete {rel}: the lines the reply removes are not "
                                    f"the whole file ({differ})", hint=_PARTIAL)
            if stale:
                notes.append(f"{rel} changed since the request; it still held exactly the "
                             "lines the reply removes, so it was deleted")
        elif data:  # the reply shows none of its lines: only the file the model was shown
            if op.base_hash is None and looks_binary(data):
                raise ConflictError(f"cannot delete {rel}: the reply shows none of its lines "
                                    "and the model was not shown the file (a binary file is "
                                    "never sent to it)", hint=_unseen_binary(rel))
            if op.base_hash is None:
                raise ConflictError(f"cannot delete {rel}: the reply shows none of its lines "
                                    "and the model was not shown the file", hint=_UNSEEN)
            if stale:
                raise StaleError(f"{rel} changed since the request; it is not deleted")
        tree.state[rel] = (None, None)
        tree.by[rel] = "deletes it"
    elif isinstance(op, Rename):
        src, dst = tree.path(op.src), tree.path(op.dst)
        data, mode = tree.state[src]
        if data is None:
            raise tree.gone(src, "rename", None)
        if src != dst and tree.state[dst][0] is not None:
            if dst in tree.by and tree.disk[dst][0] is None:
                raise ConflictError(f"cannot rename {src} to {dst}: an earlier operation in "
                                    f"this reply writes {dst} (a rename never overwrites)",
                                    hint=_TWICE)
            raise ConflictError(f"cannot rename {src} to {dst}: {dst} exists (a rename never "
                                "overwrites)", hint=f"move or remove {dst} first, or ask for "
                                "another name; nothing was written")
        stale = tree.stale(src, op.base_hash)
        if op.hunks:
            data = _edit(src, data, op.hunks, stale, notes, stop)
        elif stale:
            notes.append(f"{src} changed since the request; it is renamed with its current content")
        tree.state[src] = (None, None)
        tree.check_shape(dst)
        tree.state[dst] = (data, mode)
        tree.by[src], tree.by[dst] = f"renames it to {dst}", f"renames {src} to it"
    else:
        raise ApplyError(f"unknown operation {type(op).__name__}")


def _changes(tree: _Tree) -> list[FileChange]:
    writes: list[FileChange] = []
    deletes: list[FileChange] = []
    for rel, after in tree.state.items():
        before = tree.disk[rel]
        if after == before:
            continue
        dirs = missing_dirs(tree.root, rel) if after[0] is not None else []
        change = FileChange(rel, before[0], before[1], after[0], after[1], dirs)
        (writes if after[0] is not None else deletes).append(change)
    return writes + deletes  # a rename's destination is written before its source goes


def check_each(root: Path, ops: Sequence[Operation], *, stop: Stop = None,
               own: tuple[Path, ...] = (), reads: Reads | None = None
               ) -> list[tuple[int, EditError]]:
    """(index, error) for every operation that would fail (path, conflict, stale, binary), in
    order, each seeing the operations before it; writes nothing. Cancelled once stop() is true.
    `reads`: the files the look's earlier checks read (they are not read again; those read now
    are added)."""
    tree = _Tree(root, own, reads)
    notes: list[str] = []
    problems: list[tuple[int, EditError]] = []
    for i, op in enumerate(ops):
        try:
            _plan_op(tree, op, notes, stop)
        except EditError as exc:
            problems.append((i, exc))
    return problems


def read_checked(root: Path, path: str, reads: Reads) -> bytes | None:
    """The bytes of the regular file at `path` as a check reads them (kept in `reads`, or
    taken from it); None: no such file, or one no check would read (a folder, a link, a FIFO,
    spark-pair's own file, one over MAX_READ_BYTES)."""
    try:
        rel = _Tree(root, (), reads).path(path)
    except EditError:
        return None
    data = reads[rel][0]
    return data if data is None or len(data) <= MAX_READ_BYTES else None


def check_ops(root: Path, ops: Sequence[Operation], *, stop: Stop = None) -> list[str]:
    """Every problem (path, conflict, stale, binary) the operations would hit; writes nothing."""
    return [exc.message for _, exc in check_each(root, ops, stop=stop)]


def apply_turn(root: Path, ops: Sequence[Operation], *, journal: Journal | None = None,
               turn_id: str | None = None, summary: str = "", stop: Stop = None) -> AppliedTurn:
    """Apply all operations of one turn, or none of them. Raises EditError (nothing changed);
    one found while planning names its operation's index in `ops` (`details["op_index"]`).

    With `stop`, the wait for the journal lock and the planning give up (Cancelled, nothing
    written) once stop() is true; once the first file is written the turn is finished.
    Blocking (lock, fsync): call it from a worker thread in an event loop.
    """
    journal = journal or Journal(root)
    with journal.locked(stop):
        notes = [r.describe() for r in journal.recover()]
        tree = _Tree(root, journal.own)
        for i, op in enumerate(ops):
            try:
                _plan_op(tree, op, notes, stop)
            except EditError as exc:
                exc.details["op_index"] = i  # which operation it is about
                raise
        changes = _changes(tree)
        turn_id = turn_id or new_turn_id()
        check_stop(stop)
        if changes:
            write_changes(journal, turn_id, changes, summary=summary)
        return AppliedTurn(turn_id, [c.path for c in changes], notes)


def flag_uncommitted(root: Path, ops: Sequence[Operation]) -> None:
    """Mark each Delete whose file git does not hold as committed (modified, untracked, ignored)."""
    deletes = [op for op in ops if isinstance(op, Delete)]
    if not deletes:
        return
    raw_prefix = git_ok(root, "rev-parse", "--show-prefix")
    out = None if raw_prefix is None else git_ok(
        root, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--ignored=matching",
        "--", *[op.path for op in deletes])
    if raw_prefix is None or out is None:
        for op in deletes:
            op.uncommitted = True  # no git to vouch for the file
        return
    prefix = raw_prefix.decode("utf-8", "surrogateescape").strip()
    dirty = _status_paths(out.decode("utf-8", "surrogateescape"))
    for op in deletes:
        op.uncommitted = (prefix + _plain(op.path)) in dirty or op.path in dirty


def _plain(path: str) -> str:
    """The path without leading "./" segments (a name like .env keeps its dot)."""
    while path.startswith("./"):
        path = path[2:].lstrip("/")
    return path


def _status_paths(out: str) -> set[str]:
    """The paths of `git status --porcelain=v1 -z` entries: "XY path", where a rename or copy
    (X or Y is R or C) is followed by one more entry holding the original path."""
    paths: set[str] = set()
    entries = out.split("\0")
    i = 0
    while i < len(entries):
        entry = entries[i]
        i += 1
        if len(entry) < 4 or entry[2] != " ":
            continue
        paths.add(entry[3:])
        if "R" in entry[:2] or "C" in entry[:2]:
            i += 1  # the original path: it no longer holds this content
    return paths
