"""Scripted replies, tokenisation and the simulator's settings."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from .memory import Item, memory_reply

DEFAULT_MODELS = ("gpt-5.3-codex-spark", "gpt-5.3-codex")
TOKEN_CHARS = 4
# a fix round's instruction carries the check's output in this block (session.fixloop writes it)
CHECK_BLOCK = re.compile(r"```check-output\n(.*?)\n```", re.S)
REPLY_KEYS = ("match", "check", "model")  # what a scripted reply may depend on


@dataclass
class SimConfig:
    tps: float = 1200.0
    ttft_ms: float = 150.0
    replies: list[dict[str, str]] = field(default_factory=list)
    default: str | None = None
    tokens: int = 200
    # the context window in tokens (0: none): a reply stops (finish_reason length) where the
    # prompt and the reply fill it, whatever max_tokens says, as llama.cpp's server does
    context: int = 0
    contexts: dict[str, int] = field(default_factory=dict)  # a window per model (beats context)
    # input tokens prefilled per second (0: none): a request's first token also waits for the
    # input its connection has not processed yet (sim.prefill)
    prefill_tps: float = 20000.0
    steer: bool = True  # the WebSocket mode accepts `response.steer`
    models: list[str] = field(default_factory=lambda: list(DEFAULT_MODELS))
    api_key: str | None = None

    def copy(self) -> SimConfig:
        return replace(self, replies=list(self.replies), models=list(self.models),
                       contexts=dict(self.contexts))

    def update(self, values: dict[str, Any]) -> None:
        """Apply a subset of settings (from POST /_sim/config); unknown names raise KeyError."""
        names = {f.name for f in fields(self)}
        for name, value in values.items():
            if name not in names:
                raise KeyError(name)
            if name == "models" and isinstance(value, str):
                value = [m.strip() for m in value.split(",") if m.strip()]
            setattr(self, name, value)


def load_script(path: Path) -> tuple[list[dict[str, str]], str | None]:
    """Read a script file: {"replies": [{"match": ..., "text": ...}], "default": ...}; a reply
    may also name `check` and `model` (see `matches`)."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    replies = [{**{k: str(r[k]) for k in REPLY_KEYS if k in r}, "text": str(r["text"])}
               for r in data.get("replies", [])]
    return replies, data.get("default")


def check_output(text: str) -> str | None:
    """The check output a fix round's instruction carries (None: it carries none)."""
    found = CHECK_BLOCK.search(text)
    return None if found is None else found.group(1)


def matches(reply: dict[str, str], last_user_text: str, model: str | None) -> bool:
    """Whether a scripted reply answers this request: `match` is in the last user message,
    `check` is in the check output it carries (a fix round's), `model` is the model asked."""
    if reply.get("match", "") not in last_user_text:
        return False
    if "check" in reply:
        output = check_output(last_user_text)
        if output is None or reply["check"] not in output:
            return False
    return "model" not in reply or reply["model"] == model


def tokenize(text: str) -> list[str]:
    """Deterministic tokens of at most four characters."""
    return [text[i : i + TOKEN_CHARS] for i in range(0, len(text), TOKEN_CHARS)]


def generated_text(n_tokens: int) -> str:
    """Filler text of exactly n_tokens four-character tokens."""
    return "".join(f"w{i % 100:02d} " for i in range(max(0, n_tokens)))


def choose_reply(config: SimConfig, last_user_text: str,
                 conversation: Sequence[Item] | None = None, model: str | None = None) -> str:
    """The first scripted reply that `matches`, else the memory rule (remember N / what
    number?) over the conversation, else the default, else generated text."""
    for reply in config.replies:
        if matches(reply, last_user_text, model):
            return reply["text"]
    if conversation is not None:
        remembered = memory_reply(last_user_text, conversation)
        if remembered is not None:
            return remembered
    if config.default is not None:
        return config.default
    return generated_text(config.tokens)


def _text_of(content: Any) -> str:
    """Text of a message content: a string or a list of typed parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def chat_texts(body: dict[str, Any]) -> tuple[str, int]:
    """(last user text, total input chars) of a chat completions body."""
    messages = body.get("messages") or []
    last, total = "", 0
    for msg in messages:
        if not isinstance(msg, dict):
            continue
        text = _text_of(msg.get("content"))
        total += len(text)
        if msg.get("role") == "user":
            last = text
    return last, total


def responses_texts(body: dict[str, Any]) -> tuple[str, int]:
    """(last user text, total input chars) of a responses body (or WS response.create)."""
    total = len(body.get("instructions") or "")
    items = body.get("input")
    if isinstance(items, str):
        return items, total + len(items)
    last = ""
    for item in items or []:
        if not isinstance(item, dict):
            continue
        text = _text_of(item.get("content")) or str(item.get("output", ""))
        total += len(text)
        if item.get("role") == "user":
            last = text
    return last, total


def chat_items(body: dict[str, Any]) -> list[Item]:
    """(role, text) of each chat message."""
    return [(str(m.get("role", "")), _text_of(m.get("content")))
            for m in body.get("messages") or [] if isinstance(m, dict)]


def responses_items(body: dict[str, Any]) -> list[Item]:
    """(role, text) of each responses input item; a plain string input is one user item."""
    items = body.get("input")
    if isinstance(items, str):
        return [("user", items)]
    return [(str(i.get("role") or i.get("type", "")),
             _text_of(i.get("content")) or str(i.get("output", "")))
            for i in items or [] if isinstance(i, dict)]


def input_tokens(chars: int) -> int:
    return chars // 4 + 1
