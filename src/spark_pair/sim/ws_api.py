"""The Responses API WebSocket mode: GET /v1/responses upgraded; `response.create` messages in,
the same typed events as the SSE stream out, one JSON text message each."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from typing import Any

from aiohttp import WSMsgType, web

from . import http_api, wire
from .faults import Fault
from .memory import ResponseStore
from .prefill import PrefixCache, prefill_of, prompt_text, reply_item
from .replies import responses_items
from .schedule import TokenSchedule
from .state import STATE, SimState
from .turns import Dropped, plan_turn, pump

MAX_MESSAGE = 64 * 1024 * 1024
MAX_REMEMBERED = 1000


def ws_error(status: int, code: str | None, message: str, type_: str = "invalid_request_error",
             param: str | None = None, retry_after: float | None = None) -> dict[str, Any]:
    event: dict[str, Any] = {"type": "error", "status": status,
                             "error": {"type": type_, "code": code, "message": message,
                                       "param": param}}
    if retry_after is not None:  # the openai SDK's ResponseWsErrorError has `headers`
        event["error"]["headers"] = {"retry-after": f"{retry_after:g}"}
    return event


async def responses_get(request: web.Request) -> web.StreamResponse:
    state = request.app[STATE]
    ws = web.WebSocketResponse(max_msg_size=MAX_MESSAGE, autoping=True)
    if not ws.can_prepare(request).ok:
        return http_api.error_response(405, "Use POST /v1/responses, or a WebSocket upgrade.",
                                       "invalid_request_error", None)
    ok = state.auth_ok(request.headers)
    fault = state.faults.take("ws", handshake=True) if ok else None
    if fault is not None and fault.kind == "slow_handshake":
        await asyncio.sleep(float(fault.get("seconds")))
        fault = None
    refused = _handshake_refusal(fault, ok)
    if refused is not None:
        entry = state.add_entry(request.path, "ws", state.http_connection_id(request), None, ok,
                                request.headers)
        entry["status"], entry["fault"] = refused
        return _refusal_response(*refused, request)
    await ws.prepare(request)
    sock = SimSocket(state, ws, state.new_ws_connection(), request)
    await sock.run()
    return ws


def _handshake_refusal(fault: Fault | None, ok: bool) -> tuple[int, str | None] | None:
    if not ok:
        return 401, None
    if fault is None:
        return None
    if fault.kind == "ws_refuse":
        return 404, fault.kind
    return int(fault.get("status")), fault.kind


def _refusal_response(status: int, fault: str | None, request: web.Request) -> web.Response:
    if status == 401:
        return http_api.unauthorized()
    if fault == "redirect":
        return http_api.redirect(status, request)
    if fault == "html":
        return web.Response(status=status, text=http_api.HTML_PAGE, content_type="text/html")
    return http_api.error_response(404, "WebSocket mode is not available here.",
                                   "invalid_request_error", "not_found")


class _Steered(Exception):
    def __init__(self, sent: int) -> None:
        super().__init__(f"steered after {sent} tokens")
        self.sent = sent


class SimSocket:
    """One socket: responses run one at a time; ids created here can be continued here."""

    def __init__(self, state: SimState, ws: web.WebSocketResponse, conn_id: int,
                 request: web.Request) -> None:
        self.state = state
        self.ws = ws
        self.conn_id = conn_id
        self.request = request
        self.stored = ResponseStore(MAX_REMEMBERED)  # this socket's responses, for chaining
        self.completed = 0
        self.task: asyncio.Task[None] | None = None
        self.prefix = PrefixCache()  # what this socket processed (sim.prefill)
        self.streaming: str | None = None  # the id of the response being written
        self.first_sent = False  # its first token went out
        self.steer: list | None = None  # a correction waiting for the next token boundary

    async def run(self) -> None:
        try:
            async for msg in self.ws:
                if msg.type != WSMsgType.TEXT:
                    await self._send(ws_error(400, "invalid_message", "Send JSON text messages."))
                    continue
                await self._on_text(msg.data)
        finally:
            if self.task is not None and not self.task.done():
                self.task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await self.task

    async def _on_text(self, data: str) -> None:
        try:
            message = json.loads(data)
        except json.JSONDecodeError:
            message = None
        if isinstance(message, dict) and message.get("type") == "response.steer":
            await self._on_steer(message)
            return
        if not isinstance(message, dict) or message.get("type") != "response.create":
            await self._send(ws_error(400, "invalid_request_error",
                                      "Expected a JSON object with type 'response.create'."))
            return
        if self.task is not None and not self.task.done():
            await self._send(ws_error(400, "response_already_in_flight",
                                      "A response is already in progress on this socket."))
            return
        self.first_sent, self.steer = False, None
        self.task = asyncio.create_task(self._respond(message))

    async def _on_steer(self, message: dict[str, Any]) -> None:
        """A correction for the running response: `response.steer.pending` while it has not
        written yet, `accepted` once it ends (incomplete, reason `steered`) and a response
        chained on it starts with the correction; `failed` with none running. Off (config
        `steer`): the error a server without it gives."""
        self.state.add_entry(self.request.path, "ws", self.conn_id, message, True,
                             self.request.headers)["status"] = 200
        if not self.state.config.steer:
            await self._send(ws_error(400, "unsupported_message_type",
                                      "Unsupported message type 'response.steer'.", param="type"))
            return
        items = message.get("input")
        if isinstance(items, str):
            items = [{"role": "user", "content": items}]
        if not isinstance(items, list) or not items:
            await self._send({"type": "response.steer.failed", "response_id": self.streaming,
                              "error": {"code": "invalid_input", "message": "No input."}})
            return
        if self.task is None or self.task.done():
            await self._send({"type": "response.steer.failed", "response_id": None,
                              "error": {"code": "no_response_in_progress",
                                        "message": "No response is in progress."}})
            return
        self.steer = [*(self.steer or []), *items]
        if not self.first_sent:
            await self._send({"type": "response.steer.pending",
                              "response_id": self.streaming})

    async def _send(self, event: dict[str, Any]) -> None:
        await self.ws.send_str(wire.dumps(event))

    async def _respond(self, message: dict[str, Any]) -> None:
        state = self.state
        entry = state.add_entry(self.request.path, "ws", self.conn_id, message, True,
                                self.request.headers)
        body = dict(message.get("response") or {}) if isinstance(message.get("response"), dict) \
            else {k: v for k, v in message.items() if k != "type"}
        try:
            status = await self._answer(body, entry)
        except Dropped as exc:
            entry["status"], entry["output_tokens"] = 200, exc.sent
            return
        except (ConnectionError, asyncio.CancelledError):
            if entry["status"] is None:
                entry["status"] = 499
            raise
        entry["status"] = status

    async def _answer(self, body: dict[str, Any], entry: dict) -> int:
        state = self.state
        model = body.get("model")
        if model not in state.config.models:
            await self._send(ws_error(404, "model_not_found", f"The model `{model}` does not "
                                      "exist or you do not have access to it.", param="model"))
            return 404
        closing = state.faults.peek_ws_close(self.completed)
        if closing is not None:
            entry["fault"], entry["status"] = closing.kind, 400
            await self._send(ws_error(400, "websocket_connection_limit_reached",
                                      "Responses websocket connection limit reached. Create a "
                                      "new websocket connection to continue."))
            await self.ws.close()
            return 400
        previous = body.get("previous_response_id")
        if previous is not None and previous not in self.stored:
            await self._send(ws_error(400, "previous_response_not_found",
                                      f"Previous response with id '{previous}' not found.",
                                      param="previous_response_id"))
            return 400
        limit = state.faults.concurrency_limit("ws")
        if limit is not None and state.in_flight >= limit:
            entry["fault"] = "concurrency_limit"
            await self._send(ws_error(429, "rate_limit_exceeded", "Too many concurrent "
                                      "requests.", type_="requests", retry_after=1))
            return 429
        fault = state.faults.take("ws")
        if fault is not None:
            entry["fault"] = fault.kind
            status = await self._fault_event(fault)
            if status is not None:
                return status
        state.in_flight += 1
        try:
            return await self._generate(body, model, fault, entry)
        finally:
            state.in_flight -= 1

    async def _fault_event(self, fault: Fault) -> int | None:
        if fault.kind == "rate_limit":
            retry = float(fault.get("retry_after"))
            await self._send(ws_error(429, "rate_limit_exceeded", "Rate limit reached for "
                                      "requests.", type_="requests", retry_after=retry))
            return 429
        if fault.kind == "server_error":
            status = int(fault.get("status"))
            await self._send(ws_error(status, None, "The server is overloaded or not ready yet.",
                                      type_="server_error"))
            return status
        return None

    async def _generate(self, body: dict[str, Any], model: str, fault: Fault | None,
                        entry: dict) -> int:
        stream = wire.ResponseStream(body, model)
        entry["response_id"] = stream.id
        send = self.ws.send_str
        for event in stream.start():
            await send(wire.dumps(event))
        previous = body.get("previous_response_id")
        if body.get("generate") is False:
            await self._warm(body, entry)
            await send(wire.dumps(stream.complete([], 0, 0)))
            self._remember(stream.id, body, responses_items(body))
            return 200
        turn = plan_turn(self.state.config, body, "responses", self.stored.history(previous))
        config = self.state.config
        wait_ms = config.ttft_ms + prefill_of(turn.prompt, config.prefill_tps, self.prefix, entry)
        schedule = TokenSchedule(self.state.config.tps, wait_ms)
        for event in stream.open_message():
            await send(wire.dumps(event))
        self.streaming, self.first_sent = stream.id, False
        written: list[str] = []

        async def emit(tokens: list[str]) -> None:
            if self.steer is not None:
                raise _Steered(len(written))
            self.first_sent = True
            written.extend(tokens)
            for token in tokens:
                await send(stream.delta_json(token))

        try:
            sent = await pump(schedule, turn.tokens, emit, fault, self._abort)
        except _Steered as steered:
            return await self._steered(body, model, stream, turn, written, entry, steered.sent)
        finally:
            self.streaming = None
        entry["output_tokens"] = sent
        entry["last_token_time"] = time.time()
        if self.steer is not None:  # it came after the last token: too late
            self.steer = None
            await self._send({"type": "response.steer.failed", "response_id": stream.id,
                              "error": {"code": "response_completed",
                                        "message": "The response had already finished."}})
        for event in stream.finish(turn.text, turn.input_tokens, sent, turn.truncated):
            await send(wire.dumps(event))
        self.prefix.add(turn.prompt + reply_item(turn.text))
        self._remember(stream.id, body, turn.stored())
        return 200

    async def _warm(self, body: dict[str, Any], entry: dict) -> None:
        """`generate: false`: process the input (its prefill time) and keep it, write
        nothing."""
        history = self.stored.history(body.get("previous_response_id"))
        prompt = prompt_text(str(body.get("instructions") or ""),
                             [*history, *responses_items(body)])
        ms = prefill_of(prompt, self.state.config.prefill_tps, self.prefix, entry)
        await asyncio.sleep(ms / 1000)
        self.prefix.add(prompt)

    async def _steered(self, body: dict[str, Any], model: str, stream: wire.ResponseStream,
                       turn: Any, written: list[str], entry: dict, sent: int) -> int:
        """End the running response (incomplete, `steered`) and answer the correction in a
        response chained on it."""
        items, self.steer = self.steer or [], None
        text = "".join(written)
        entry["output_tokens"], entry["steered"] = sent, True
        final = stream.final([stream.message_item(text)], turn.input_tokens, sent)
        final.update(status="incomplete", incomplete_details={"reason": "steered"})
        await self._send({"type": "response.steer.accepted", "response_id": stream.id})
        await self._send({"type": "response.incomplete", "sequence_number": stream.seq,
                          "response": final})
        self.prefix.add(turn.prompt + reply_item(text))
        self._remember(stream.id, body, [*turn.items, ("assistant", text)])
        follow = {k: v for k, v in body.items() if k not in ("input", "previous_response_id")}
        follow.update(input=items, previous_response_id=stream.id)
        nxt = self.state.add_entry(self.request.path, "ws", self.conn_id, follow, True,
                                   self.request.headers)
        nxt["status"] = await self._generate(follow, model, None, nxt)
        return 200

    def _abort(self) -> None:
        if self.request.transport is not None:
            self.request.transport.abort()

    def _remember(self, response_id: str, body: dict[str, Any], items: list) -> None:
        self.completed += 1
        self.stored.put(response_id, body.get("previous_response_id"), items)
