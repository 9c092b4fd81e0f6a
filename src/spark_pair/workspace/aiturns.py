"""Saved `AI!` / `AI?` comments -> turns. `AI!` asks for an edit (the model removes the comment
as part of it); `AI?` asks a question the model answers in prose, editing nothing.

    trigger = AITrigger(root)
    watcher.subscribe_ai(trigger.feed)      # comments that newly appeared in saved files
    turn = await trigger.next()             # AITurn(prompt, files, comments, ask)
    async for event in session.turn(turn.prompt, turn.files, ask=turn.ask): ...

Debounced: comments are collected until the files have been quiet for `debounce_s`, then
looked up again in the files as they are now (a comment typed over several saves counts once,
in its last form). Once per comment: a comment that already started a turn never starts another.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .aicomments import AIComment, find_ai_comments
from .files import read_text

DEBOUNCE_S = 0.5


@dataclass(frozen=True, slots=True)
class AITurn:
    prompt: str
    files: tuple[str, ...]  # the files holding the comments (they go into the context)
    comments: tuple[AIComment, ...]
    ask: bool  # AI? comments: answer in prose, edit nothing


def turn_for(comments: Sequence[AIComment]) -> AITurn:
    """The prompt for comments of one kind (all AI! or all AI?)."""
    ask = all(c.kind == "ask" for c in comments)
    listed = "\n".join(f"- {c.path} line {c.line}: {c.text or '(see the code around it)'}"
                       for c in comments)
    if ask:
        prompt = ("Answer the question in each comment marked AI? below, in plain prose. This "
                  "is a question, not a change: output no diff and edit no file.\n" + listed)
    else:
        prompt = ("Do what each comment marked AI! below asks, in the file that holds it. As "
                  "part of the same diff, remove each AI! comment (the whole comment line, or "
                  "only the comment when code shares its line).\n" + listed)
    files = tuple(dict.fromkeys(c.path for c in comments))
    return AITurn(prompt, files, tuple(comments), ask)


class AITrigger:
    """Turns the watcher's new AI comments into AITurns: debounced, once per comment."""

    def __init__(self, root: Path, *, debounce_s: float = DEBOUNCE_S) -> None:
        self.root = Path(root)
        self.debounce_s = debounce_s
        self._pending: dict[tuple[str, str, str], AIComment] = {}
        self._done: set[tuple[str, str, str]] = set()
        self._timer: asyncio.TimerHandle | None = None
        self._turns: asyncio.Queue[AITurn] = asyncio.Queue()
        self._tasks: set[asyncio.Task[None]] = set()

    def feed(self, comments: list[AIComment]) -> None:
        """The watcher's callback (on the loop): (re)starts the quiet-time clock."""
        for c in comments:
            if c.key not in self._done:
                self._pending[c.key] = c
        if not self._pending:
            return
        if self._timer is not None:
            self._timer.cancel()
        self._timer = asyncio.get_running_loop().call_later(self.debounce_s, self._flush)

    async def next(self) -> AITurn:
        """The next turn to run (waits for one)."""
        return await self._turns.get()

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        for task in self._tasks:
            task.cancel()

    def _flush(self) -> None:
        self._timer = None
        task = asyncio.ensure_future(self._settle())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _settle(self) -> None:
        pending, self._pending = self._pending, {}
        paths = sorted({c.path for c in pending.values()})
        current = await asyncio.to_thread(_comments_now, self.root, paths)
        # only the comments still in the files, in their last form, each once
        live = [c for c in current if c.key in pending and c.key not in self._done]
        self._done.update(c.key for c in live)
        for kind in ("do", "ask"):
            chosen = [c for c in live if c.kind == kind]
            if chosen:
                self._turns.put_nowait(turn_for(chosen))


def _comments_now(root: Path, paths: list[str]) -> list[AIComment]:
    """The AI comments in these files as they are on disk now (blocking: call in a thread)."""
    out: list[AIComment] = []
    for rel in paths:
        text = None
        with contextlib.suppress(Exception):  # gone, binary, too large: no comments
            text = read_text(root, rel)
        if text:
            out += find_ai_comments(rel, text)
    return out
