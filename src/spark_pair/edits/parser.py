"""Incremental unified-diff parser: feed text deltas, get structure events as lines complete.

Work is linear in the input: only the unfinished line is kept between feeds, and each complete
line is looked at once (a `--- ` line or a blank line may wait for the next line to decide).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import ParseError
from .ops import Create, Delete, Hunk, Modify, Operation, Rename
from . import envelope

_HUNK_RE = re.compile(r"^@@+ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@+ ?(.*)$")
_STAMP_RE = re.compile(r"\s+\d{4}-\d\d-\d\d[ T]\d\d:\d\d(:\d\d(\.\d+)?)?(\s*[+-]\d{4})?\s*$")
_EXTENDED = ("index ", "old mode ", "new mode ", "similarity index ", "dissimilarity index ",
             "copy from ", "copy to ", "Binary files ", "GIT binary patch")
DEV_NULL = "/dev/null"


@dataclass(slots=True)
class FileStarted:
    index: int
    op_kind: str  # modify | create | delete | rename
    path: str
    new_path: str | None = None


@dataclass(slots=True)
class HunkStarted:
    file_index: int
    hunk: Hunk


@dataclass(slots=True)
class LineAdded:
    file_index: int
    hunk_index: int
    line: str


@dataclass(slots=True)
class FileFinished:
    index: int
    op: Operation


ParseEvent = FileStarted | HunkStarted | LineAdded | FileFinished


def clean_path(raw: str) -> str:
    """A header's path without timestamp, quotes or surrounding blanks."""
    path = raw.split("\t", 1)[0]
    path = _STAMP_RE.sub("", path).strip()
    if len(path) >= 2 and path[0] == path[-1] == '"':
        path = path[1:-1]
    return path


def _strip_prefixes(old: str | None, new: str | None) -> tuple[str | None, str | None]:
    def strip(p: str | None, pre: str) -> str | None:
        return p[2:] if p and p.startswith(pre) and len(p) > 2 else p
    if old == DEV_NULL or new == DEV_NULL:
        return strip(strip(old, "a/"), "b/"), strip(strip(new, "b/"), "a/")
    if old and new and old.startswith("a/") and new.startswith("b/"):
        return old[2:], new[2:]
    return old, new


def parse_hunk_header(line: str) -> Hunk:
    m = _HUNK_RE.match(line)
    if m:
        a, b, c, d, section = m.groups()
        return Hunk(int(a), int(b) if b is not None else 1, int(c), int(d) if d is not None else 1,
                    section=section.strip())
    rest = line.lstrip("@")
    section = rest.split("@@", 1)[1].strip() if "@@" in rest else ""
    return Hunk(None, None, None, None, section=section)


@dataclass(slots=True)
class _File:
    old: str | None = None
    new: str | None = None
    created: bool = False
    deleted: bool = False
    rename_from: str | None = None
    rename_to: str | None = None
    hunks: list[Hunk] | None = None
    started: bool = False
    create_lines: list[str] | None = None  # envelope "Add File" content
    headed: bool = False  # saw the ---/+++ pair


