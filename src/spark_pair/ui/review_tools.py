"""The person's own tools during review: alt+e rewrites a hunk (or a created file) in their
editor, alt+o shows the turn's diff in their pager. Both hand the terminal over and come back to
the same review state; neither writes a repository file (what is saved becomes the decision,
applied with the turn, all-or-nothing and journaled)."""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path, PurePosixPath
from typing import Protocol

from textual.app import App
from textual.widget import Widget

from ..base.errors import SparkPairError, UsageError
from ..edits.amend import amend_content, amend_hunk, hunk_result
from ..edits.ops import Create, Hunk, Modify, Operation
from ..edits.render import render_ops
from .external import NOT_FOUND, editor_argv, pager_argv, run_program
from .host import Panes
from .review_state import Item
from .widgets.files import FilesPane
from .widgets.review import ReviewPane

# the chords that decide (alt+t too: it accepts like alt+A): shown only while something is
# undecided; moving and the pager stay while the turn is on screen
DECIDING = frozenset({"accept", "reject", "accept_all", "reject_all", "confirm",
                      "reject_with_reason", "amend", "try_check"})


class ChordHost(Panes, Protocol):
    """What a review chord's check uses of the main screen: its panes and focus."""

    @property
    def focused(self) -> Widget | None: ...


def chord_enabled(screen: ChordHost, name: str) -> bool:
    """A review chord (alt+a, ...) acts while the review pane shows a turn, whatever has the
    focus; one that decides only while something is undecided (once all is decided, written or
    stopped, the footer no longer offers it); alt+p stays the files pane's pin while that pane
    has the focus; alt+d only while a delete or rename is undecided."""
    pane = screen.query_one(ReviewPane)
    if pane.has_class("-empty") or (name in DECIDING and not pane.has_undecided):
        return False
    if name == "confirm":  # alt+d: only while a delete or rename waits for its decision
        return any(e.needs_confirm for e in pane.review.undecided())
    return not (name == "previous_file" and isinstance(screen.focused, FilesPane))


def amend(app: App[object], pane: ReviewPane, item: Item, root: Path) -> str:
    """Open the item's resulting text in $VISUAL/$EDITOR; accept what was saved. Returns what
    happened, for the notice line."""
    entry = pane.review.entries.get(item.op)
    if entry is None:
        return "nothing to edit"
    op = entry.op
    if isinstance(op, Modify) and item.hunk is not None:
        original = hunk_result(op.hunks[item.hunk])
    elif isinstance(op, Create):
        original = op.content
    else:
        return "e rewrites a hunk or a created file"
    suffix = PurePosixPath(op.path).suffix[:16]
    with tempfile.TemporaryDirectory(prefix="spark-pair-edit-") as tmp:
        path = Path(tmp) / f"{PurePosixPath(op.path).stem[:40] or 'hunk'}{suffix}"
        path.write_text(original, encoding="utf-8", newline="")
        try:
            argv = editor_argv()
            code = run_program(app, argv, path, root)
        except SparkPairError as exc:
            return exc.describe()
        if code == NOT_FOUND:
            return UsageError(f"the editor {argv[0]!r} was not found: nothing changed",
                              hint="set $VISUAL or $EDITOR to your editor (nano, vim, "
                                   "code --wait)").describe()
        if code != 0:
            return f"the editor exited with status {code}: nothing changed"
        try:
            with open(path, encoding="utf-8", newline="") as f:
                saved = f.read()
        except (OSError, UnicodeDecodeError) as exc:
            return f"could not read what the editor saved ({exc}): nothing changed"
    if pane.review.entries.get(item.op) is not entry:
        return "the proposal was asked again while you edited: nothing changed"
    try:
        if isinstance(op, Create):
            content = amend_content(op.content, saved)
            if content is None:
                return "unchanged: nothing changed"
            pane.amended(item, content=content)
        else:
            hunk = amend_hunk(op.hunks[item.hunk], saved)  # type: ignore[index]
            if hunk is None:
                return "unchanged: nothing changed"
            pane.amended(item, hunk=hunk)
    except SparkPairError as exc:
        return exc.describe()
    return "your version is accepted: it is written with the turn (the model hears of it)"


def as_decided(op: Operation, amended: dict[int, Hunk], content: str | None) -> Operation:
    """The operation with the person's own versions (alt+e) in place of the model's."""
    if isinstance(op, Modify) and amended:
        return replace(op, hunks=[amended.get(i, h) for i, h in enumerate(op.hunks)])
    if isinstance(op, Create) and content is not None:
        return replace(op, content=content)
    return op


def page(app: App[object], pane: ReviewPane, root: Path, setting: str) -> str:
    """Show the turn's diff (as proposed so far, with the person's own versions of what they
    edited) in the pager; '' when all went well."""
    entries = [pane.review.entries[i] for i in sorted(pane.review.entries)]
    if not entries:
        return "no diff yet: alt+o opens the turn's diff once the model proposes something"
    text = render_ops([as_decided(e.op, e.amended, e.content) for e in entries])
    with tempfile.TemporaryDirectory(prefix="spark-pair-diff-") as tmp:
        path = Path(tmp) / "turn.diff"
        path.write_text(text, encoding="utf-8")
        try:
            argv = pager_argv(setting)
            code = run_program(app, argv, path, root)
        except SparkPairError as exc:
            return exc.describe()
    if code == NOT_FOUND:
        return UsageError(f"the pager {argv[0]!r} was not found",
                          hint="set [review] pager in the config, or $PAGER (less -R, "
                               "delta)").describe()
    return "" if code == 0 else f"the pager exited with status {code}"
