"""The JSON shapes of the OpenAI Chat Completions and Responses APIs, as the simulator sends
them."""

from __future__ import annotations

import json
import re
import time
import uuid
from typing import Any

from .profiles import StreamError

_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _dumps(obj: Any) -> str:
    """Compact JSON; a lone surrogate (a scripted broken reply) is sent as its \\u escape,
    as a JavaScript server would, so the text stays valid UTF-8."""
    text = _encode(obj)
    if text.isascii() or _LONE_SURROGATE.search(text) is None:
        return text
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def new_id(prefix: str, sep: str = "_") -> str:
    return f"{prefix}{sep}{uuid.uuid4().hex}"


def error_body(message: str, type_: str, code: str | None, param: str | None = None) -> dict:
    return {"error": {"message": message, "type": type_, "param": param, "code": code}}


# ---- chat completions -------------------------------------------------------------------

class ChatStream:
    """Builds the `data: ...` lines of one chat completions stream."""

    def __init__(self, model: str, include_usage: bool) -> None:
        self.id = new_id("chatcmpl", "-")
        self.model = model
        self.created = int(time.time())
        self.include_usage = include_usage
        head = {"id": self.id, "object": "chat.completion.chunk", "created": self.created,
                "model": model, "system_fingerprint": None}
        prefix = _dumps(head)[:-1]
        self._delta_head = "data: " + prefix + ',"choices":[{"index":0,"delta":{"content":'
        self._delta_tail = '},"logprobs":null,"finish_reason":null}]}\n\n'
        self._head = head

    def _chunk(self, choices: list, **extra: Any) -> str:
        return "data: " + _dumps({**self._head, "choices": choices, **extra}) + "\n\n"

    def start(self) -> str:
        delta = {"role": "assistant", "content": "", "refusal": None}
        return self._chunk([{"index": 0, "delta": delta, "logprobs": None, "finish_reason": None}])

    def tokens(self, tokens: list[str]) -> str:
        head, tail = self._delta_head, self._delta_tail
        return "".join(head + _dumps(t) + tail for t in tokens)

    def finish(self, reason: str, prompt_tokens: int, completion_tokens: int,
               done: bool = True) -> str:
        """The finish chunk, the usage chunk (if asked for) and `data: [DONE]` (unless not
        `done`)."""
        out = self._chunk([{"index": 0, "delta": {}, "logprobs": None, "finish_reason": reason}])
        if self.include_usage:
            out += self._chunk([], usage=chat_usage(prompt_tokens, completion_tokens))
        return out + "data: [DONE]\n\n" if done else out


    def error(self, style: StreamError, status: int) -> str:
        """A failure after the stream began, as the profile's server reports it."""
        message = f"simulated failure mid-stream ({status})"
        if style is StreamError.BARE:  # Ollama: its OpenAI error body, written into the stream
            kind = "invalid_request_error" if status < 500 else "api_error"
            return _dumps(error_body(message, kind, None)) + "\n"
        if style is StreamError.FIELD:  # llama.cpp: its error object in an `error:` field
            kind = "invalid_request_error" if status < 500 else "server_error"
            return "error: " + _dumps({"code": status, "message": message, "type": kind}) + \
                "\n\ndata: [DONE]\n\n"
        # vLLM's shape (its exception's name, the status as the code); gateways send the same
        kind = "BadRequestError" if status < 500 else "InternalServerError"
        err = {"message": message, "type": kind, "param": None, "code": status}
        return "data: " + _dumps({"error": err}) + "\n\ndata: [DONE]\n\n"


def chat_usage(prompt: int, completion: int) -> dict:
    return {"prompt_tokens": prompt, "completion_tokens": completion,
            "total_tokens": prompt + completion}


def chat_completion(model: str, text: str, reason: str, prompt: int, completion: int) -> dict:
    message = {"role": "assistant", "content": text, "refusal": None}
    return {
        "id": new_id("chatcmpl", "-"),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "system_fingerprint": None,
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": reason}],
        "usage": chat_usage(prompt, completion),
    }


# ---- responses --------------------------------------------------------------------------

def responses_usage(input_tokens: int, output_tokens: int) -> dict:
    return {"input_tokens": input_tokens, "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": output_tokens, "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": input_tokens + output_tokens}


