"""The system prompt, file context within a token budget, history and follow-up diffs."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

from ..base.errors import SparkPairError
from ..protocol.metrics import estimate_tokens, tokens_for_chars
from ..protocol.request import Message
from .files import read_text

SYSTEM_PROMPT = """\
You are a pair programmer editing files in a git repository.

Rules:
- Only modify the files explicitly requested. Do not touch any other file.
- Never delete or rename a file unless the instruction asks for it.
- Output only a unified diff, nothing else: no prose, no explanations, no code fences.
- Each file starts with `--- a/PATH` and `+++ b/PATH` (use `--- /dev/null` to create a file and
  `+++ /dev/null` to delete one); changes go in `@@ -l,n +l,n @@` hunks with 3 lines of
  unchanged context before and after each change, copied exactly from the file.
- Line numbers shown in the context as `N| ` are not part of the file; never copy them.
- If the request cannot be done as a diff, output nothing.
"""

MAX_HITS = 200  # relevant lines per file, at most
RESERVE = 1500  # tokens kept for each later file while a file is fitted (less for a smaller one)
REGION_RADIUS = (40, 20, 8, 3, 0)  # lines around a hit, tried in order until the region fits
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
_STOP = frozenset({"this", "that", "with", "from", "into", "make", "file", "files", "function",
                   "change", "please", "should", "would", "could", "when", "then", "also",
                   "them", "there", "where", "which", "what", "have", "only", "each", "every",
                   "the", "and", "for", "fix", "add", "use", "all", "any", "not", "but", "can",
                   "new", "now", "too", "its", "out", "via", "one", "two", "are", "was", "you"})


Reader = Callable[[str], "str | None"]  # rel -> text (None: missing); raises SparkPairError


def _reader(root: Path, max_bytes: int | None = None) -> Reader:
    if max_bytes is None:
        return lambda rel: read_text(root, rel)
    return lambda rel: read_text(root, rel, max_bytes=max_bytes)


class Context:
    """File context for one turn, and what went in and what did not (a plain class: a
    one-shot `run` builds it before it loads anything else)."""

    def __init__(self) -> None:
        self.text = ""
        self.tokens = 0
        self.whole: list[str] = []  # files sent in full
        self.partial: dict[str, list[tuple[int, int]]] = {}  # 1-based regions
        self.missing: list[str] = []  # requested, not on disk (may be created)
        self.omitted: dict[str, str] = {}  # path -> why it was left out
        self.texts: dict[str, str | None] = {}  # full text of every shown file
        self.file_tokens: dict[str, int] = {}  # path -> tokens its block took
        self.blocks: dict[str, str] = {}  # path -> its block, the most relevant first
        self.map = ""  # the repository map ('' when none)

    @property
    def shown(self) -> list[str]:
        return [*self.whole, *self.partial, *self.missing]

    def summary(self) -> str:
        parts = [f"{len(self.whole)} whole", f"{len(self.partial)} partial"]
        if self.missing:
            parts.append(f"{len(self.missing)} new")
        if self.omitted:
            parts.append(f"{len(self.omitted)} omitted")
        return f"context: {', '.join(parts)}, ~{self.tokens} tokens"


def _whole_block(rel: str, text: str) -> str:
    body = text if text.endswith("\n") or not text else text + "\n"
    return f"### {rel}\n```\n{body}```\n"


def _region_head(rel: str) -> str:
    """A cut file's head: neither its spans nor its length (each line shows its number; the
    length follows the block), so a block whose first regions are as last time repeats last
    time's block that far, whatever changed below (sentorder)."""
    return f"### {rel} (parts, numbered; other lines omitted)\n```\n"


def _region_tail(n_lines: int) -> str:
    return f"```\n({n_lines} lines in all)\n"


def _region_block(rel: str, lines: list[str], regions: list[tuple[int, int]]) -> str:
    out = [_region_head(rel)]
    width = len(str(len(lines)))
    for i, (a, b) in enumerate(regions):
        if i:
            out.append("...\n")
        out.extend(f"{n:>{width}}| {lines[n - 1]}\n" for n in range(a, b + 1))
    out.append(_region_tail(len(lines)))
    return "".join(out)


