"""One generated reply: which text, how many tokens, and the paced loop that sends them."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from .faults import Fault
from .memory import Item
from .prefill import prompt_text
from .replies import (
    SimConfig,
    chat_items,
    chat_texts,
    choose_reply,
    input_tokens,
    responses_items,
    responses_texts,
    tokenize,
)
from .schedule import TokenSchedule

MAX_BATCH = 512  # tokens per write when many are due at once


class Dropped(Exception):
    """The `drop` fault cut the connection after `sent` tokens."""

    def __init__(self, sent: int) -> None:
        super().__init__(f"dropped after {sent} tokens")
        self.sent = sent


@dataclass
class SimTurn:
    """What the simulator answers one request with (workspace.prompt.Turn is a turn of the
    conversation a client resends)."""

    tokens: list[str]
    input_tokens: int
    truncated: bool
    items: list[Item] = field(default_factory=list)  # this request's own input items
    prompt: str = ""  # the whole prompt as one text (what prefill reads: sim.prefill)

    @property
    def text(self) -> str:
        return "".join(self.tokens)

    def stored(self) -> list[Item]:
        """What a response store keeps: the input items and the reply."""
        return [*self.items, ("assistant", self.text)]


def plan_turn(config: SimConfig, body: dict[str, Any], api: str,
              history: list[Item] | None = None) -> SimTurn:
    """api: "chat" or "responses" (the WS mode uses the responses body). `history`: the
    stored conversation of the previous_response_id chain, oldest first."""
    if api == "chat":
        last, chars = chat_texts(body)
        items = chat_items(body)
        limit = body.get("max_completion_tokens") or body.get("max_tokens")
    else:
        last, chars = responses_texts(body)
        items = responses_items(body)
        limit = body.get("max_output_tokens")
    if not any(role == "user" for role, _ in items):  # all said before (a pre-warmed chain)
        last = next((text for role, text in reversed(history or []) if role == "user"), last)
    instructions = str(body.get("instructions") or "") if api != "chat" else ""
    prompt_all = prompt_text(instructions, [*(history or []), *items])
    model = body.get("model")
    tokens = tokenize(choose_reply(config, last, (history or []) + items,
                                   model if isinstance(model, str) else None))
    prompt = input_tokens(chars)
    window = config.contexts.get(model, config.context) if isinstance(model, str) else \
        config.context
    if window > 0:  # the window holds the prompt and the reply
        room = max(0, window - prompt)
        limit = room if not isinstance(limit, int) or limit < 0 else min(limit, room)
    truncated = isinstance(limit, int) and limit >= 0 and len(tokens) > limit
    if truncated:
        tokens = tokens[:limit]
    return SimTurn(tokens, prompt, truncated, items, prompt_all)


async def pump(schedule: TokenSchedule, tokens: list[str],
               emit: Callable[[list[str]], Awaitable[None]], fault: Fault | None,
               abort: Callable[[], None]) -> int:
    """Send tokens as they fall due (coalesced), applying a drop/stall fault. Returns count sent."""
    total = len(tokens)
    cut = total
    if fault is not None and fault.kind in ("drop", "stall"):
        cut = min(total, max(0, int(fault.get("after_tokens"))))
    sent = await _send_until(schedule, tokens, emit, 0, cut)
    if fault is not None and fault.kind == "drop":
        abort()
        raise Dropped(sent)
    if fault is not None and fault.kind == "stall":
        await asyncio.sleep(float(fault.get("seconds")))
    return await _send_until(schedule, tokens, emit, sent, total)


async def _send_until(schedule: TokenSchedule, tokens: list[str],
                      emit: Callable[[list[str]], Awaitable[None]], sent: int, stop: int) -> int:
    while sent < stop:
        due = min(await schedule.next_batch(sent, stop), stop, sent + MAX_BATCH)
        await emit(tokens[sent:due])
        sent = due
    return sent


async def wait_all_due(schedule: TokenSchedule, count: int) -> None:
    """For non-streaming replies: wait until the last token would have been sent."""
    delay = schedule.due_at(max(0, count - 1)) - schedule.clock()
    if delay > 0:
        await asyncio.sleep(delay)
