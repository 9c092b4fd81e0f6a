"""The model client's requests as the protocol tests make them."""

from __future__ import annotations

from spark_pair.protocol.client import ModelClient
from spark_pair.protocol.events import Message, TurnRequest

MODEL = "gpt-5.3-codex-spark"


def turn(text: str = "change x", history: list[Message] | None = None) -> TurnRequest:
    return TurnRequest("You edit code.", [Message("user", text)], history=list(history or []))


async def run(c: ModelClient, req: TurnRequest | None = None) -> list:
    return [e async for e in c.stream(req or turn())]