def query_words(query: str) -> set[str]:
    """Identifier-like words of an instruction, used to find relevant regions."""
    return {w for w in _WORD.findall(query) if w.lower() not in _STOP}


def _hits(rel: str, text: str, lines: list[str], words: set[str],
          focus: Iterable[int]) -> tuple[list[int], list[int]]:
    """Relevant line numbers: (first) the AI comments, the file's head (where imports go), the
    end of a test file (where a new test goes), then the focus lines in the order given (the
    most relevant first); (then) the other lines naming words of the instruction, those naming
the most of them first."""
    from .aicomments import find_ai_comments
    from .layout import is_test

    first = dict.fromkeys(c.line for c in find_ai_comments(rel, text))
    if lines:
        first[1] = None
        if is_test(rel):
            first[len(lines)] = None
    first.update(dict.fromkeys(h for h in focus if 1 <= h <= len(lines)))
    then: list[int] = []
    if words:
        pattern = re.compile("|".join(re.escape(w) for w in sorted(words, key=len, reverse=True)))
        held = []
        for n, line in enumerate(lines, 1):
            found = pattern.findall(line) if n not in first else None
            if found:
                held.append((-len(set(found)), n))
        then = [n for _, n in sorted(held)[:MAX_HITS]]  # the most of the words first
    return list(first)[:MAX_HITS], then


