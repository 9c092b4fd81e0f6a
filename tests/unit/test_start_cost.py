"""What a process skips while it starts, and puts back once it is set up: the garbage collector
held through start-up and on again after (never off for a server's life), no CA certificates
loaded for TLS contexts the simulator never uses, and the environment as it was."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import io
import os
import ssl
from collections.abc import Iterator

import certifi
import pytest

from spark_pair.base import gcpolicy
from spark_pair.sim.command import CA_VARS, _no_ca_load
from spark_pair.sim.replies import SimConfig


@pytest.fixture
def collector() -> Iterator[None]:
    """The test process's collector as it was, whatever a test did to it."""
    enabled = gc.isenabled()
    yield
    gc.unfreeze()
    gcpolicy._starting = False
    (gc.enable if enabled else gc.disable)()


def test_started_turns_collection_back_on_only_after_a_hold(collector):
    gc.enable()
    frozen = gc.get_freeze_count()
    gcpolicy.started()  # no hold: a command run inside another program leaves it alone
    assert gc.isenabled() and gc.get_freeze_count() == frozen
    gcpolicy.hold_for_start_up()
    assert not gc.isenabled()
    kept = [object() for _ in range(100)]  # (made during start-up)
    gcpolicy.started()
    assert gc.isenabled() and gc.get_freeze_count() > frozen  # start-up's objects set aside
    assert kept
    gc.disable()
    gcpolicy.started()  # once only
    assert not gc.isenabled()


async def test_the_simulator_collects_again_once_it_listens(collector):
    from spark_pair.sim import server  # (aiohttp: loaded by the worker that runs this test)

    gcpolicy.hold_for_start_up()  # as `python -m spark_pair.sim` does
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        task = asyncio.create_task(server.serve(SimConfig(), [], "127.0.0.1", 0))
        for _ in range(500):  # bounded: 5 s
            if "listening on" in out.getvalue() or task.done():
                break
            await asyncio.sleep(0.01)
        listening = out.getvalue()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    assert "spark-pair sim listening on http://127.0.0.1:" in listening
    assert gc.isenabled()


def cas() -> int:
    return ssl.create_default_context().cert_store_stats()["x509_ca"]


def test_no_ca_load_loads_no_certificate_and_puts_the_bundle_back(monkeypatch):
    monkeypatch.setenv("SSL_CERT_FILE", certifi.where())
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    assert cas() > 0
    with _no_ca_load():
        assert cas() == 0
    assert os.environ["SSL_CERT_FILE"] == certifi.where() and "SSL_CERT_DIR" not in os.environ
    assert cas() > 0


def test_no_ca_load_leaves_unset_variables_unset(monkeypatch):
    for name in CA_VARS:
        monkeypatch.delenv(name, raising=False)
    with _no_ca_load():
        assert cas() == 0
    assert not any(name in os.environ for name in CA_VARS)


def test_no_ca_load_puts_the_environment_back_after_an_error(monkeypatch):
    monkeypatch.setenv("SSL_CERT_FILE", "/a/bundle.pem")
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    with pytest.raises(ImportError), _no_ca_load():
        raise ImportError("aiohttp is missing")
    assert os.environ["SSL_CERT_FILE"] == "/a/bundle.pem" and "SSL_CERT_DIR" not in os.environ
