"""`Workspace`: the session's view of the working tree (context, history, follow-up diffs)."""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..edits.paths import read_regular
from ..protocol.request import Message, TurnRequest
from .filecache import Cached, FileCache
from .prompt import (
    SYSTEM_PROMPT,
    Context,
    ContextSnapshot,
    History,
    build_context,
    changed_lines,
    followup_input,
    user_message,
)
from .sentorder import SentOrder

if TYPE_CHECKING:  # the watcher needs asyncio
    from typing import Any

    from .autocontext import AutoContext, Plan
    from .look import LookedUp
    from .watcher import Watcher


class Prepared(namedtuple("Prepared", "tokens again_in_s missing")):
    """What `Workspace.prepare` found: each context file's token estimate, when to prepare
    again (a file changed too recently to be trusted by stat alone; None: no need), and the
    context files that do not exist on disk (deleted, or not created yet)."""

    __slots__ = ()
    tokens: dict[str, int]
    again_in_s: float | None
    missing: frozenset[str]


def limits_of(settings: Any) -> dict[str, Any]:
    """Workspace keyword arguments from the settings ([context] budget_tokens, [session]
    history_turns)."""
    out: dict[str, Any] = {}
    context = getattr(settings, "context", None)
    if getattr(context, "budget_tokens", None):
        out["budget_tokens"] = int(context.budget_tokens)  # type: ignore[union-attr]
    if getattr(context, "second_look", False) and getattr(context, "auto", False):
        from .look import LOOK_RULE

        out["system_prompt"] = SYSTEM_PROMPT + LOOK_RULE  # the model may ask once (NEED:)
    session = getattr(settings, "session", None)
    if getattr(session, "history_turns", None):
        out["history_turns"] = int(session.history_turns)  # type: ignore[union-attr]
    return out


class ContextFile(namedtuple("ContextFile", "path reason tokens shown regions",
                              defaults=((),))):
    """One file of a request's context: why it is there ("added" for one a person added), the
    tokens it took, how it was shown: "whole", "regions", "new" (not on disk yet) or
    "omitted: WHY", and for "regions" which lines ((first, last), 1-based)."""

    __slots__ = ()
    path: str
    reason: str
    tokens: int
    shown: str
    regions: tuple[tuple[int, int], ...]