def _merge(spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def _regions(hits: Iterable[int], radius: int, n_lines: int) -> list[tuple[int, int]]:
    return _merge((max(1, h - radius), min(n_lines, h + radius)) for h in hits)


class _Sizer:
    """The tokens of a region block of one file, from its lines' lengths (no block built)."""

    def __init__(self, rel: str, lines: list[str]) -> None:
        self.rel, self.n = rel, len(lines)
        width = len(str(len(lines)))
        self.upto = [0]
        for line in lines:
            self.upto.append(self.upto[-1] + width + 3 + len(line))

    def tokens(self, regions: list[tuple[int, int]]) -> int:
        ends = len(_region_head(self.rel)) + len(_region_tail(self.n))
        body = sum(self.upto[b] - self.upto[a - 1] for a, b in regions)
        return tokens_for_chars(ends + body + 4 * max(0, len(regions) - 1))


def _fit_regions(rel: str, lines: list[str], first: list[int], then: list[int], budget: int
                 ) -> tuple[str, list[tuple[int, int]]]:
    """The region block of this file that fits `budget` tokens ('' if none): the regions around
    `first` as wide as they fit (when even the narrowest do not, the most relevant of them),
    then those around `then` that still fit."""
    if not lines or not first:
        return "", []
    n = len(lines)
    size = _Sizer(rel, lines)
    for radius in REGION_RADIUS:
        regions = _regions(first, radius, n)
        if size.tokens(regions) <= budget:
            break
    else:
        lo, hi = 0, len(first)
        while lo < hi:  # the most of the first lines that fit with a little around them
            mid = (lo + hi + 1) // 2
            if size.tokens(_regions(first[:mid], 3, n)) <= budget:
                lo = mid
            else:
                hi = mid - 1
        regions = _regions(first[:max(lo, 1)], 3 if lo else 0, n)
        while size.tokens(regions) > budget:
            a, b = regions[0]
            if b == a:
                return "", []
            regions = [(a, a + (b - a) // 2)]  # halve the one region
    if then:
        for radius in REGION_RADIUS:
            wider = _merge([*regions, *_regions(then, radius, n)])
            if size.tokens(wider) <= budget:
                regions = wider
                break
        else:
            for h in then:  # one by one, narrow, while they fit
                wider = _merge([*regions, (max(1, h - 3), min(n, h + 3))])
                if size.tokens(wider) <= budget:
                    regions = wider
    return _region_block(rel, lines, regions), regions


def _weight(rank: int) -> float:
    """A file's claim on the budget by its rank (the first ones matter most)."""
    return 1.0 / (1 + rank)


def build_context(root: Path, files: Sequence[str], budget_tokens: int, *, query: str = "",
                  focus: Mapping[str, Iterable[int]] | None = None,
                  read: Reader | None = None) -> Context:
    """Context for `files` within `budget_tokens` (never over it).

    Files come first to last in the order given (the first ones matter most): each goes in
    whole when it fits in what is left after keeping a little for the files after it. A file
    too large for that is sent as regions, with line numbers: around its AI comments, its head
    (imports), the end of a test file (where a new test goes) and the lines listed in `focus`
    (e.g. a definition, lines changed on disk; the most relevant first), then, as far as they
    fit, around the lines that mention words of `query`. What the files leave of the budget
    then widens the cut ones. Unreadable files are reported in `omitted`. `read(rel)` gives a
    file's text (default: `read_text` from disk).
    """
    read = read or _reader(root)
    ctx = Context()
    texts: dict[str, str] = {}
    for rel in dict.fromkeys(files):
        try:
            text = read(rel)
        except SparkPairError as exc:
            ctx.omitted[rel] = exc.message
            continue
        if text is None:
            block = f"### {rel} (does not exist yet)\n"
            if estimate_tokens(block) <= budget_tokens - ctx.tokens:
                ctx.missing.append(rel)
                ctx.texts[rel] = None
                ctx.tokens += estimate_tokens(block)
                texts[rel] = block
            else:
                ctx.omitted[rel] = "over the token budget"
            continue
        texts[rel] = text
    pending = [r for r in texts if r not in ctx.missing]
    blocks: dict[str, str] = {r: texts[r] for r in ctx.missing}
    words = query_words(query)
    left = budget_tokens - ctx.tokens
    # In the order given (a person's files first, then the chosen ones, best first): whole when
    # it fits in what is left once a little is kept for each file after it (RESERVE, its size
    # if smaller, an even share of a tight budget if smaller); else the regions that fit in its
    # fair share of what is left.
    sizes = {r: estimate_tokens(_whole_block(r, texts[r])) for r in pending}
    least = {r: min(sizes[r], RESERVE, left // max(1, len(pending))) for r in pending}
    keep = sum(least.values())
    hits: dict[str, tuple[list[int], list[int]]] = {}
    for i, rel in enumerate(pending):
        keep -= least[rel]
        room = left - keep
        text = texts[rel]
        block = _whole_block(rel, text)
        if sizes[rel] <= room:
            ctx.whole.append(rel)
        else:
            weights = [_weight(j) for j in range(i, len(pending))]
            share = int(left * weights[0] / sum(weights))
            lines = text.splitlines()
            hits[rel] = _hits(rel, text, lines, words, (focus or {}).get(rel, ()))
            block, regions = _fit_regions(rel, lines, *hits[rel], share)
            if not block:
                ctx.omitted[rel] = "over the token budget"
                continue
            ctx.partial[rel] = regions
        ctx.texts[rel] = text
        blocks[rel] = block
        left -= estimate_tokens(block)
    # what the budget has left widens the files cut into regions, in the order given
    for rel in [r for r in pending if r in ctx.partial]:
        if left <= 0:
            break
        room = left + estimate_tokens(blocks[rel])
        if sizes[rel] <= room:
            blocks[rel] = _whole_block(rel, texts[rel])
            del ctx.partial[rel]
            ctx.whole.append(rel)
        else:
            block, regions = _fit_regions(rel, texts[rel].splitlines(), *hits[rel], room)
            if estimate_tokens(block) <= estimate_tokens(blocks[rel]):
                continue
            blocks[rel], ctx.partial[rel] = block, regions
        left = room - estimate_tokens(blocks[rel])
    ctx.blocks = {r: blocks[r] for r in texts if r in blocks}
    ctx.text = "".join(ctx.blocks.values())
    ctx.file_tokens = {r: estimate_tokens(b) for r, b in blocks.items()}
    ctx.tokens = sum(ctx.file_tokens.values())
    return ctx


INSTRUCTION = "Instruction:\n"  # what a user message ends with, before the instruction


def user_message(instruction: str, context: Context, changes: str = "") -> str:
    """The user turn: the file context, `changes` (the diffs of files changed on disk since the
    last reply), the repository map (it changes with the instruction's words more often than
    the files do), then the instruction (what changes most goes last: workspace.sentorder)."""
    head = "Files:\n\n" + context.text + "\n" if context.text else ""
    if changes:
        head += changes + "\n"
    if context.map:
        head += context.map + "\n"
    return f"{head}{INSTRUCTION}{instruction.strip()}\n"


# --- history -------------------------------------------------------------------------------
class Turn:
    __slots__ = ("instruction", "sent", "reply")

    def __init__(self, instruction: str, sent: str, reply: str) -> None:
        self.instruction = instruction  # what the user asked (no file context)
        self.sent = sent  # the full user message as sent
        self.reply = reply


class History:
    """The last `max_turns` turns (user text + assistant reply)."""

    def __init__(self, max_turns: int = 6) -> None:
        self.max_turns = max(0, max_turns)
        self.turns: list[Turn] = []

    def add(self, instruction: str, reply: str, *, sent: str | None = None) -> None:
        self.turns.append(Turn(instruction, sent if sent is not None else instruction, reply))
        if len(self.turns) > self.max_turns:
            del self.turns[: len(self.turns) - self.max_turns]

    def messages(self, *, full: bool = False) -> list[Message]:
        """Alternating user/assistant messages; `full` uses the user messages as sent."""
        out: list[Message] = []
        for t in self.turns:
            out.append(Message("user", t.sent if full else t.instruction))
            out.append(Message("assistant", t.reply))
        return out

    def clear(self) -> None:
        self.turns.clear()

    def __len__(self) -> int:
        return len(self.turns)


# --- follow-up diffs -----------------------------------------------------------------------
class ContextSnapshot:
    """The text of each file as the model last saw it (None: it did not exist)."""

    def __init__(self) -> None:
        self.texts: dict[str, str | None] = {}

    def update(self, texts: Mapping[str, str | None]) -> None:
        self.texts.update(texts)

    def __contains__(self, rel: object) -> bool:
        return rel in self.texts

    def get(self, rel: str) -> str | None:
        return self.texts.get(rel)

    def paths(self) -> list[str]:
        return sorted(self.texts)

    def clear(self) -> None:
        self.texts.clear()


def file_diff(rel: str, old: str | None, new: str | None) -> str:
    """A unified diff (3 lines of context) from old to new; '' when equal."""
    import difflib

    if old == new:
        return ""
    a = (old or "").splitlines(keepends=True)
    b = (new or "").splitlines(keepends=True)
    for lines in (a, b):
        if lines and not lines[-1].endswith("\n"):
            lines[-1] += "\n\\ No newline at end of file\n"
    src = "/dev/null" if old is None else f"a/{rel}"
    dst = "/dev/null" if new is None else f"b/{rel}"
    return "".join(difflib.unified_diff(a, b, src, dst, n=3))


def changed_lines(old: str | None, new: str | None) -> list[int]:
    """1-based line numbers in `new` that differ from `old` (for context focus)."""
    import difflib

    a, b = (old or "").splitlines(), (new or "").splitlines()
    out: list[int] = []
    for tag, _i1, _i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag != "equal":
            out.extend(range(j1 + 1, max(j2, j1 + 1) + 1))
    return [n for n in out if n <= len(b)]


def followup_input(root: Path, changed_files: Iterable[str], snapshots: ContextSnapshot,
                   *, max_bytes: int | None = None, read: Reader | None = None) -> str:
    """What changed on disk since the model last saw each file, as unified diffs against its
    snapshot ('' when nothing it saw changed). The snapshot is moved on to the current text.
    `read(rel)` gives a file's text (default: `read_text` from disk, up to `max_bytes`)."""
    read = read or _reader(root, max_bytes)
    parts: list[str] = []
    for rel in sorted(set(changed_files)):
        if rel not in snapshots:
            continue  # the model never saw it
        try:
            now = read(rel)
        except SparkPairError as exc:
            parts.append(f"# {rel}: changed on disk, not shown ({exc.message})\n")
            continue
        diff = file_diff(rel, snapshots.get(rel), now)
        if diff:
            parts.append(diff)
        snapshots.update({rel: now})
    if not parts:
        return ""
    return ("Files changed on disk since your last reply (unified diffs against what you "
            "saw):\n\n" + "".join(parts))
