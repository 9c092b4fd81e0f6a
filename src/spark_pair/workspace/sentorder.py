"""The order of a request's file blocks, kept from one request to the next so that its start
repeats the previous request's: a server's prompt cache, keyed on the prompt's first bytes,
then reads only what follows (sim.prefill models it).

    order = SentOrder()
    text = order.arrange(blocks)   # blocks: path -> its block, the most relevant first

Files keep the place they had in the last request (not ranked again each time); files new to
it follow, in the order given, and so does a file it left out that comes back (the order is
the last request's, not the first). A cut file whose first regions are as last time repeats
its last block that far (workspace.prompt lists neither spans nor length in its head). The
order is shared by a session's requests and its drafts' pre-warms
(workspace.preview), so a draft's pre-warm and the turn that follows it are laid out alike."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from .prompt import INSTRUCTION

if TYPE_CHECKING:
    from ..protocol.request import TurnRequest


class SentOrder:
    def __init__(self) -> None:
        self._last: list[str] = []  # the files of the last request, in its order

    def arrange(self, blocks: Mapping[str, str]) -> str:
        """The blocks as one text: the files the last request sent first, in its order, then
        the others in the order given; remembered for the next request."""
        kept = [rel for rel in self._last if rel in blocks]
        known = set(kept)
        self._last = [*kept, *(rel for rel in blocks if rel not in known)]
        return "".join(blocks[rel] for rel in self._last)


def before_instruction(request: TurnRequest) -> tuple[str, ...]:
    """Everything `request` sends up to its instruction (the end of its last message): two
    drafts equal in this differ only in what a server reads after its cached prefix."""
    texts = [request.instructions, *(f"{m.role}:{m.content}" for m in (
        *request.history, *request.new_input))]
    last = texts[-1]
    cut = last.rfind(INSTRUCTION)
    texts[-1] = last[:cut] if cut >= 0 else last
    return tuple(texts)
