"""A resolver for the tests: with DUAL_NAME set, that name resolves to ::1 and then 127.0.0.1
(as `localhost` does on many systems), in every process that has this folder on PYTHONPATH."""

from __future__ import annotations

import _socket
import os
from collections.abc import Callable
from typing import Any


def both(name: str, real: Callable[..., Any]) -> Callable[..., Any]:
    """`getaddrinfo` with `name` answering ::1 first, then 127.0.0.1 (the same port)."""

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if (host.decode() if isinstance(host, bytes) else host) == name:
            return [*real("::1", port, *args, **kwargs), *real("127.0.0.1", port, *args, **kwargs)]
        return real(host, port, *args, **kwargs)

    return getaddrinfo


if os.environ.get("DUAL_NAME"):
    _socket.getaddrinfo = both(os.environ["DUAL_NAME"], _socket.getaddrinfo)
