"""Doctor's wire helpers: URL shape, status mapping, SSE parsing and stream judging."""

from __future__ import annotations

import json
import time
import urllib.request
from collections.abc import Mapping
from typing import Any

import httpx

from ...base import errors as E
from ...base.errors import SparkPairError
from ...base.urls import normalize_base_url
from ...protocol import errors_map, metrics
from ...protocol.chat import chat_body
from ...protocol.events import Message, TurnRequest
from ...protocol.responses_sse import responses_body
from .results import Passed

# ---- URL shape ---------------------------------------------------------------------------

def url_problems(url: str) -> list[str]:
    """What is wrong with a configured base URL (empty list: looks right)."""
    try:
        _, notes = normalize_base_url(url)
    except SparkPairError as exc:
        return [exc.message]
    return notes


def probe_url(url: str) -> str:
    """The URL the client really uses (normalized), or the value as given if it cannot be."""
    try:
        return normalize_base_url(url)[0]
    except SparkPairError:
        return url.strip()


def api_url(base_url: str, path: str) -> str:
    return base_url.strip().rstrip("/") + path


def ws_url(base_url: str, path: str) -> str:
    url = api_url(base_url, path)
    return "wss" + url[5:] if url.startswith("https") else "ws" + url[4:]


# ---- request bodies -------------------------------------------------------------------

def request_body(api: str, model: str, messages: list[dict[str, str]], max_tokens: int, *,
                 stream: bool) -> dict[str, Any]:
    """A chat or responses create body, built by the model client's own builders, so a check
    sends what a turn sends (the same token-limit field, the same message shape)."""
    request = TurnRequest("", [Message(m["role"], m["content"]) for m in messages])
    if api == "chat":
        body = chat_body(request, model, max_tokens, None)
        if not stream:
            body["stream"] = False
            del body["stream_options"]
        return body
    body = responses_body(request, model, max_tokens, None)
    body["stream"] = stream
    return body


# ---- HTTP status -> error ---------------------------------------------------------------

def http_error(resp_status: int, body: str, url: str, content_type: str = "",
               headers: Mapping[str, str] | None = None, api_key: str | None = None,
               model: str = "", auth_hint: str | None = None) -> E.ModelError:
    """The error a response means (the client's mapping), with doctor's fuller 401 hint."""
    err = errors_map.error_from_response(resp_status, body, url, api_key=api_key,
                                         headers=headers, model=model, content_type=content_type)
    if isinstance(err, E.AuthError) and auth_hint:
        err.hint = auth_hint
    return err


def link_error(exc: Exception, url: str) -> E.ModelError:
    if isinstance(exc, httpx.TimeoutException):
        return E.StreamTimeout(f"no answer from {url} in time ({type(exc).__name__})", url=url)
    if isinstance(exc, httpx.ConnectError):
        return E.ConnectionFailed(f"cannot connect to {url}: {exc}", url=url)
    if isinstance(exc, httpx.RemoteProtocolError):  # a malformed answer is named as such
        broken = errors_map.http_broken(exc, url)
        if isinstance(broken, E.ProtocolViolation):
            return broken
    return E.StreamDropped(f"the connection to {url} broke: {exc or type(exc).__name__}", url=url,
                           hint=DROP_HINT)


# the check is not retried: what a drop during one means
DROP_HINT = ("run doctor again; if it keeps breaking, a proxy or load balancer that cuts streams "
             "or an unstable server is in the way: try another transport ([session] transport)")


# ---- stream helpers --------------------------------------------------------------------

# Faster than any model streams: a span this short for its tokens is a buffer being read out.
MAX_STREAM_TPS = 20_000.0
# A streaming server's events reach the client one to a few per network read (one per token at
# 1,200 tok/s; about five when 5,000 tok/s are written once a millisecond); a buffer's arrive
# by the packetful.
DELTAS_PER_READ = 8


def stream_shape(stats: Mapping[str, Any]) -> tuple[int, int, float]:
    """(tokens, reads, spread in s) of a streamed reply: its output tokens (usage, else one a
    delta), the network reads that carried its deltas (distinct arrival times if not counted)
    and the time from its first delta to its last."""
    times: list[float] = stats["times"]
    usage = stats["usage"] or {}
    counted = usage.get("output_tokens", usage.get("completion_tokens"))
    reads = stats.get("reads") or len(set(times))
    return counted or len(times), reads, (times[-1] - times[0]) if times else 0.0