class ResponseStream:
    """Builds the typed events of one Responses API stream (as dicts, or SSE text)."""

    def __init__(self, body: dict[str, Any], model: str, response_id: str | None = None) -> None:
        self.id = response_id or new_id("resp")
        self.item_id = new_id("msg")
        self.seq = 0
        self.response = {
            "id": self.id, "object": "response", "created_at": int(time.time()),
            "status": "in_progress", "background": False, "error": None,
            "incomplete_details": None, "instructions": body.get("instructions"),
            "max_output_tokens": body.get("max_output_tokens"), "model": model, "output": [],
            "parallel_tool_calls": True, "previous_response_id": body.get("previous_response_id"),
            "reasoning": {"effort": None, "summary": None}, "store": body.get("store", True),
            "temperature": body.get("temperature", 1.0), "text": {"format": {"type": "text"}},
            "tool_choice": "auto", "tools": [], "top_p": body.get("top_p", 1.0),
            "truncation": "disabled", "usage": None, "user": None,
            "metadata": body.get("metadata") or {},
        }
        self._delta_head = (
            '{"type":"response.output_text.delta","item_id":"' + self.item_id
            + '","output_index":0,"content_index":0,"logprobs":[],"delta":'
        )

    def _event(self, type_: str, **fields: Any) -> dict:
        event = {"type": type_, "sequence_number": self.seq, **fields}
        self.seq += 1
        return event

    def start(self) -> list[dict]:
        return [self._event("response.created", response=dict(self.response)),
                self._event("response.in_progress", response=dict(self.response))]

    def open_message(self) -> list[dict]:
        item = {"id": self.item_id, "type": "message", "status": "in_progress",
                "role": "assistant", "content": []}
        part = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
        return [self._event("response.output_item.added", output_index=0, item=item),
                self._event("response.content_part.added", item_id=self.item_id,
                            output_index=0, content_index=0, part=part)]

    def delta_json(self, token: str) -> str:
        """One output_text.delta event as JSON text (the hot path)."""
        out = self._delta_head + _dumps(token) + ',"sequence_number":' + str(self.seq) + "}"
        self.seq += 1
        return out

    def finish(self, text: str, input_tokens: int, output_tokens: int,
               truncated: bool = False) -> list[dict]:
        part = {"type": "output_text", "text": text, "annotations": [], "logprobs": []}
        item = {"id": self.item_id, "type": "message",
                "status": "incomplete" if truncated else "completed",
                "role": "assistant", "content": [part]}
        return [
            self._event("response.output_text.done", item_id=self.item_id, output_index=0,
                        content_index=0, text=text, logprobs=[]),
            self._event("response.content_part.done", item_id=self.item_id, output_index=0,
                        content_index=0, part=part),
            self._event("response.output_item.done", output_index=0, item=item),
            self.complete([item], input_tokens, output_tokens, truncated),
        ]

    def final(self, output: list, input_tokens: int, output_tokens: int,
              truncated: bool = False) -> dict:
        response = dict(self.response, status="completed", output=output,
                        usage=responses_usage(input_tokens, output_tokens))
        if truncated:  # cut at max_output_tokens, as the API reports it
            response["status"] = "incomplete"
            response["incomplete_details"] = {"reason": "max_output_tokens"}
        return response

    def complete(self, output: list, input_tokens: int, output_tokens: int,
                 truncated: bool = False) -> dict:
        final = self.final(output, input_tokens, output_tokens, truncated)
        kind = "response.incomplete" if truncated else "response.completed"
        return self._event(kind, response=final)

    def message_item(self, text: str) -> dict:
        part = {"type": "output_text", "text": text, "annotations": [], "logprobs": []}
        return {"id": self.item_id, "type": "message", "status": "completed",
                "role": "assistant", "content": [part]}


def sse(event: dict) -> str:
    return f"event: {event['type']}\ndata: {_dumps(event)}\n\n"


def sse_raw(type_: str, data_json: str) -> str:
    return f"event: {type_}\ndata: {data_json}\n\n"


def dumps(obj: Any) -> str:
    return _dumps(obj)
