"""The prefill model: a request's first token waits for the input the server has not processed
yet on this connection, as real servers with prompt caching do.

A prompt is read as one text (instructions, then every conversation item, oldest first). What a
connection processed (each prompt, with the reply after it) is kept; a new prompt's unseen part
is what follows its longest common prefix with any of them. So a request chained with
previous_response_id, or sent after a `generate: false` pre-warm of the same text, prefills only
its new input."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

from .memory import Item
from .replies import TOKEN_CHARS

KEEP = 8  # processed texts remembered per connection
CONNECTIONS = 256  # HTTP connections remembered (the oldest are forgotten)


def prompt_text(instructions: str, items: Sequence[Item]) -> str:
    """One text of a prompt: its shared prefixes are exactly its shared conversations."""
    return "\x00" + instructions + "".join(f"\x01{role}\x02{text}" for role, text in items)


def common_prefix(a: str, b: str) -> int:
    """The length of the longest common prefix (binary search: C-speed slices)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


class PrefixCache:
    """What one connection's server has processed."""

    def __init__(self, keep: int = KEEP) -> None:
        self.keep = keep
        self._texts: list[str] = []

    def unseen(self, prompt: str) -> int:
        """Characters of `prompt` after its longest prefix already processed here."""
        best = max((common_prefix(prompt, seen) for seen in self._texts), default=0)
        return len(prompt) - best

    def add(self, text: str) -> None:
        self._texts = [t for t in self._texts if not text.startswith(t)][-(self.keep - 1):]
        self._texts.append(text)


def prefill_ms(unseen_chars: int, prefill_tps: float) -> float:
    """The time to process `unseen_chars` at `prefill_tps` input tokens per second (0: none)."""
    if prefill_tps <= 0 or unseen_chars <= 0:
        return 0.0
    return (unseen_chars / TOKEN_CHARS) / prefill_tps * 1000.0


def reply_item(text: str) -> str:
    """The text a reply adds after its prompt (what a chained request carries next)."""
    return prompt_text("", [("assistant", text)])[1:]


class Connections:
    """Prefix caches of HTTP connections, by connection id."""

    def __init__(self, limit: int = CONNECTIONS) -> None:
        self.limit = limit
        self._caches: OrderedDict[int, PrefixCache] = OrderedDict()

    def of(self, connection_id: int) -> PrefixCache:
        cache = self._caches.pop(connection_id, None) or PrefixCache()
        self._caches[connection_id] = cache
        while len(self._caches) > self.limit:
            self._caches.popitem(last=False)
        return cache


def prefill_of(prompt: str, prefill_tps: float, cache: PrefixCache, entry: dict) -> float:
    """The prefill time (ms) of `prompt` on the connection of `cache`, noted in its log
    entry (with the prompt's tokens and those not processed before)."""
    unseen = cache.unseen(prompt)
    ms = prefill_ms(unseen, prefill_tps)
    entry["unseen_tokens"], entry["prefill_ms"] = unseen // TOKEN_CHARS, round(ms, 3)
    entry["prompt_tokens"] = len(prompt) // TOKEN_CHARS
    return ms