class Workspace:
    """Builds each turn's request and remembers what the model has seen.

    `chained()` says whether the next request continues the previous response on a live
    connection (WS with `previous_response_id`): then a follow-up turn sends only the new
    instruction, the diffs of files changed on disk since the model saw them, and the files it
    has not seen yet; `history` carries the full earlier messages for a client that has to
    resend. Otherwise every turn sends fresh file context plus the trimmed history.

    The files a request shows come from `files`, a cache kept current by `prepare` (in a worker,
    when the context set or a file in it changes): `build_now` makes the request on the event
    loop from the cache when stat says nothing changed since it was read, else `build` (in a
    thread) reads again only the files that changed.
    """

    def __init__(self, root: Path, *, budget_tokens: int = 8000, history_turns: int = 6,
                 watcher: Watcher | None = None, chained: Callable[[], bool] | None = None,
                 max_tokens: int | None = None, temperature: float | None = None,
                 system_prompt: str = SYSTEM_PROMPT, files: FileCache | None = None,
                 auto: AutoContext | None = None) -> None:
        self.root = Path(root)
        self.budget_tokens = budget_tokens
        self.history = History(history_turns)
        self.snapshot = ContextSnapshot()
        self.watcher = watcher
        self.chained = chained or (lambda: False)
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.system_prompt = system_prompt
        self.last_context: Context | None = None
        self.files = files or FileCache(self.root)
        self._whole: set[str] = set()  # files the model has seen in full
        self._pending: tuple[str, str] | None = None  # (instruction, sent) of the turn in flight
        self._review = ""  # the review of the last reply, told to the model in the next request
        self.auto = auto  # chooses files by itself (None: only the files given)
        self._plan: Plan | None = None  # the last plan, used by the build for its instruction
        self._earlier: dict[str, None] = {}  # files of earlier turns, oldest first
        self._fresh = False  # the next request sends its history afresh (a resumed session)
        self.order = SentOrder()  # files sent unchanged go first, as last time (drafts share it)

    def plan(self, prompt: str, pinned: Sequence[str] = (), dropped: Sequence[str] = ()
             ) -> Plan | None:
        """The files `prompt` needs beside `pinned` (ranked, with reasons) and the repository
        map, or None without automatic context. Blocking: call it in a thread. The next build
        for the same prompt uses its map and the lines it found relevant."""
        if self.auto is None:
            return None
        if self.watcher is not None:
            edited = self.watcher.recent()
        else:
            from .files import uncommitted

            edited = uncommitted(self.root)
        earlier = list(reversed(self._earlier))
        plan = self.auto.plan(prompt, pinned=pinned, dropped=dropped, edited=edited,
                              earlier=earlier)
        self._plan = plan
        return plan

    def chosen(self) -> tuple[tuple[ContextFile, ...], tuple[tuple[str, str, bool], ...], int]:
        """What the last build sent: each file with its reason, the files withheld (path, why,
        named in the instruction) and the map's tokens."""
        ctx = self.last_context
        if ctx is None:
            return (), (), 0
        plan = self._plan
        reasons = plan.found.reasons() if plan is not None else {}
        out = []
        rank = {p: i for i, p in enumerate(plan.found.paths())} if plan is not None else {}
        for rel in sorted(ctx.shown + list(ctx.omitted), key=lambda p: rank.get(p, -1)):
            if rel in ctx.omitted:
                how = f"omitted: {ctx.omitted[rel]}"
            elif rel in ctx.missing:
                how = "new"
            else:
                how = "regions" if rel in ctx.partial else "whole"
            out.append(ContextFile(rel, reasons.get(rel, "added"), ctx.file_tokens.get(rel, 0),
                                   how, tuple(ctx.partial.get(rel, ()))))
        withheld = tuple((w.path, w.reason, w.named) for w in plan.found.withheld) if (
            plan is not None) else ()
        from ..protocol.metrics import estimate_tokens

        return tuple(out), withheld, estimate_tokens(ctx.map) if ctx.map else 0

    def changed_files(self) -> set[str]:
        """Files changed on disk since the last turn (from the watcher; empty without one)."""
        return self.watcher.mark_turn() if self.watcher is not None else set()

    def prepare(self, files: Sequence[str]) -> Prepared:
        """Read ahead the files a request for `files` would show (blocking: call it in a
        thread); files outside the context and what the model saw are forgotten."""
        entries = self.files.refresh(self._involved(files), keep_only=True)
        missing = frozenset(rel for rel in files
                            if entries[rel].text is None and entries[rel].error is None)
        return Prepared({rel: entries[rel].tokens for rel in files}, self.files.settle_s(),
                        missing)

    def build_now(self, prompt: str, files: Sequence[str], *, followup: bool) -> tuple[
            TurnRequest, dict[str, str | None]] | None:
        """`build` without reading a file (for the event loop), or None when a file it would
        show is not prepared or changed since (stat only)."""
        entries = self.files.fresh(self._involved(files))
        return None if entries is None else self._build(prompt, files, followup, entries)

    def build(self, prompt: str, files: Sequence[str], *, followup: bool) -> tuple[
            TurnRequest, dict[str, str | None]]:
        entries = self.files.refresh(self._involved(files))
        return self._build(prompt, files, followup, entries)

    def _involved(self, files: Sequence[str]) -> list[str]:
        """Every file a request for `files` may show: them and what the model saw before."""
        return list(dict.fromkeys([*files, *self.snapshot.paths()]))

    def _build(self, prompt: str, files: Sequence[str], followup: bool,
               entries: dict[str, Cached]) -> tuple[TurnRequest, dict[str, str | None]]:
        """The request from `entries` (the current text of every involved file)."""

        def read(rel: str) -> str | None:
            entry = entries[rel]
            if entry.error is not None:
                raise entry.error
            return entry.text

        changed = self.changed_files()
        chain = (followup and not self._fresh and len(self.history) > 0 and self.chained()
                 and len(self.history) < self.history.max_turns)
        plan = self._plan if self._plan is not None and self._plan.instruction == prompt else None
        self._plan = plan
        plan_focus = plan.focus() if plan is not None else {}
        map_text = plan.map if plan is not None and not chain else ""
        from ..protocol.metrics import estimate_tokens

        budget = max(0, self.budget_tokens - estimate_tokens(map_text))
        if chain:
            # Files the model saw: only what changed; files it did not see: in full.
            # Every seen file is compared, not only those the watcher reported yet: an edit
            # made just before this call may still sit in the watcher's debounce window.
            changed |= set(self.snapshot.paths())
            diffs = followup_input(self.root, changed, self.snapshot, read=read)
            # Files not seen in full (new, or large ones shown as regions) get context again.
            new_files = [f for f in files if f not in self._whole]
            ctx = build_context(self.root, new_files, budget, query=prompt, focus=plan_focus,
                                read=read)
            ctx.text = self.order.arrange(ctx.blocks)
            sent = user_message(prompt, ctx, diffs)  # the diffs after the files: they change
            history = self.history.messages(full=True)
        else:
            focus: dict[str, list[int]] = {rel: list(lines) for rel, lines in plan_focus.items()}
            for rel in changed:
                if rel in self.snapshot:
                    focus.setdefault(rel, []).extend(
                        changed_lines(self.snapshot.get(rel), entries[rel].text))
            ctx = build_context(self.root, files, budget, query=prompt, focus=focus, read=read)
            ctx.text = self.order.arrange(ctx.blocks)
            ctx.map = map_text
            self.snapshot.clear()
            self._whole.clear()
            sent = user_message(prompt, ctx)
            history = self.history.messages()
        if followup and self._review and len(self.history):
            sent = self._review + "\n" + sent
        self._review = ""
        self._fresh = False
        self.snapshot.update(ctx.texts)
        self._whole.update(ctx.whole, ctx.missing)
        self.last_context = ctx
        self._pending = (prompt, sent)
        hashes = {rel: entries[rel].digest for rel in self.snapshot.paths()}
        request = TurnRequest(self.system_prompt, [Message("user", sent)], history,
                              max_tokens=self.max_tokens, temperature=self.temperature)
        return request, hashes

    def finish(self, request: TurnRequest, reply: str, applied: Sequence[str],
               review: str = "") -> None:
        """Remember the turn; files the turn wrote count as seen in their new state. `review`
        (what a person rejected, with reasons, and amended) goes into the next request."""
        instruction, sent = self._pending or ("", request.new_input[-1].content)
        self._pending = None
        self.history.add(instruction, reply, sent=sent)
        self._review = review if len(self.history) else ""
        for rel in [*self.snapshot.paths(), *applied]:  # what this turn showed and changed
            self._earlier.pop(rel, None)
            self._earlier[rel] = None
        while len(self._earlier) > 20:
            del self._earlier[next(iter(self._earlier))]
        for rel in applied:
            data = read_regular(self.root, rel)
            text = None if data is None else data.decode("utf-8", errors="replace")
            if rel in self._whole or rel not in self.snapshot:  # it saw it whole, or wrote it
                self._whole.add(rel)
            self.snapshot.update({rel: text})
        # The watcher will also report these writes; their diff against the snapshot is empty,
        # so the next follow-up leaves them out.

    @property
    def second_look(self) -> bool:
        """Whether the model may ask for more (its prompt says so, and files are indexed)."""
        from .look import LOOK_RULE

        return self.auto is not None and LOOK_RULE in self.system_prompt

    def look(self, names: Sequence[str]) -> tuple[LookedUp, dict[str, str | None]]:
        """What the model asked for (`NEED:` lines), found within a quarter of the budget,
        and the content hash of each file sent; the model counts as having seen them.
        Blocking: call it in a thread."""
        from .look import look_up

        assert self.auto is not None

        def read(rel: str) -> str | None:
            entry = self.files.refresh([rel])[rel]
            if entry.error is not None:
                raise entry.error
            return entry.text

        ctx = self.last_context
        found = look_up(self.root, self.auto.index, names, cap=self.budget_tokens // 4,
                        read=read, shown_whole=ctx.whole if ctx is not None else (),
                        never=self.auto.never)
        self.snapshot.update(found.texts)
        self._whole.update(f.path for f in found.files if f.shown == "whole")
        if self._pending is not None:  # the history keeps what was sent, as one message
            self._pending = (self._pending[0], self._pending[1] + "\n" + found.text)
        return found, {rel: self.files.refresh([rel])[rel].digest for rel in found.texts}

    def tell(self, note: str) -> None:
        """A note the next request begins with: what became of a turn after it ended."""
        self._review = "\n".join(p for p in (self._review, note) if p)

    def restore(self, history: History, review: str = "") -> None:
        """Continue a stored conversation: `history` replaces this one's and the next request
        sends it afresh (no chain), led by `review` (what became of the last reply)."""
        self.reset()
        self.history = history
        self._review = review
        self._fresh = True

    def reset(self) -> None:
        """Forget history and snapshots (e.g. after the client lost its chain)."""
        self._earlier.clear()
        self.history.clear()
        self.snapshot.clear()
        self._whole.clear()
        self._review = ""
