"""A wss:// socket's TLS context is made ahead, in a thread, not by the event loop when the socket
opens (its CA load takes tens of ms): against a real WebSocket server over TLS on 127.0.0.1,
with a CA made for the test (the openssl command) trusted through SSL_CERT_FILE."""

from __future__ import annotations

import shutil
import ssl
import threading
from pathlib import Path

import pytest
from support.tlsca import make_ca
from websockets.asyncio.server import ServerConnection, serve

from spark_pair.protocol.client import ClientOptions, ModelClient
from spark_pair.protocol.responses_ws import WsSocket

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl")


async def test_the_wss_context_is_made_in_a_thread_and_the_socket_uses_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ca, leaf, key = make_ca(tmp_path)
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_ctx.load_cert_chain(leaf, key)
    monkeypatch.setenv("SSL_CERT_FILE", str(ca))
    made: list[tuple[ssl.SSLContext, threading.Thread]] = []
    real = ssl.create_default_context

    def recording(*args: object, **kwargs: object) -> ssl.SSLContext:
        ctx = real(*args, **kwargs)  # type: ignore[arg-type]
        made.append((ctx, threading.current_thread()))
        return ctx

    async def hold(conn: ServerConnection) -> None:
        await conn.wait_closed()

    async with serve(hold, "127.0.0.1", 0, ssl=server_ctx) as server:
        port = server.sockets[0].getsockname()[1]
        monkeypatch.setattr(ssl, "create_default_context", recording)
        client = ModelClient(ClientOptions(base_url=f"https://localhost:{port}", api_key="k",
                                           model="m", transport="ws"))
        client.warm_http()  # as the runtime does once the settings are read
        ws: WsSocket = client._ws
        try:
            await ws.open()
            assert ws.ws is not None
            used = ws.ws.transport.get_extra_info("ssl_object").context
        finally:
            await ws.close()
    assert len(made) == 1, made  # one context, made once
    ctx, thread = made[0]
    assert thread is not threading.main_thread()  # not by the event loop's thread
    assert used is ctx  # and the socket's TLS is that context (the CA made for the test)


def test_a_plain_ws_url_makes_no_tls_context() -> None:
    ws = WsSocket("http://127.0.0.1:9", None, connect_timeout_s=1, read_timeout_s=1)
    before = threading.active_count()
    ws.warm_tls()
    assert threading.active_count() == before  # no thread: ws:// has no TLS