def buffered(stats: Mapping[str, Any]) -> bool:
    """Whether a stream's deltas look held back and released together: many of them, after a
    wait long enough to tell, read out in a few network reads, within less time than the
    fastest model needs for their tokens. A fast model after a slow first token is not this:
    its deltas come in many reads, spread over tokens / rate."""
    deltas = len(stats["times"])
    if deltas < 8 or stats["total_s"] < 0.05:
        return False
    tokens, reads, spread = stream_shape(stats)
    return reads * DELTAS_PER_READ <= deltas and spread < tokens / MAX_STREAM_TPS


def judge_stream(api: str, stats: dict[str, Any]) -> Passed:
    """Pass with the measured TTFT and rate (a note when slow or without usage), or fail when
    the whole stream arrived at once (something buffers it)."""
    times: list[float] = stats["times"]
    usage = stats["usage"] or {}
    ended = stats.get("ended", "end")
    if not times:
        raise E.ProtocolError(f"the {api} stream ended without any text", hint=None)
    last, total = times[-1], stats["total_s"]
    tokens, reads, spread = stream_shape(stats)
    # times are seconds after the request was sent; the client's own formula rates them
    timed = metrics.timing(0.0, times[0], last, tokens)
    ttft, tps = timed.ttft_s or 0.0, timed.tokens_per_s
    data = {"api": api, "ttft_ms": round(ttft * 1000, 1), "tokens": tokens, "deltas": len(times),
            "reads": reads, "tokens_per_s": round(tps, 1) if tps else None, "usage": bool(usage),
            "ended": ended}
    if buffered(stats):
        within = f" within {spread * 1000:.1f} ms" if reads > 1 else ""
        raise E.StreamTimeout(
            f"the stream arrived all at once: {len(times)} deltas came in {reads} network "
            f"read{'s' if reads > 1 else ''}{within}, after {ttft * 1000:.0f} ms of silence "
            f"(no model streams {tokens} tokens in under {tokens / MAX_STREAM_TPS * 1000:.1f} "
            "ms)",
            hint="something between you and the model buffers the stream (a proxy or gateway): "
                 "turn response buffering off there, or use the WebSocket transport")
    rate = f"{tps:,.0f} tok/s" if tps else "too short to rate"
    judged = "" if total >= 0.05 else " (too fast to judge buffering)"
    notes = []
    if ended == "limit":
        notes.append(f"slow but streaming: {len(times)} deltas in {total:.1f} s ({rate}), "
                     f"still arriving when reading stopped at the {stats['limit_s']:g} s limit")
    elif ended == "tokens":
        notes.append("the server ignored the token limit; reading stopped after "
                     f"{len(times)} deltas")
    if not usage and ended == "end":
        notes.append("no usage in the stream: spark-pair estimates token counts here")
    return Passed(f"{api}: TTFT {ttft * 1000:.0f} ms, {tokens} tokens, {rate}, "
                  f"{len(times)} deltas spread over {spread * 1000:.0f} ms{judged}", data,
                  note="; ".join(notes))


def parse_event(data: str, url: str) -> dict[str, Any] | None:
    if data.strip() == "[DONE]":
        return None
    try:
        event = json.loads(data)
    except ValueError:
        raise E.ProtocolError("a stream event is not JSON", url=url, body=data) from None
    if not isinstance(event, dict):
        raise E.ProtocolError("a stream event is not a JSON object", url=url, body=data)
    return event


def responses_text(data: Mapping[str, Any]) -> str:
    if isinstance(data.get("output_text"), str):
        return data["output_text"]
    parts = []
    for item in data.get("output") or []:
        for content in (item.get("content") or []) if isinstance(item, dict) else []:
            if isinstance(content, dict) and content.get("type") == "output_text":
                parts.append(content.get("text") or "")
    return "".join(parts)


def proxy_for(scheme: str, host: str) -> str | None:
    proxies = urllib.request.getproxies()
    proxy = proxies.get(scheme) or proxies.get("all")
    if not proxy or urllib.request.proxy_bypass(host):
        return None
    return proxy


def has_request(exc: httpx.HTTPError) -> bool:
    try:
        exc.request  # noqa: B018
    except RuntimeError:
        return False
    return True


def ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000
