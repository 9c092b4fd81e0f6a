"""Incremental unified-diff parser: feed text deltas, get structure events as lines complete.

Work is linear in the input: only the unfinished line is kept between feeds, and each complete
line is looked at once (a `--- ` line or a blank line may wait for the next line to decide).
"""

from __future__ import annotations

import re

from ..base.errors import IncompleteReply, ParseError, SparkPairError
from ..base.printable import shown
from . import envelope
from .fileheads import CLASH_HINT as _CLASH_HINT
from .fileheads import FileHead as _File
from .fileheads import check_moves as _check_moves
from .fileheads import disagreement as _disagreement
from .fileheads import git_paths as _git_paths
from .fileheads import header_pair as _header_pair
from .fileheads import path_key as _key
from .fileheads import same_file as _same_file
from .fileheads import strip_prefixes as _strip_prefixes
from .ops import Create, Delete, Hunk, Modify, Operation, OpKind, Rename
from .parse_events import FileFinished, FileStarted, HunkStarted, LineAdded, ParseEvent
from .placement import Loose
from .syntax import DEV_NULL, clean_path, is_fence, parse_hunk_header, written_line

_EXTENDED = ("index ", "old mode ", "new mode ", "similarity index ", "dissimilarity index ",
             "copy from ", "copy to ")
_BINARY = ("Binary files ", "GIT binary patch")
# a reply cannot end inside (without the newline of) a header line, or a file header's line
_HEADERS = ("diff --git ", "diff -", "--- ", "+++ ", "@@", "*** Begin Patch")
_FILE_HEADERS = ("rename ", "new file mode", "deleted file mode", *_EXTENDED, *_BINARY)
_FULL_MODE = re.compile(r"(new|deleted) file mode [0-7]{6}")
_CUT_HINT = IncompleteReply.default_hint
ENDS_SHORT = 2  # lines a whole reply's last hunk, ending on a context line, may be short
_ODD_HINT = ("nothing was written: the file would differ from the reply's text; regenerate the "
             "turn or ask for a smaller change")

def _whole_header(f: _File, line: str) -> bool:
    """Whether a file header line is whole without its newline (the reply's last line): a
    `rename to` naming what the `diff --git` line named, or a file mode with its six digits."""
    if line.startswith("rename to "):
        return f.new is not None and clean_path(line[10:]) == f.new
    return _FULL_MODE.fullmatch(line) is not None


