"""Doctor's WebSocket probe: the Responses WebSocket mode's handshake and turns, a message
read up to MAX_MESSAGE_BYTES and a turn's text up to MAX_REPLY_BYTES."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any

from ...base import errors as E
from ...protocol import errors_map
from ...protocol.limits import MAX_MESSAGE_BYTES, MAX_REPLY_BYTES, too_large
from ...protocol.request import BETA_HEADER, CONNECT_STAGGER_S, user_agent
from .probe import HttpProbe
from .wire import DROP_HINT, responses_text, ws_url


class WsProbe:
    """At most one open socket to the server's /v1/responses."""

    def __init__(self, probe: HttpProbe, on_progress: Callable[[str], None]) -> None:
        self.probe = probe
        self.url = ws_url(probe.base, "/v1/responses")
        self.ws: Any = None
        self.on_progress = on_progress  # what arrived so far, for a turn that times out

    async def connect(self) -> None:
        from ...protocol.responses_ws import connect  # never follows a redirect

        headers = dict([BETA_HEADER])
        if self.probe.key:
            headers["Authorization"] = f"Bearer {self.probe.key}"
        cfg = self.probe.cfg
        self.ws = await connect(self.url, additional_headers=headers,
                                user_agent_header=user_agent(),
                                open_timeout=cfg.check_timeout_s, max_size=MAX_MESSAGE_BYTES,
                                happy_eyeballs_delay=CONNECT_STAGGER_S)

    async def drop(self) -> None:
        """Close the open WebSocket (bounded), or drop it if it does not close in time."""
        ws, self.ws = self.ws, None
        if ws is None:
            return
        try:
            await asyncio.wait_for(ws.close(), 1.0)
        except Exception:  # noqa: BLE001 - closing is best effort
            transport = getattr(ws, "transport", None)
            if transport is not None:
                transport.abort()

    async def turn(self, extra: dict[str, Any],
                   model: str | None = None) -> tuple[str, str | None, float | None]:
        """One response.create on the open socket: (text, response id, ttft seconds)."""
        from ...protocol.responses_ws import closed_for_size

        message = {"type": "response.create", "model": model or self.probe.cfg.model,
                   "max_output_tokens": 32, **extra}
        start = time.perf_counter()
        await self.ws.send(json.dumps(message))
        parts: list[str] = []
        ttft = None
        size = 0
        for _ in range(100_000):  # bounded; the check's timeout bounds the time
            try:
                raw = await self.ws.recv()
            except Exception as exc:
                if closed_for_size(exc):
                    raise too_large(self.url, "a WebSocket message", MAX_MESSAGE_BYTES) from None
                broken = errors_map.ws_broken(exc, self.url)
                if broken is not None:  # the server broke the protocol: named as such
                    raise broken from None
                raise
            size += len(raw)
            if size > MAX_REPLY_BYTES:
                raise too_large(self.url, "a reply", MAX_REPLY_BYTES)
            event = json.loads(raw)
            kind = event.get("type")
            if kind == "response.output_text.delta":
                if ttft is None:
                    ttft = time.perf_counter() - start
                parts.append(event.get("delta") or "")
                self.on_progress(f"{len(parts)} deltas arrived, then nothing")
            elif kind in ("error", "response.failed"):
                raise self.probe.event_error(event, self.url)
            elif kind in ("response.completed", "response.incomplete"):  # 32 tokens may cut it
                response = event.get("response") or {}
                return "".join(parts) or responses_text(response), response.get("id"), ttft
        raise E.ProtocolError("the WebSocket turn never completed", url=self.url)

    async def memory(self, first: dict[str, str],
                     second: dict[str, str]) -> tuple[str, str, bool]:
        """Two turns on a fresh socket, chained; if the server closes the socket after the
        first turn, reconnect once and resend the history (as the client does). Returns the
        second reply, how it was asked, and whether it was chained (not resent)."""
        from websockets.exceptions import ConnectionClosed

        url = self.url
        try:
            await self.connect()
            reply1, rid, _ = await self.turn({"input": [first]})
            if not rid:
                raise E.ProtocolError("the first WS turn returned no response id", url=url)
            try:
                reply2, _, _ = await self.turn({"input": [second], "previous_response_id": rid})
                return reply2, "ws, chained with previous_response_id", True
            except (ConnectionClosed, E.BadRequest) as exc:
                if isinstance(exc, E.BadRequest) and "connection" not in exc.message.lower():
                    raise
            await self.drop()
            await self.connect()
            history = [first, {"role": "assistant", "content": reply1}, second]
            reply2, _, _ = await self.turn({"input": history})
            return reply2, "ws, the server closed the socket after one turn; reconnected, " \
                           "history resent", False
        except ConnectionClosed as exc:
            raise E.StreamDropped(f"the server closed the WebSocket during the memory check "
                                  f"({exc})", url=url, hint=DROP_HINT) from exc
        finally:
            await self.drop()
