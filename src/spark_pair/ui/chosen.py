"""The automatic context in the app: files chosen for the prompt while it is typed.

The draft is planned once it has been still for `SETTLE_S` (in a worker thread: the index, git
grep); the files pane (and, when the pane is folded away, the prompt's border) shows each chosen
file with its reason. enter drops one (it stays dropped while this prompt is written), alt+p pins it
(it joins the context). Enter sends the context and the chosen files not dropped; a prompt sent
before its plan came (an AI! comment, a quick enter) is planned first, in the turn's worker.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, NamedTuple, Protocol

from ..base.printable import shown
from ..protocol.metrics import estimate_tokens
from .host import Panes
from .widgets.files import Chosen

if TYPE_CHECKING:
    from textual.timer import Timer

    from ..workspace.autocontext import Plan
    from .driver import Driver

SETTLE_S = 0.25  # the draft is planned once it has been still this long


class Sends(NamedTuple):
    """What a draft's request would send of a chosen file: its tokens, its regions when cut,
    and the whole file's tokens (as it was when the request was built)."""

    tokens: int
    regions: tuple[tuple[int, int], ...]
    whole: int


class ChosenHost(Panes, Protocol):
    """What the chooser uses of the screen it serves (the main screen): its timers and workers,
    the driver that plans, and the context files a prompt is sent with."""

    driver: Driver

    def set_timer(self, delay: float, callback: Callable[[], object]) -> Timer: ...

    def sent_context(self) -> list[str]: ...


class ChosenFiles:
    def __init__(self, screen: ChosenHost, on_change: Callable[[], None]) -> None:
        self.screen = screen
        self.on_change = on_change  # the chosen files or the dropped ones changed
        self.draft = ""  # the prompt text the chosen files are for
        self.plan: Plan | None = None  # the workspace's Plan for `draft` (None: none yet)
        self.dropped: set[str] = set()
        self.sends: dict[str, Sends] = {}  # path -> what the draft's request would send of it
        # (of `plan`, as the file was when it was built)
        self._timer: Timer | None = None

    @property
    def chosen(self) -> list[Chosen]:
        if self.plan is None:
            return []
        out = []
        for c in self.plan.found.files:
            sends = self.sends.get(c.path)
            if sends is None:
                out.append(Chosen(c.path, c.label, c.tokens))
            else:  # its whole size as the file was when what it sends was counted
                out.append(Chosen(c.path, c.label, sends.whole, sends.tokens, sends.regions))
        return out

    def kept(self) -> list[str]:
        """The chosen files that go with the request."""
        return [c.path for c in self.chosen if c.path not in self.dropped]

    def draft_changed(self, text: str) -> None:
        """The prompt changed: plan it once it is still."""
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        text = text.strip()
        if not text:  # an empty draft (sent, queued or wiped) has no files chosen for it
            self.reset()
            return
        if text.startswith("/"):
            return
        self._timer = self.screen.set_timer(SETTLE_S, lambda: self._start(text))

    def _start(self, text: str) -> None:
        self._timer = None
        self.screen.run_worker(self._plan(text), group="plan", exclusive=True,
                               exit_on_error=False)

    async def _plan(self, text: str) -> None:
        # dropped files stay in the plan (listed as dropped, so they can come back)
        pinned = self.screen.sent_context()
        plan = await self.screen.driver.plan(text, pinned, ())
        if plan is None:
            return
        self.draft, self.plan, self.sends = text, plan, {}
        self.on_change()
        # then what the request would send of each (a large file: its regions, not all of it)
        files = [*pinned, *(p for p in plan.found.paths() if p not in pinned)]
        ctx = await self.screen.driver.draft_context(text, files)
        if ctx is None or self.plan is not plan:
            return
        self.sends = {rel: Sends(n, tuple(ctx.partial.get(rel, ())),
                                 estimate_tokens(ctx.texts.get(rel) or ""))
                      for rel, n in ctx.file_tokens.items()}
        self.on_change()

    def files_changed(self, paths: set[str]) -> None:
        """Files changed on disk: a chosen one's figures were counted from its old content,
        so they go, and the draft is planned again (unless it is being typed: its plan comes)."""
        if self.plan is None or paths.isdisjoint(self.plan.found.paths()):
            return
        self.sends = {rel: s for rel, s in self.sends.items() if rel not in paths}
        self.on_change()
        if self._timer is None and self.draft:
            self._start(self.draft)

    async def files_for(self, prompt: str, pinned: Sequence[str]) -> list[str]:
        """What a turn for `prompt` sends: `pinned` and the chosen files not dropped (planned
        now when the plan in hand is for another text)."""
        text = prompt.strip()
        if self.plan is None or self.draft != text:
            # enter never waits for the first index of a large repository
            plan = await self.screen.driver.plan(text, list(pinned), (), wait=False)
            if plan is None:
                return list(pinned)
            if self.plan is None or self.draft != text:  # (the settled draft's may have come)
                self.draft, self.plan, self.sends = text, plan, {}  # (another draft's sizes)
        extra = [p for p in self.kept() if p not in pinned]
        return [*pinned, *extra]

    def reset(self) -> None:
        """A turn started, or the draft is empty: the next prompt starts with nothing chosen or
        dropped."""
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        had = self.plan is not None or self.dropped
        self.plan, self.draft, self.sends = None, "", {}
        self.dropped.clear()
        if had:
            self.on_change()

    def toggle(self, path: str) -> str | None:
        """enter on a chosen file: drop it or bring it back (what happened, in words); None
        when `path` was not chosen."""
        if path not in {c.path for c in self.chosen}:
            return None
        if path in self.dropped:
            self.dropped.discard(path)
            what = f"{shown(path)} goes with the prompt again"
        else:
            self.dropped.add(path)
            what = f"dropped {shown(path)}: it is not sent with this prompt"
        self.on_change()
        return what

    def withheld_notes(self) -> list[str]:
        """For each file the draft names that is never sent on its own: why, and how to add
        it."""
        if self.plan is None:
            return []
        return [f"{shown(w.path)} is not sent ({w.reason}); /add {shown(w.path)} sends it"
                for w in self.plan.found.withheld if w.named]

    def border_line(self, context: dict[str, int | None]) -> str:
        """One line for the prompt's border when the files pane is folded away."""
        kept = [c for c in self.chosen if c.path not in self.dropped and c.path not in context]
        if not kept:
            return ""
        first = kept[0]
        more = f" +{len(kept) - 1}" if len(kept) > 1 else ""
        return f"○ {shown(first.path)} ({first.reason}){more} · ctrl+p drops"
