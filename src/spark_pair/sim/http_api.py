"""HTTP model endpoints: GET /v1/models, POST /v1/chat/completions, POST /v1/responses."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from aiohttp import web

from . import wire
from .faults import Fault
from .prefill import prefill_of, reply_item
from .schedule import TokenSchedule
from .state import STATE, SimState
from .turns import Dropped, SimTurn, plan_turn, pump, wait_all_due

HTML_PAGE = (
    "<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body>"
    "<h1>Bad Gateway</h1><p>The proxy received an invalid response.</p></body></html>"
)
SSE_HEADERS = {"Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-cache"}


def error_response(status: int, message: str, type_: str, code: str | None,
                   param: str | None = None, headers: dict[str, str] | None = None) -> web.Response:
    return web.json_response(wire.error_body(message, type_, code, param), status=status,
                             headers=headers)


def unauthorized() -> web.Response:
    return error_response(401, "Incorrect API key provided.", "invalid_request_error",
                          "invalid_api_key")


def model_not_found(model: Any) -> web.Response:
    return error_response(404, f"The model `{model}` does not exist or you do not have access "
                          "to it.", "invalid_request_error", "model_not_found", "model")


def fault_response(fault: Fault, request: web.Request) -> web.Response | None:
    """The immediate answer for faults that replace the whole response."""
    if fault.kind == "redirect":
        return redirect(int(fault.get("status")), request)
    if fault.kind == "rate_limit":
        retry = fault.get("retry_after")
        return error_response(429, "Rate limit reached for requests. Please try again later.",
                              "requests", "rate_limit_exceeded",
                              headers={"Retry-After": f"{retry:g}"})
    if fault.kind == "server_error":
        return error_response(int(fault.get("status")), "The server is overloaded or not ready "
                              "yet.", "server_error", None)
    if fault.kind == "html":
        return web.Response(status=int(fault.get("status")), text=HTML_PAGE,
                            content_type="text/html")
    return None


def redirect(status: int, request: web.Request) -> web.Response:
    """A gateway's move from http to https: the same host and path, as a 3xx with a Location
    (and the short HTML page servers add to it)."""
    location = f"https://{request.host}{request.path_qs}"
    return web.Response(status=status, headers={"Location": location}, content_type="text/html",
                        text=f'<html><body><a href="{location}">Moved</a></body></html>')


def too_busy() -> web.Response:
    return error_response(429, "Too many concurrent requests.", "requests",
                          "rate_limit_exceeded", headers={"Retry-After": "1"})


async def models(request: web.Request) -> web.Response:
    state = request.app[STATE]
    ok = state.auth_ok(request.headers)
    entry = state.add_entry(request.path, "models", state.http_connection_id(request), None, ok)
    response = _models_response(state, ok, entry, request)
    entry["status"] = response.status
    return response


def _models_response(state: SimState, ok: bool, entry: dict,
                     request: web.Request) -> web.Response:
    if not ok:
        return unauthorized()
    fault = state.faults.take("models")
    if fault is not None:
        entry["fault"] = fault.kind
        answer = fault_response(fault, request)
        if answer is not None:
            return answer
    created = int(time.time())
    data = [{"id": m, "object": "model", "created": created, "owned_by": "spark-pair-sim"}
            for m in state.config.models]
    return web.json_response({"object": "list", "data": data})


async def chat(request: web.Request) -> web.StreamResponse:
    return await _model_request(request, "chat")


async def responses(request: web.Request) -> web.StreamResponse:
    return await _model_request(request, "responses")


async def _model_request(request: web.Request, api: str) -> web.StreamResponse:
    state = request.app[STATE]
    ok = state.auth_ok(request.headers)
    try:
        body: Any = await request.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        body = None
    entry = state.add_entry(request.path, api, state.http_connection_id(request), body, ok,
                            request.headers)
    try:
        response = await _serve(request, state, api, body, ok, entry)
    except Dropped as exc:
        entry["status"], entry["output_tokens"] = 200, exc.sent
        raise _Cut() from None
    except ConnectionError:  # the client went away mid-stream
        entry["status"] = 499
        raise _Cut() from None
    except asyncio.CancelledError:
        entry["status"] = 499
        raise
    if entry["status"] is None:
        entry["status"] = response.status
    return response


class _Cut(web.HTTPException):
    """Raised after the connection was aborted on purpose; nothing more is sent."""

    status_code = 500


async def _serve(request: web.Request, state: SimState, api: str, body: Any, ok: bool,
                 entry: dict) -> web.StreamResponse:
    if not ok:
        return unauthorized()
    if not isinstance(body, dict):
        return error_response(400, "We could not parse the JSON body of your request.",
                              "invalid_request_error", None)
    model = body.get("model")
    if model not in state.config.models:
        return model_not_found(model)
    limit = state.faults.concurrency_limit(api)
    if limit is not None and state.in_flight >= limit:
        entry["fault"] = "concurrency_limit"
        return too_busy()
    fault = state.faults.take(api)
    if fault is not None:
        entry["fault"] = fault.kind
        answer = fault_response(fault, request)
        if answer is not None:
            return answer
    previous = body.get("previous_response_id") if api == "responses" else None
    if previous is not None and previous not in state.responses:
        return error_response(400, f"Previous response with id '{previous}' not found.",
                              "invalid_request_error", "previous_response_not_found",
                              "previous_response_id")
    turn = plan_turn(state.config, body, api, state.responses.history(previous))
    cache = state.prefixes.of(entry["connection_id"])
    prefill = prefill_of(turn.prompt, state.config.prefill_tps, cache, entry)
    schedule = TokenSchedule(state.config.tps, state.config.ttft_ms + prefill)
    state.in_flight += 1
    try:
        if body.get("stream"):
            if api == "chat":
                return await _stream_chat(request, body, model, turn, schedule, fault, entry)
            response = await _stream_responses(request, body, model, turn, schedule, fault, entry)
        else:
            response = await _whole(request, body, api, model, turn, schedule, fault, entry)
        if api == "responses" and body.get("store", True) is not False:
            state.responses.put(entry["response_id"], previous, turn.stored())
        cache.add(turn.prompt + reply_item(turn.text))
        return response
    finally:
        state.in_flight -= 1


def _abort(request: web.Request):
    def abort() -> None:
        if request.transport is not None:
            request.transport.abort()
    return abort


async def _stream_chat(request: web.Request, body: dict, model: str, turn: SimTurn,
                       schedule: TokenSchedule, fault: Fault | None, entry: dict
                       ) -> web.StreamResponse:
    asked = bool((body.get("stream_options") or {}).get("include_usage"))
    include_usage = asked and request.app[STATE].profile.usage_chunk
    stream = wire.ChatStream(model, include_usage)
    entry["response_id"] = stream.id
    resp = web.StreamResponse(headers=SSE_HEADERS)
    await resp.prepare(request)
    out = _Body(resp, fault)
    await out.write(stream.start().encode())

    async def emit(tokens: list[str]) -> None:
        await out.write(stream.tokens(tokens).encode())

    if fault is not None and fault.kind == "stream_error":
        tokens = turn.tokens[:int(fault.get("after_tokens"))]
        entry["output_tokens"] = await pump(schedule, tokens, emit, None, _abort(request))
        style = request.app[STATE].profile.stream_error
        await resp.write(stream.error(style, int(fault.get("status"))).encode())
        await resp.write_eof()
        return resp
    if fault is not None and fault.kind == "interrupt":
        tokens = turn.tokens[:int(fault.get("after_tokens"))]
        entry["output_tokens"] = await pump(schedule, tokens, emit, None, _abort(request))
        await resp.write(b"data: [DONE]\n\n")
        await resp.write_eof()
        return resp
    sent = await pump(schedule, turn.tokens, emit, fault, _abort(request))
    entry["output_tokens"] = sent
    entry["last_token_time"] = time.time()
    reason = "length" if turn.truncated else "stop"
    held = fault is not None and fault.kind == "no_done"
    await out.write(stream.finish(reason, turn.input_tokens, sent, done=not held).encode())
    await out.flush()
    await _hold_open(fault)
    await resp.write_eof()
    return resp


async def _stream_responses(request: web.Request, body: dict, model: str, turn: SimTurn,
                            schedule: TokenSchedule, fault: Fault | None, entry: dict
                            ) -> web.StreamResponse:
    stream = wire.ResponseStream(body, model)
    entry["response_id"] = stream.id
    resp = web.StreamResponse(headers=SSE_HEADERS)
    await resp.prepare(request)
    out = _Body(resp, fault)
    head = stream.start() + stream.open_message()
    await out.write("".join(wire.sse(e) for e in head).encode())

    async def emit(tokens: list[str]) -> None:
        kind = "response.output_text.delta"
        await out.write("".join(wire.sse_raw(kind, stream.delta_json(t)) for t in tokens).encode())

    sent = await pump(schedule, turn.tokens, emit, fault, _abort(request))
    entry["output_tokens"] = sent
    entry["last_token_time"] = time.time()
    tail = stream.finish(turn.text, turn.input_tokens, sent, turn.truncated)
    await out.write("".join(wire.sse(e) for e in tail).encode())
    await out.flush()
    await _hold_open(fault)
    await resp.write_eof()
    return resp


class _Body:
    """A stream body's writes; the `buffer` fault holds them all until `flush()`."""

    def __init__(self, resp: web.StreamResponse, fault: Fault | None) -> None:
        self.resp = resp
        self.held: list[bytes] | None = [] if fault is not None and fault.kind == "buffer" \
            else None

    async def write(self, data: bytes) -> None:
        if self.held is None:
            await self.resp.write(data)
        else:
            self.held.append(data)

    async def flush(self) -> None:
        if self.held:
            await self.resp.write(b"".join(self.held))
            self.held = []