class DiffParser:
    """Feed deltas with `feed`, then `close()`; `operations()` gives the parsed operations."""

    def __init__(self) -> None:
        self._parts: list[str] = []  # the unfinished line, in pieces
        self._ops: list[Operation] = []
        self._count = 0  # files started
        self._file: _File | None = None
        self._hunk: Hunk | None = None
        self._left: list[int] | None = None  # [old, new] lines still due by the hunk's counts
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
        except ParseError:
            raise
        except Exception as exc:  # a parser bug must not escape as a traceback
            raise ParseError(f"could not parse the diff: {type(exc).__name__}: {exc}") from exc
        return self._take()

    def close(self) -> list[ParseEvent]:
        if self._closed:
            return []
        try:
            if self._parts:
                last = "".join(self._parts).removesuffix("\r")
                self._parts = []
                self._line(last)
            self._resolve(None)
            self._end_file()
        except Exception as exc:
            raise ParseError(f"could not parse the diff: {type(exc).__name__}: {exc}") from exc
        self._closed = True
        return self._take()

    def operations(self) -> list[Operation]:
        return list(self._ops)

    # ---- events (also used by envelope) ----------------------------------------------------------

    def _take(self) -> list[ParseEvent]:
        out, self._out = self._out, []
        return out

    def _kind(self, f: _File) -> str:
        if f.created or f.old == DEV_NULL:
            return "create"
        if f.deleted or f.new == DEV_NULL:
            return "delete"
        src, dst = self._names(f)
        return "rename" if dst and src != dst else "modify"

    def _names(self, f: _File) -> tuple[str, str | None]:
        src = f.rename_from or (f.old if f.old not in (None, DEV_NULL) else f.new) or ""
        dst = f.rename_to or (f.new if f.new not in (None, DEV_NULL) else None)
        return src, dst

    def _begin(self, f: _File) -> None:
        self._end_file()
        f.hunks = []
        self._file = f

    def _announce(self) -> None:
        f = self._file
        if f is None or f.started:
            return
        f.started = True
        kind = self._kind(f)
        src, dst = self._names(f)
        path = dst if kind == "create" else src
        self._out.append(FileStarted(self._count, kind, path or "", dst if kind == "rename" else None))
        self._count += 1

    def _start_hunk(self, hunk: Hunk) -> None:
        if self._file is None:
            return
        self._announce()
        self._end_hunk()
        assert self._file.hunks is not None
        self._file.hunks.append(hunk)
        self._hunk = hunk
        counted = hunk.old_len is not None and hunk.new_len is not None
        self._left = [hunk.old_len, hunk.new_len] if counted else None  # type: ignore[list-item]
        self._out.append(HunkStarted(self._count - 1, hunk))

    def _add(self, line: str) -> None:
        h = self._hunk
        assert h is not None and self._file is not None
        if line[:1] == "\\":
            prev = h.lines[-1][:1] if h.lines else " "
            if prev in (" ", "-"):
                h.no_newline_old = True
            if prev in (" ", "+"):
                h.no_newline_new = True
            return
        h.lines.append(line)
        if self._left is not None:
            m = line[:1]
            if m in (" ", "-"):
                self._left[0] -= 1
            if m in (" ", "+"):
                self._left[1] -= 1
            if min(self._left) < 0:
                self._left = None  # the counts were wrong: stop trusting them
        self._out.append(LineAdded(self._count - 1, len(self._file.hunks or []) - 1, line))

    def _end_hunk(self) -> None:
        self._hunk = None
        self._left = None

    def _end_file(self) -> None:
        self._end_hunk()
        f, self._file = self._file, None
        if f is None:
            return
        op = self._build(f)
        if op is None:
            return
        self._announce_for(f)
        self._ops.append(op)
        self._out.append(FileFinished(self._count - 1, op))

    def _announce_for(self, f: _File) -> None:
        self._file = f
        self._announce()
        self._file = None

    def _build(self, f: _File) -> Operation | None:
        kind = self._kind(f)
        src, dst = self._names(f)
        hunks = [h for h in f.hunks or [] if h.lines]
        if kind == "create":
            if not dst:
                return None
            if f.create_lines is not None:
                lines = f.create_lines
                nonl = False
            else:
                lines = [ln for h in hunks for ln in h.new_lines]
                nonl = bool(hunks) and hunks[-1].no_newline_new
            content = "\n".join(lines) + ("\n" if lines and not nonl else "")
            return Create(dst, content)
        if not src:
            return None
        if kind == "delete":
            return Delete(src)
        if kind == "rename":
            return Rename(src, dst or src, hunks)
        if not hunks:
            return None
        return Modify(src, hunks)

    # ---- lines ---------------------------------------------------------------------------------

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
            self._end_hunk()
            if not (line.startswith("@@") or line.startswith("--- ") or line.startswith("diff ")
                    or line.startswith("\\")):
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
        dashes = [i for i, ln in enumerate(held) if ln.startswith("--- ")]
        if dashes and nxt is not None and nxt.startswith("+++ ") and dashes[-1] == len(held) - 1:
            body = held[:-1]
            if self._left is not None and self._fits(body + [held[-1], nxt]):
                # counts say these are hunk lines; wait one more line to be sure
                self._held = held + [nxt]
                return True
            self._flush(body)
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
        self._end_hunk()
        f = self._file
        if f is not None and not f.headed and not f.hunks and not f.started:
            f.old, f.new = old, new  # the ---/+++ lines after a 'diff --git' header
        else:
            self._end_file()
            self._begin(_File(old=old, new=new))
        assert self._file is not None
        self._file.headed = True
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
            return
        if line.startswith("--- "):
            self._held = [line]
            return
        if line.startswith("@@"):
            if f is not None:
                self._start_hunk(parse_hunk_header(line))
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
        elif line.startswith("rename to "):
            f.rename_to = clean_path(line[10:])
        elif line.startswith("+++ "):
            f.new = clean_path(line[4:])
        elif line.startswith(_EXTENDED) or not line.strip():
            pass
        else:
            self._end_file()  # prose after a header-only file (a pure rename, a delete)


def _header_pair(minus: str, plus: str) -> bool:
    """'--- a/x' + '+++ b/x' (or /dev/null on one side): a file header, whatever a hunk's
    counts say (models get counts wrong far more often than files hold such line pairs)."""
    old, new = minus[4:].split("\t")[0].strip(), plus[4:].split("\t")[0].strip()
    if DEV_NULL in (old, new):
        return (old == DEV_NULL) != (new == DEV_NULL)
    return old.startswith("a/") and new.startswith("b/") and old[2:] == new[2:]


def _git_paths(line: str) -> tuple[str | None, str | None]:
    rest = line.split(" ", 2)[2] if line.count(" ") >= 2 else ""
    if rest.startswith("a/") and " b/" in rest:
        old, new = rest.split(" b/", 1)
        return clean_path(old), "b/" + clean_path(new)
    parts = rest.split()
    if len(parts) == 2:
        return clean_path(parts[0]), clean_path(parts[1])
    return None, None


def parse_diff(text: str) -> list[Operation]:
    """Parse a whole reply at once."""
    p = DiffParser()
    p.feed(text)
    p.close()
    return p.operations()
