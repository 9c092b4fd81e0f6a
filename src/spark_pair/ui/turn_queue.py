"""The turns waiting for the running one (tab from the prompt, saved `AI!` comments): the chip
on the prompt's border that shows them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from textual.markup import escape

from ..base.printable import shown, shown_text
from ..workspace.aicomments import AIComment
from .dialogs.confirm import ConfirmScreen
from .host import Panes, Says
from .widgets.prompt import Prompt

if TYPE_CHECKING:
    from textual.worker import Worker

    from .driver import Driver
    from .fixrounds import AppFixRounds

CHIP_WORDS = 32  # characters of the next turn's prompt the chip shows


def chip(queued: Sequence[tuple[str, Sequence[str]]]) -> str:
    """`⧗ 2 queued: make it async…` (empty with nothing queued)."""
    if not queued:
        return ""
    first = " ".join(queued[0][0].split())
    if len(first) > CHIP_WORDS:
        first = first[:CHIP_WORDS - 1].rstrip() + "…"
    return escape(f"⧗ {len(queued)} queued: {shown_text(first)}")


class QueueHost(Panes, Says, Protocol):
    """What the queue uses of the main screen: its turns, and what keeps the next waiting."""

    driver: Driver
    fixes: AppFixRounds
    queued: list[tuple[str, list[str]]]
    turn_worker: Worker[None] | None
    checking: bool

    def sent_context(self) -> list[str]: ...

    def start_turn(self, prompt: str, files: Sequence[str]) -> bool: ...


def queue(screen: QueueHost, text: str) -> None:
    """tab while a turn runs: the prompt is the next turn (it starts when this one ends)."""
    text = text.strip()
    if text.startswith("/"):
        screen.say("a slash command is not queued: enter runs it")
        return
    prompt = screen.query_one(Prompt)
    prompt.remember(text)
    prompt.value = ""
    screen.queued.append((text, screen.sent_context()))
    changed(screen)
    screen.say(f"queued as turn {len(screen.queued)} after this one · escape on the empty "
               "prompt clears the queue once the reply is in")


def clear(screen: QueueHost) -> None:
    n = len(screen.queued)

    def answered(yes: bool | None) -> None:
        if yes:
            screen.queued.clear()
            changed(screen)
            screen.say(f"the queue is cleared ({n} turn(s) dropped)")

    screen.app.push_screen(ConfirmScreen(f"clear the queue: drop {n} waiting turn(s)?"),
                           answered)


def run_next(screen: QueueHost) -> None:
    """The next queued turn, once nothing runs: no turn, no check, no fix loop."""
    if screen.queued and screen.turn_worker is None and not screen.checking and \
            not screen.fixes.active:
        prompt, files = screen.queued.pop(0)
        screen.start_turn(prompt, files)
    changed(screen)


def changed(screen: QueueHost) -> None:
    """The prompt's chip and keys follow the queue and the turn in flight."""
    prompt = screen.query_one(Prompt)
    prompt.turn_running = screen.turn_worker is not None
    prompt.queued = len(screen.queued)
    prompt.border_title = chip(screen.queued)
    screen.refresh_bindings()


def ai_comments(screen: QueueHost, comments: Sequence[AIComment]) -> None:
    """Saved `AI!` comments: each is a turn, queued while one runs."""
    for comment in comments:
        prompt = f"Do what the AI! comment in {comment.path} line {comment.line} says" + (
            f": {comment.text}" if comment.text else "") + " (and remove the comment)"
        files = list(dict.fromkeys([comment.path, *screen.sent_context()]))
        if screen.driver.running or screen.turn_worker is not None:
            screen.queued.append((prompt, files))
            changed(screen)
            screen.say(f"AI! comment in {shown(comment.path)} queued: it runs after this turn")
        else:
            screen.start_turn(prompt, files)
