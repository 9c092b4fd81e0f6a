"""`spark-pair` for the tests, started through this worker's fork server (server.py, client.py):
a real process of its own per command, without importing spark-pair again each time."""

from __future__ import annotations

import atexit
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).parent
_server: subprocess.Popen[bytes] | None = None
_socket = ""


def command(script: Path) -> list[str]:
    """The command line that runs `script` (the `spark-pair` console script) through the fork
    server, started on first use; the script itself where the server cannot start."""
    global _server, _socket
    if _server is None:
        folder = tempfile.mkdtemp(prefix="sp-fork-")
        _socket = os.path.join(folder, "s")
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        with open(os.path.join(folder, "log"), "wb") as log:
            _server = subprocess.Popen([sys.executable, str(HERE / "server.py"), _socket],
                                       stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env)
        atexit.register(_stop)
        deadline = time.monotonic() + 20
        while not os.path.exists(_socket) and _server.poll() is None \
                and time.monotonic() < deadline:
            time.sleep(0.01)
    if _server.poll() is not None or not os.path.exists(_socket):
        return [str(script)]
    return [sys.executable, "-I", "-S", str(HERE / "client.py"), _socket, str(script)]


def _stop() -> None:
    if _server is not None and _server.poll() is None:
        _server.kill()
        _server.wait()