class DiffParser:
    """Feed deltas with `feed`, then `close()`; `operations()` gives the parsed operations.

    What is parsed is exactly what the text says, or an error: a reply that stops inside a
    hunk (its `@@` counts not reached, unless it ends on a context line at most ENDS_SHORT lines
    short, one side at most one), a file header or an unclosed envelope is an
    IncompleteReply at `close()`; diff lines after a hunk whose counts were met (unless a new
    hunk or file or the closing fence follows, or the reply ends on a context line), an
    unmarked line inside a hunk whose counts are not met, a binary patch or a lone surrogate is
    a ParseError. Wrong `@@` counts that are tolerated mark the hunk recounted. Wrong or missing
    `@@` numbers, blank lines after a hunk, prose and fences around the diff are tolerated.
    """

    def __init__(self) -> None:
        self._parts: list[str] = []  # the unfinished line, in pieces
        self._ops: list[Operation] = []
        self._count = 0  # files announced (= operations built)
        self._file: _File | None = None
        self._hunk: Hunk | None = None
        self._hunk_index: int | None = None  # the open hunk's index, once it has a line
        self._left: list[int] | None = None  # [old, new] lines still due by the hunk's counts
        self._over: str | None = None  # the first +/- line past the hunk's counts
        self._overrun = False  # the counts were exceeded
        self._held: list[str] = []  # lines waiting for the next line to be understood
        self._env: envelope.EnvelopeState | None = None
        self._out: list[ParseEvent] = []
        self._closed = False

    # ---- public ------------------------------------------------------------------------------

    @property
    def partial_line(self) -> str:
        if len(self._parts) > 1:
            self._parts = ["".join(self._parts)]
        return self._parts[0].rstrip("\r") if self._parts else ""

    def feed(self, delta: str) -> list[ParseEvent]:
        if "\n" not in delta and not self._closed:  # the common case when streaming tokens
            if delta:
                self._parts.append(delta)
            return []
        if self._closed:
            raise ParseError("the diff parser was fed after close()")
        try:
            start = 0
            while True:
                nl = delta.find("\n", start)
                if nl < 0:
                    if start < len(delta):
                        self._parts.append(delta[start:])
                    break
                piece = delta[start:nl]
                if self._parts:
                    self._parts.append(piece)
                    piece = "".join(self._parts)
                    self._parts = []
                self._line(piece.removesuffix("\r"))
                start = nl + 1
        except SparkPairError:
            raise
        except Exception as exc:  # a parser bug must not escape as a traceback
            raise ParseError(f"could not parse the diff: {type(exc).__name__}: {exc}") from exc
        return self._take()

    def close(self) -> list[ParseEvent]:
        """The end of the reply: a diff that stops mid-way is an IncompleteReply."""
        if self._closed:
            return []
        try:
            if self._parts:
                last = "".join(self._parts).removesuffix("\r")
                self._parts = []
                if self._cut_line(last):
                    raise IncompleteReply(f"the reply ends in the middle of a line: "
                                          f"{shown(last[:80])}", hint=_CUT_HINT)
                self._line(last)
            self._close()
        except SparkPairError:
            raise
        except Exception as exc:
            raise ParseError(f"could not parse the diff: {type(exc).__name__}: {exc}") from exc
        self._closed = True
        return self._take()

    def operations(self) -> list[Operation]:
        return list(self._ops)

    # ---- the Builder the envelope reader drives ----------------------------------------------

    @property
    def open_hunk(self) -> Hunk | None:
        return self._hunk

    @property
    def in_file(self) -> bool:
        return self._file is not None

    def begin_file(self, old: str, new: str) -> None:
        self._end_file()
        self._begin(_File(old=old, new=new))

    def move_to(self, path: str) -> bool:
        f = self._file
        if f is None or f.index is not None:
            return False
        f.rename_from, f.rename_to = f.old, path
        return True

    def start_hunk(self, hunk: Hunk) -> None:
        self._start_hunk(hunk, counted=False)

    def add_line(self, line: str) -> None:
        self._add(line)

    def end_file(self) -> None:
        self._end_file()

    # ---- events --------------------------------------------------------------------------------

    def _take(self) -> list[ParseEvent]:
        out, self._out = self._out, []
        return out

    def _kind(self, f: _File) -> OpKind:
        if f.created or f.old == DEV_NULL:
            return OpKind.CREATE
        if f.deleted or f.new == DEV_NULL:
            return OpKind.DELETE
        src, dst = self._names(f)
        return OpKind.RENAME if dst and src != dst else OpKind.MODIFY

    def _names(self, f: _File) -> tuple[str, str | None]:
        src = f.rename_from or (f.old if f.old not in (None, DEV_NULL) else f.new) or ""
        dst = f.rename_to or (f.new if f.new not in (None, DEV_NULL) else None)
        return src, dst

    def _begin(self, f: _File) -> None:
        self._end_file()
        f.hunks = []
        self._file = f

    def _announce(self, f: _File) -> int:
        """Give the file its operation index and say so (once)."""
        if f.index is None:
            kind = self._kind(f)
            src, dst = self._names(f)
            path = dst if kind is OpKind.CREATE else src
            if not path:
                raise ParseError("the diff has changes for a file whose name could not be read",
                                 hint=_ODD_HINT)
            f.index = self._count
            self._count += 1
            self._out.append(FileStarted(f.index, kind, path,
                                         dst if kind is OpKind.RENAME else None))
        return f.index

    def _start_hunk(self, hunk: Hunk, counted: bool = True) -> None:
        if self._file is None:
            return
        self._end_hunk()
        assert self._file.hunks is not None
        self._file.hunks.append(hunk)
        self._hunk = hunk
        counted = counted and hunk.old_len is not None and hunk.new_len is not None
        self._left = [hunk.old_len, hunk.new_len] if counted else None  # type: ignore[list-item]

    def _add(self, line: str) -> None:
        h, f = self._hunk, self._file
        assert h is not None and f is not None
        if line[:1] == "\\":
            prev = h.lines[-1][:1] if h.lines else " "
            if prev in (" ", "-"):
                h.no_newline_old = True
            if prev in (" ", "+"):
                h.no_newline_new = True
            return
        if not line.isascii():
            line = written_line(line, f.new or f.old or "")
        h.lines.append(line)
        m = line[:1]
        left = self._left
        if left is not None:
            if m in (" ", "-"):
                left[0] -= 1
            if m in (" ", "+"):
                left[1] -= 1
            if left[0] < 0 or left[1] < 0:
                self._left = None  # the counts were wrong: stop trusting them
                self._overrun = True
        if self._overrun and self._over is None and m in ("+", "-"):
            self._over = line
        index = self._hunk_index
        if index is None:
            op_index = self._announce(f)
            index = self._hunk_index = f.shown_hunks
            f.shown_hunks += 1
            self._out.append(HunkStarted(op_index, index, h.header))
        self._out.append(LineAdded(f.index, index, line))  # type: ignore[arg-type]

    def _end_hunk(self) -> None:
        h, left = self._hunk, self._left
        if h is not None and h.lines and (self._overrun or (left is not None and max(left) > 0)):
            h.loose = (Loose.RECOUNTED,)  # its counts were wrong: its lines were counted
        self._hunk = None
        self._hunk_index = None
        self._left = None
        self._over = None
        self._overrun = False

    def _check_end(self, nxt: str | None) -> None:
        """The open hunk ends at `nxt` (None: the end of the reply), which is not a new hunk or
        file: refuse when the hunk's text and its `@@` counts disagree."""
        h, f = self._hunk, self._file
        if h is None or f is None:
            return
        where = f"the hunk {_header_text(h)} of {self._shown_name()}"
        # the closing fence, or the end of a whole reply after a context line (which the file
        # must hold): the hunk ends here and its counts were wrong (recounted)
        closed = is_fence(nxt) if nxt is not None else h.lines[-1:] != [] and (
            h.lines[-1][:1] == " " or not h.lines[-1])
        if self._over is not None and not closed:
            raise ParseError(f"{where} goes on after its @@ line counts were met with a line "
                             f"that would be written ({shown(self._over[:80])}) and no new hunk "
                             "or file follows: wrong counts or stray lines", hint=_ODD_HINT)
        left = self._left
        if self._over is not None or left is None or max(left) <= 0:
            return
        if nxt is None:
            # on a context line, a line or two short, one side at most one: miscounted (a reply
            # cut between two changes of a hunk leaves both sides short by more)
            if closed and min(left) <= 1 and max(left) <= ENDS_SHORT:
                return
            raise IncompleteReply(f"the reply ends inside {where}: its @@ line promised "
                                  f"{h.old_len} old and {h.new_len} new lines, "
                                  f"{(h.old_len or 0) - left[0]} and "
                                  f"{(h.new_len or 0) - left[1]} arrived",
                                  hint=_CUT_HINT)
        if not is_fence(nxt):
            raise ParseError(f"{where} has a line without a ' ', '-' or '+' marker before its "
                             f"@@ line counts were met: {shown(nxt[:80])} (a context line that "
                             "lost its leading space?)", hint=_ODD_HINT)

    def _cut_line(self, last: str) -> bool:
        """Whether the reply's last line, without its newline, may be a header cut short."""
        if last.startswith(_HEADERS):
            return True
        if self._env is not None:
            return last.startswith("***") and last.strip() != "*** End Patch"
        f = self._file
        return (f is not None and self._hunk is None and last.startswith(_FILE_HEADERS)
                and not _whole_header(f, last))

    def _shown_name(self) -> str:
        return self._shown_name_of(self._file)

    def _shown_name_of(self, f: _File | None) -> str:
        if f is None:
            return "?"
        src, dst = self._names(f)
        return shown((dst if self._kind(f) is OpKind.CREATE else src) or dst or "?")

    def _end_file(self) -> None:
        self._end_hunk()
        f, self._file = self._file, None
        if f is None:
            return
        op = self._build(f)
        if op is None:
            return
        index = self._announce(f)
        self._ops.append(op)
        self._out.append(FileFinished(index, op))

    def _build(self, f: _File) -> Operation | None:
        _check_moves(f, self._shown_name_of(f))
        clash = _disagreement(f, f.pair)
        if clash is not None:
            raise ParseError(f"the diff for {self._shown_name_of(f)}: {clash}",
                             hint=_CLASH_HINT)
        if f.copied is not None:
            raise ParseError(f"the reply copies {shown(f.copied)} to "
                             f"{shown(f.rename_to or f.new or '?')}: copies are not applied",
                             hint="nothing was written; ask for the new file as a created "
                                  "file instead")
        kind = self._kind(f)
        src, dst = self._names(f)
        hunks = [h for h in f.hunks or [] if h.lines]
        if f.binary and kind is not OpKind.DELETE:
            raise ParseError(f"binary patches are not supported: the reply changes "
                             f"{shown(dst or src)} as a binary file",
                             hint="nothing was written; change binary files yourself")
        if kind is OpKind.CREATE:
            if not dst:
                return None
            if any(ln[:1] == "-" for h in hunks for ln in h.lines):
                raise ParseError(f"the new file {shown(dst)} has a removed ('-') line",
                                 hint=_ODD_HINT)
            lines = [ln for h in hunks for ln in h.new_lines]
            nonl = bool(hunks) and hunks[-1].no_newline_new
            content = "\n".join(lines) + ("\n" if lines and not nonl else "")
            return Create(dst, content)
        if not src:
            return None
        if kind is OpKind.DELETE:
            if any(ln[:1] == "+" for h in hunks for ln in h.lines):
                raise ParseError(f"the deleted file {shown(src)} has an added ('+') line",
                                 hint=_ODD_HINT)
            return Delete(src, lines=[ln for h in hunks for ln in h.old_lines] if hunks
                          else None, binary=f.binary)
        if kind is OpKind.RENAME:
            return Rename(src, dst or src, hunks)
        if not hunks:
            return None
        return Modify(src, hunks)

    # ---- lines ---------------------------------------------------------------------------------

    def _close(self) -> None:
        if self._env is not None:
            raise IncompleteReply("the reply ends inside a '*** Begin Patch' envelope (no "
                                  "'*** End Patch')", hint=_CUT_HINT)
        if any(ln.startswith("--- ") for ln in self._held) and not self._fits(self._held):
            raise IncompleteReply(f"the reply ends with a file header line: "
                                  f"{shown(self._held[-1][:80])}", hint=_CUT_HINT)
        self._resolve(None)
        if self._hunk is not None and not self._hunk.lines and self._file is not None:
            raise IncompleteReply(f"the reply ends after the hunk header "
                                  f"{_header_text(self._hunk)} of {self._shown_name()}, "
                                  "before its lines", hint=_CUT_HINT)
        self._check_end(None)
        f = self._file
        if f is not None and not any(h.lines for h in f.hunks or ()):
            kind = self._kind(f)
            if kind is OpKind.MODIFY or (f.headed and kind is not OpKind.DELETE):
                raise IncompleteReply(f"the reply ends after the header of "
                                      f"{self._shown_name()}, before its changes",
                                      hint=_CUT_HINT)
        self._end_file()

    def _line(self, line: str) -> None:
        if self._env is not None:
            if not envelope.line(self, self._env, line):
                self._env = None
            return
        if self._held and self._resolve(line):
            return
        if self._hunk is not None:
            if self._hunk_line(line):
                return
            structural = line.startswith(("@@", "--- ", "diff ", "\\"))
            if not structural:
                self._check_end(line)
            self._end_hunk()
            if not structural:
                self._end_file()  # prose or a fence after the last hunk
        self._outside(line)

    def _hunk_line(self, line: str) -> bool:
        """Take a line into the current hunk; False when the hunk is over."""
        m = line[:1]
        if line.strip() == "":
            if self._left is not None and min(self._left) > 0 and not self._held:
                self._add(line or " ")  # the counts expect more lines: a blank is context
            else:
                self._held.append(line)  # context, if more hunk lines follow
            return True
        if m == "\\":
            self._add(line)
            return True
        if line.startswith("--- ") and not (self._left is not None and self._left[0] > 0
                                             and self._left[1] == 0):
            self._held.append(line)
            return True
        if m in (" ", "+", "-"):
            self._add(line)
            return True
        return False

    def _resolve(self, nxt: str | None) -> bool:
        """Decide what held lines were, given the next line; True when `nxt` was consumed."""
        held, self._held = self._held, []
        if not held:
            return False
        if nxt is not None and not nxt.strip() and not any(ln.strip() for ln in held):
            self._held = held + [nxt]  # a run of blank lines: what follows it decides
            return True
        dashes = [i for i, ln in enumerate(held) if ln.startswith("--- ")]
        if dashes and nxt is not None and nxt.startswith("+++ ") and dashes[-1] == len(held) - 1:
            body = held[:-1]
            if self._left is not None and self._fits(body + [held[-1], nxt]):
                # counts say these are hunk lines; wait one more line to be sure
                self._held = held + [nxt]
                return True
            self._flush(self._untrailed(body))
            self._header(held[-1], nxt)
            return True
        if len(held) >= 2 and held[-1].startswith("+++ ") and held[-2].startswith("--- "):
            # a '---'/'+++' pair that the counts allowed as lines: a header only if '@@' follows
            exact = self._fits(held) and self._after(held) == [0, 0]
            if nxt is not None and nxt.startswith("@@") and (
                    not exact or _header_pair(held[-2], held[-1])):
                self._flush(held[:-2])
                self._header(held[-2], held[-1])
                return False
            self._flush(held)
            return False
        if (nxt is not None and nxt.startswith("--- ") and self._hunk is not None and not (
                self._left is not None and self._left[0] > 0 and self._left[1] == 0)):
            self._held = held  # the next file's header may follow: its line decides the blanks
            return False
        content = nxt is not None and (nxt[:1] in (" ", "+", "-", "\\") or nxt.strip() == "")
        if content and self._hunk is not None:
            self._flush(held)
            return False
        # the hunk ends here: blanks were trailing, '--- ' lines were removed lines
        trail = len(held)
        while trail and held[trail - 1].strip() == "":
            trail -= 1
        if self._hunk is not None:
            self._flush(held[:trail])
        return False

    def _untrailed(self, lines: list[str]) -> list[str]:
        """`lines` before the next file's header, without blank lines after the hunk's end:
        kept only where the hunk's counts need them (a context line that lost its space)."""
        trail = len(lines)
        while trail and lines[trail - 1].strip() == "":
            trail -= 1
        if trail == len(lines) or (self._left is not None and self._after(lines) == [0, 0]):
            return lines
        if self._left is None or self._after(lines[:trail]) == [0, 0]:
            return lines[:trail]
        return lines

    def _fits(self, lines: list[str]) -> bool:
        after = self._after(lines)
        return after is not None and min(after) >= 0

    def _after(self, lines: list[str]) -> list[int] | None:
        if self._left is None:
            return None
        old, new = self._left
        for ln in lines:
            m = ln[:1] if ln.strip() else " "
            old -= m in (" ", "-")
            new -= m in (" ", "+")
        return [old, new]

    def _flush(self, lines: list[str]) -> None:
        for ln in lines:
            if self._hunk is None:
                return
            self._add(ln if ln.strip() else " ")

    def _header(self, minus: str, plus: str) -> None:
        old, new = clean_path(minus[4:]), clean_path(plus[4:])
        pair = _strip_prefixes(old, new)
        self._end_hunk()
        f = self._file
        if f is not None and not f.headed and not f.hunks and f.index is None and (
                _same_file(f, pair, self._shown_name_of)):
            f.old, f.new = old, new  # the ---/+++ lines after a 'diff --git' header
        else:
            self._end_file()
            self._begin(_File(old=old, new=new))
        assert self._file is not None
        self._file.headed = True
        self._file.pair = pair
        self._fix_prefixes()

    def _fix_prefixes(self) -> None:
        f = self._file
        if f is not None and not f.rename_from:
            f.old, f.new = _strip_prefixes(f.old, f.new)

    def _outside(self, line: str) -> None:
        f = self._file
        if line.strip() == "*** Begin Patch":
            self._end_file()
            self._env = envelope.EnvelopeState()
            return
        if line.startswith("diff --git ") or line.startswith("diff -"):
            self._end_file()
            old, new = _git_paths(line)
            self._begin(_File(old=old, new=new))
            self._fix_prefixes()
            assert self._file is not None
            self._file.git = (self._file.old, self._file.new)
            return
        if line.startswith("--- "):
            self._held = [line]
            return
        if line.startswith("@@"):
            hunk = parse_hunk_header(line)
            if f is not None:
                self._start_hunk(hunk)
            elif self._ops and hunk.old_start is not None:
                raise ParseError(f"the reply has a hunk ({_header_text(hunk)}) without a file "
                                 "header after its earlier files: it does not say which file "
                                 "it changes", hint="nothing was written; regenerate the turn "
                                 "with a ---/+++ header before each file's hunks")
            return
        if f is None:
            return
        if f.headed and not f.hunks and line[:1] in (" ", "+", "-") and line.strip():
            self._start_hunk(Hunk(None, None, None, None))  # the model left out the '@@' line
            self._add(line)
            return
        if line.startswith("new file mode"):
            f.created = True
        elif line.startswith("deleted file mode"):
            f.deleted = True
        elif line.startswith("rename from "):
            f.rename_from = clean_path(line[12:])
            f.moves += ("rename from",)
        elif line.startswith("rename to "):
            f.rename_to = clean_path(line[10:])
            f.moves += ("rename to",)
        elif line.startswith(("copy from ", "copy to ")):
            f.moves += ("copy from" if line.startswith("copy from ") else "copy to",)
            if line.startswith("copy from "):
                f.copied = clean_path(line[10:])
        elif line.startswith("+++ "):  # without its '---' line
            new = clean_path(line[4:])
            if f.git is not None and new.startswith("b/") and _key(new[2:]) == _key(f.git[1]):
                new = new[2:]
            f.new, f.pair = new, (f.pair[0] if f.pair else None, new)
        elif line.startswith(_BINARY):
            f.binary = True  # refused when the operation is built, unless it is a delete
        elif line.startswith(_EXTENDED) or not line.strip():
            pass
        else:
            self._end_file()  # prose after a header-only file (a pure rename, a delete)


def _header_text(h: Hunk) -> str:
    return f"@@ -{h.old_start},{h.old_len} +{h.new_start},{h.new_len} @@"


def parse_diff(text: str) -> list[Operation]:
    """Parse a whole reply at once."""
    p = DiffParser()
    p.feed(text)
    p.close()
    return p.operations()