async def _hold_open(fault: Fault | None) -> None:
    """The `no_done` fault: the body is left open after its last event (a client that leaves
    ends the wait)."""
    if fault is not None and fault.kind == "no_done":
        await asyncio.sleep(float(fault.get("seconds")))


async def _whole(request: web.Request, body: dict, api: str, model: str, turn: SimTurn,
                 schedule: TokenSchedule, fault: Fault | None, entry: dict) -> web.StreamResponse:
    """A non-streaming reply, sent when its last token would have been."""
    if fault is not None and fault.kind == "drop":
        await wait_all_due(schedule, min(len(turn.tokens), int(fault.get("after_tokens"))))
        _abort(request)()
        raise Dropped(0)
    if fault is not None and fault.kind == "stall":
        await asyncio.sleep(float(fault.get("seconds")))
    await wait_all_due(schedule, len(turn.tokens))
    sent = len(turn.tokens)
    entry["output_tokens"] = sent
    entry["last_token_time"] = time.time()
    if api == "chat":
        reason = "length" if turn.truncated else "stop"
        out = wire.chat_completion(model, turn.text, reason, turn.input_tokens, sent)
    else:
        stream = wire.ResponseStream(body, model)
        out = stream.final([stream.message_item(turn.text)], turn.input_tokens, sent,
                           turn.truncated)
    entry["response_id"] = out["id"]
    return web.json_response(out)
