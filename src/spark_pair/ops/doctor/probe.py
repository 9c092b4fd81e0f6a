"""Doctor's HTTP probe: one request, its body read within the wire's size limits, and what an
answer means as an error.

Whatever a broken or hostile server sends, doctor holds no more of an answer than the client
does (protocol.limits): a JSON answer up to MAX_BODY_BYTES (over it: TooLarge), the first
MAX_ERROR_BODY_BYTES of an error, an HTML page or any other body it only quotes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import httpx

from ...base import errors as E
from ...protocol import errors_map
from ...protocol.http_common import error_body, raw_chunks
from ...protocol.limits import MAX_BODY_BYTES, Inflater, read_body
from .results import DoctorConfig
from .wire import api_url, http_error, request_body, responses_text


@dataclass(frozen=True, slots=True)
class Answer:
    """An answer as doctor read it: its status, headers and (bounded) body."""

    url: str
    status: int
    headers: httpx.Headers
    body: bytes

    @property
    def ctype(self) -> str:
        return self.headers.get("content-type", "")

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")


class HttpProbe:
    """Requests to one server with the configured key, over doctor's HTTP client."""

    def __init__(self, cfg: DoctorConfig, base: str, http: httpx.AsyncClient) -> None:
        self.cfg, self.base, self.http = cfg, base, http
        self.key = (cfg.api_key or "").strip() or None

    def headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        if self.key:
            headers["Authorization"] = f"Bearer {self.key}"
        return headers

    async def fetch(self, method: str, path: str, body: dict[str, Any] | None = None) -> Answer:
        """One request; a 200 JSON body read whole up to MAX_BODY_BYTES (TooLarge over it,
        with the status), any other body's first MAX_ERROR_BODY_BYTES."""
        url = api_url(self.base, path)
        async with self.http.stream(method, url, json=body, headers=self.headers()) as resp:
            ctype = resp.headers.get("content-type", "")
            if resp.status_code == 200 and "html" not in ctype.lower():
                try:
                    inflater = Inflater(resp.headers.get("content-encoding", ""), url,
                                        MAX_BODY_BYTES, "an answer")
                    data = await read_body(raw_chunks(resp), inflater)
                except E.ModelError as exc:
                    exc.status = resp.status_code
                    raise
            else:
                data = (await error_body(resp, url)).encode()
        return Answer(url, resp.status_code, resp.headers, data)

    async def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """POST a JSON body; the JSON object of its 200 answer, else the error it means."""
        answer = await self.fetch("POST", path, body)
        if answer.status != 200:
            raise self.http_error(answer, body.get("model", ""))
        return self.json(answer)

    async def ask(self, api: str, model: str, messages: list[dict[str, str]],
                  max_tokens: int = 32) -> tuple[str, dict[str, Any] | None]:
        """One non-streaming request to `api` (chat or responses): (text, usage)."""
        if api == "chat":
            data = await self.post("/v1/chat/completions",
                                   request_body("chat", model, messages, max_tokens,
                                                stream=False))
            try:
                text = data["choices"][0]["message"]["content"] or ""
            except (KeyError, IndexError, TypeError):
                raise E.ProtocolError("the chat completion has no choices[0].message.content",
                                      body=json.dumps(data)) from None
            return text, data.get("usage")
        data = await self.post("/v1/responses",
                               request_body("responses", model, messages, max_tokens,
                                            stream=False))
        return responses_text(data), data.get("usage")

    # ---- what an answer means ---------------------------------------------------------------

    def json(self, answer: Answer) -> dict[str, Any]:
        """The JSON object of a 200 answer; an HTML page or other body is a clear error."""
        if "html" in answer.ctype.lower():
            raise self.html_error(answer)
        try:
            data = json.loads(answer.body)
        except ValueError:
            data = None
        if not isinstance(data, dict):
            raise E.ProtocolError(f"{answer.url} answered with {answer.ctype or 'no content type'}"
                                  f", not a JSON object: {E.excerpt(answer.text, 200)}",
                                  url=answer.url, status=answer.status, body=answer.text)
        return data

    def html_error(self, answer: Answer) -> E.ProtocolError:
        return E.ProtocolError(
            f"{answer.url} answered HTTP {answer.status} with an HTML page ({answer.ctype}), "
            f"not JSON: {errors_map.body_excerpt(answer.text)}",
            url=answer.url, status=answer.status, body=answer.text, hint=errors_map.HTML_HINT)

    def http_error(self, answer: Answer, model: str = "") -> E.ModelError:
        return self.status_error(answer.status, answer.text, answer.url, answer.headers, model)

    def status_error(self, status: int, body: str, url: str, headers: httpx.Headers,
                     model: str = "") -> E.ModelError:
        """The error an answer's status and (bounded) body mean."""
        ctype = headers.get("content-type", "")
        moved = 300 <= status < 400  # a redirect's page says less than its Location
        if ("html" in ctype.lower() and not moved and status not in (401, 403, 429)
                and status < 500):
            return self.html_error(Answer(url, status, headers, body.encode()))
        return http_error(status, body, url, ctype, headers, self.cfg.api_key,
                          model or self.cfg.model or "", auth_hint(self.cfg))

    def event_error(self, event: dict[str, Any], url: str) -> E.ModelError:
        err = errors_map.error_object(
            event.get("error") or (event.get("response") or {}).get("error") or {})
        status = event.get("status") if isinstance(event.get("status"), int) else None
        out = errors_map.error_from_event(err, url, status=status, model=self.cfg.model or "",
                                          api_key=self.cfg.api_key)
        if isinstance(out, E.AuthError):
            out.hint = auth_hint(self.cfg)
        return out


def auth_hint(cfg: DoctorConfig) -> str:
    """Why a key is refused, judged from what the key looks like."""
    raw, env = cfg.api_key, cfg.api_key_env
    noted = key_notes(cfg)
    if noted:
        return noted[0] + "; if that is not it: is it the right key for this base URL?"
    if not raw or not raw.strip():
        return (f"no key was sent: the env var {env} is empty or not exported in this shell "
                f"(`export {env}=...`), or [model] api_key_env names another variable")
    if raw != raw.strip():
        return (f"the key in {env} has leading/trailing whitespace or a newline; spark-pair "
                "stripped it and the server still refused it: re-copy the key")
    if raw.lower().startswith("bearer "):
        return f"the key in {env} starts with 'Bearer '; store only the key itself"
    return (f"the key from {env} was sent and refused: is it the right key for this base "
            "URL (not another provider's), not deleted, not out of credit?")


def key_notes(cfg: DoctorConfig) -> list[str]:
    """The config loader's warnings about the key's shape (whitespace, 'Bearer ')."""
    return [w for w in cfg.warnings if w.startswith("the key")]
