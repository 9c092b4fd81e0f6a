"""The simulator's mutable state: settings, faults, the request log and connection counters."""

from __future__ import annotations

import copy
import itertools
import time
from typing import Any

from aiohttp import web

from .faults import Fault, FaultBook, fault_from_dict
from .memory import ResponseStore
from .prefill import Connections
from .profiles import DEFAULT, PROFILES, Profile
from .replies import SimConfig

MAX_LOG = 10_000
MAX_STORED = 1000  # HTTP responses kept for previous_response_id


class SimState:
    def __init__(self, config: SimConfig, faults: list[Fault] | None = None,
                 profile: Profile = PROFILES[DEFAULT]) -> None:
        self.profile = profile  # which endpoints exist and how they answer; fixed for the run
        self._initial = (config.copy(), copy.deepcopy(faults or []))
        self._conn_ids = itertools.count(1)
        self._by_transport: dict[int, tuple[Any, int]] = {}
        self.in_flight = 0  # not reset: responses still running keep counting themselves
        self.reset()

    def reset(self) -> None:
        config, faults = self._initial
        self.config = config.copy()
        self.faults = FaultBook(copy.deepcopy(faults))
        self.log: list[dict[str, Any]] = []
        self.responses = ResponseStore(MAX_STORED)  # HTTP /v1/responses, all connections
        self.prefixes = Connections()  # what each HTTP connection processed (sim.prefill)
        self._seq = itertools.count(1)
        self.ws_connections = 0
        self.http_connections = 0

    def set_faults(self, faults: list[dict[str, Any]]) -> None:
        self.faults = FaultBook([fault_from_dict(f) for f in faults])

    def new_ws_connection(self) -> int:
        self.ws_connections += 1
        return next(self._conn_ids)

    def http_connection_id(self, request: web.Request) -> int:
        """A number unique to the TCP connection the request came on."""
        transport = request.transport
        key = id(transport)
        known = self._by_transport.get(key)
        if known is not None and known[0] is transport:
            return known[1]
        if len(self._by_transport) > 1000:
            self._by_transport = {k: v for k, v in self._by_transport.items()
                                  if v[0] is not None and not v[0].is_closing()}
        conn_id = next(self._conn_ids)
        self._by_transport[key] = (transport, conn_id)
        self.http_connections += 1
        return conn_id

    def auth_ok(self, headers: Any) -> bool:
        key = self.config.api_key
        return not key or headers.get("Authorization", "") == f"Bearer {key}"

    def add_entry(self, path: str, transport: str, connection_id: int, body: Any,
                  auth_ok: bool, headers: Any = None) -> dict[str, Any]:
        """Log one request. Headers are never logged (they carry the key), only the client's
        User-Agent."""
        entry = {"seq": next(self._seq), "time": time.time(), "path": path,
                 "transport": transport, "connection_id": connection_id, "body": body,
                 "auth_ok": auth_ok, "status": None, "fault": None, "output_tokens": 0,
                 "response_id": None, "last_token_time": None, "prefill_ms": 0.0,
                 "unseen_tokens": 0,
                 "user_agent": headers.get("User-Agent") if headers is not None else None}
        self.log.append(entry)
        if len(self.log) > MAX_LOG:
            del self.log[: len(self.log) - MAX_LOG]
        return entry

    def stats(self) -> dict[str, int]:
        return {"ws_connections": self.ws_connections, "http_connections": self.http_connections,
                "in_flight": self.in_flight, "requests": len(self.log)}


STATE: web.AppKey[SimState] = web.AppKey("sim_state", SimState)
