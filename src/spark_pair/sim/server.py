"""The aiohttp application: model endpoints under /v1, control endpoints under /_sim."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from typing import Any

from aiohttp import web

from ..base import gcpolicy
from . import http_api, ws_api
from .faults import Fault, FaultSpecError
from .profiles import DEFAULT, PROFILES, Endpoint, Profile
from .replies import SimConfig
from .state import STATE, SimState

MAX_BODY = 64 * 1024 * 1024
WATCH_PARENT_ENV = "SPARK_PAIR_SIM_WATCH_PARENT"


def make_app(config: SimConfig, faults: list[Fault] | None = None,
             profile: Profile = PROFILES[DEFAULT]) -> web.Application:
    app = web.Application(client_max_size=MAX_BODY)
    app[STATE] = SimState(config, faults, profile)
    offered = profile.endpoints
    if Endpoint.MODELS in offered:
        app.router.add_get("/v1/models", http_api.models)
    if Endpoint.CHAT in offered:
        app.router.add_post("/v1/chat/completions", http_api.chat)
    if Endpoint.RESPONSES in offered:
        app.router.add_post("/v1/responses", http_api.responses)
    if Endpoint.WS in offered:
        app.router.add_get("/v1/responses", ws_api.responses_get)
    app.router.add_get("/_sim/requests", get_requests)
    app.router.add_delete("/_sim/requests", clear_requests)
    app.router.add_post("/_sim/faults", set_faults)
    app.router.add_post("/_sim/config", set_config)
    app.router.add_post("/_sim/reset", reset)
    app.router.add_get("/_sim/stats", stats)
    app.router.add_route("*", "/{path:.*}", not_found)  # last: the profile's own 404
    return app


async def not_found(request: web.Request) -> web.Response:
    """A path this server does not serve, answered as the profiled server answers it."""
    state = request.app[STATE]
    answer = state.profile.not_found
    entry = state.add_entry(request.path, "none", state.http_connection_id(request), None, True)
    entry["status"] = answer.status
    return web.Response(status=answer.status, text=answer.body,
                        content_type=answer.content_type)


def _bad(message: str) -> web.Response:
    return web.json_response({"error": {"message": message}}, status=400)


async def get_requests(request: web.Request) -> web.Response:
    return web.json_response(request.app[STATE].log)


async def clear_requests(request: web.Request) -> web.Response:
    request.app[STATE].log.clear()
    return web.json_response({"ok": True})


async def set_faults(request: web.Request) -> web.Response:
    data = await _json(request)
    faults = data.get("faults") if isinstance(data, dict) else None
    if not isinstance(faults, list):
        return _bad('expected {"faults": [...]}')
    try:
        request.app[STATE].set_faults(faults)
    except (FaultSpecError, TypeError, ValueError) as exc:
        return _bad(str(exc))
    return web.json_response({"ok": True, "faults": [f.to_dict() for f in
                                                      request.app[STATE].faults.faults]})


async def set_config(request: web.Request) -> web.Response:
    data = await _json(request)
    if not isinstance(data, dict):
        return _bad("expected a JSON object")
    try:
        request.app[STATE].config.update(data)
    except KeyError as exc:
        return _bad(f"unknown setting {exc.args[0]!r}")
    return web.json_response({"ok": True})


async def reset(request: web.Request) -> web.Response:
    request.app[STATE].reset()
    return web.json_response({"ok": True})


async def stats(request: web.Request) -> web.Response:
    return web.json_response(request.app[STATE].stats())


async def _json(request: web.Request) -> Any:
    try:
        return await request.json()
    except ValueError:
        return None


async def serve(config: SimConfig, faults: list[Fault], host: str, port: int,
                profile: Profile = PROFILES[DEFAULT]) -> None:
    """Run until SIGTERM/SIGINT. Prints the listening line first (flushed)."""
    runner = web.AppRunner(make_app(config, faults, profile), access_log=None,
                           handle_signals=False, shutdown_timeout=0.5,
                           handler_cancellation=True)  # a client that leaves ends its stall
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    bound = runner.addresses[0]
    print(f"spark-pair sim listening on http://{host}:{bound[1]}", flush=True)
    gcpolicy.started()  # set up: what start-up made is never walked again
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    watch = None
    if os.environ.get(WATCH_PARENT_ENV):
        watch = asyncio.create_task(_stop_when_orphaned(stop, os.getppid()))
    try:
        await stop.wait()
    finally:
        if watch is not None:
            watch.cancel()
        await runner.cleanup()
        sys.stdout.flush()


async def _stop_when_orphaned(stop: asyncio.Event, parent: int) -> None:
    """Under SimProcess: exit if the parent dies without stopping us (no stray simulators)."""
    while not stop.is_set():
        if os.getppid() != parent:
            stop.set()
            return
        await asyncio.sleep(0.5)
