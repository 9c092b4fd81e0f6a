"""`AutoContext`: the files and the repository map chosen for an instruction, before it is sent.

    auto = AutoContext(root, index=RepoIndex(root, cache), never=[...])
    plan = auto.plan("rename parse_header ...", pinned=["a.py"], edited=[...], earlier=[...])
    plan.found.files      # the candidates, ranked, each with its reason
    plan.map              # the repository map's text ('' when none)

Blocking (the index, git): a front end calls it in a thread, while the person types (the app)
or before the turn (run, watch). The first call refreshes the index when nothing has yet.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from .candidates import MAX_FILES, Found, suggest
from .gitlog import recent_log
from .index import RepoIndex
from .repomap import repo_map


class Plan:
    """What goes with one instruction besides the files a person added."""

    __slots__ = ("instruction", "pinned", "found", "map")

    def __init__(self, instruction: str, pinned: tuple[str, ...], found: Found,
                 map_text: str) -> None:
        self.instruction = instruction
        self.pinned = pinned
        self.found = found
        self.map = map_text

    def focus(self) -> dict[str, tuple[int, ...]]:
        """The relevant lines of each candidate (a large file is cut around them)."""
        return {c.path: c.lines for c in self.found.files if c.lines}


class AutoContext:
    def __init__(self, root: Path, *, index: RepoIndex | None = None, map_tokens: int = 1024,
                 max_files: int = MAX_FILES, never: Sequence[str] = ()) -> None:
        self.root = Path(root)
        self.index = index or RepoIndex(self.root)
        self.map_tokens = map_tokens
        self.max_files = max_files
        self.never = tuple(never)

    @property
    def ready(self) -> bool:
        """Whether the index has been built (a plan before that builds it first)."""
        return self.index.ready

    def plan(self, instruction: str, *, pinned: Sequence[str] = (),
             dropped: Iterable[str] = (), edited: Sequence[str] = (),
             earlier: Sequence[str] = ()) -> Plan:
        if not self.index.ready:
            self.index.refresh()
        found = suggest(self.root, instruction, self.index, pinned=pinned, dropped=dropped,
                        edited=edited, earlier=earlier, never=self.never,
                        max_files=self.max_files)
        shown = {*pinned, *found.paths()}
        text = repo_map(self.index, instruction, shown, self.map_tokens) if (
            self.map_tokens > 0) else ""
        return Plan(instruction, tuple(pinned), found, text)

    def warm(self) -> None:
        """Build the index and read the git log (blocking: in the background, before
        the first plan needs them)."""
        self.index.refresh()
        recent_log(self.root, self.index)

    def changed(self, paths: Iterable[str]) -> None:
        """Files changed on disk (the watcher): read again for the index."""
        if self.index.ready:
            self.index.update(paths)


def auto_context_of(root: Path, settings: object, data_dir: Path | None) -> AutoContext | None:
    """The AutoContext the [context] settings ask for (None: `auto = false`); its index is
    cached in `data_dir` (in memory without one)."""
    ctx = getattr(settings, "context", None)
    if ctx is None or not ctx.auto:
        return None
    from .index import cache_file

    cache = cache_file(root, data_dir) if data_dir is not None else None
    return AutoContext(root, index=RepoIndex(root, cache), map_tokens=ctx.map_tokens,
                       max_files=ctx.max_files, never=ctx.never)
