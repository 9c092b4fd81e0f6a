"""A CA made for a test (the openssl command) and a certificate for localhost it signs, and
a TLS server on 127.0.0.1 that presents it."""

from __future__ import annotations

import socket
import ssl
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def make_ca(folder: Path) -> tuple[Path, Path, Path]:
    """A CA and a certificate for localhost it signs: (CA, leaf, key)."""
    ca, ca_key = folder / "ca.pem", folder / "ca-key.pem"
    leaf, key, csr, ext = (folder / n for n in ("leaf.pem", "key.pem", "leaf.csr", "ext.cnf"))
    ext.write_text("subjectAltName=DNS:localhost\nbasicConstraints=CA:FALSE\n"
                   "extendedKeyUsage=serverAuth\n")
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
    for step in (["req", "-x509", *ec, "-days", "1", "-subj", "/CN=test CA", "-addext",
                  "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign",
                  "-keyout", str(ca_key), "-out", str(ca)],
                 ["req", *ec, "-subj", "/CN=localhost", "-keyout", str(key), "-out", str(csr)],
                 ["x509", "-req", "-in", str(csr), "-CA", str(ca), "-CAkey", str(ca_key),
                  "-CAcreateserial", "-days", "1", "-extfile", str(ext), "-out", str(leaf)]):
        subprocess.run(["openssl", *step], check=True, capture_output=True, timeout=30)
    return ca, leaf, key


@contextmanager
def tls_server(folder: Path, lifetime: float = 30.0) -> Iterator[int]:
    """A port on 127.0.0.1 where a server shakes hands with the certificate of `make_ca`
    (whose CA no client trusts unless told), then closes; for `lifetime` seconds at most."""
    _, leaf, key = make_ca(folder)
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(leaf, key)
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        for _ in range(int(lifetime / 0.2)):
            if stop.is_set():
                return
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            conn.settimeout(5)
            try:
                ctx.wrap_socket(conn, server_side=True).close()
            except OSError:  # the client refused the certificate: what the test wants
                conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        stop.set()
        thread.join(5)
        server.close()
