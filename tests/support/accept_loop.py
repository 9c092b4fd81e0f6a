"""The accept loop the small loopback servers share (each runs as its own process): a port on
127.0.0.1, printed for the test, and a thread per connection until `lifetime` seconds pass."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable


def serve_forever(serve: Callable[[socket.socket], object], lifetime: float) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    server.settimeout(lifetime)
    print(server.getsockname()[1], flush=True)
    end = time.monotonic() + lifetime
    while time.monotonic() < end:
        try:
            conn, _ = server.accept()
        except OSError:
            break
        threading.Thread(target=serve, args=(conn,), daemon=True).start()
