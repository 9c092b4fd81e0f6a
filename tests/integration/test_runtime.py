"""runtime.open_runtime against the simulator process: the wiring a front end gets, and the
connection state it shows (connected, reconnecting n/m, fell back to HTTP)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from spark_pair.base.errors import ConfigError
from spark_pair.protocol.events import Transport
from spark_pair.session.approval import PolicyApprover
from spark_pair.session.events import TurnFinished, TurnStatus
from spark_pair.session.runtime import ConnectionState, ConnectionStatus, open_runtime
from spark_pair.sim.process import SimProcess

pytestmark = pytest.mark.timeout(60)

DIFF = "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SPARK_PAIR_HOME", str(tmp_path / "home"))
    root = tmp_path / "repo"
    root.mkdir()
    (root / "a.txt").write_text("one\ntwo\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def overrides(sim: SimProcess, transport: str = "auto", **more: str) -> dict[str, str]:
    return {"model.base_url": sim.base_url, "model.name": "gpt-5.3-codex-spark",
            "session.transport": transport, **more}


ENV = {"SPARK_PAIR_API_KEY": "sk-test-runtime-key"}


async def test_a_turn_through_the_runtime_writes_and_logs_its_request(sim: SimProcess,
                                                                      repo: Path) -> None:
    sim.configure(replies=[{"match": "EDIT", "text": DIFF}])
    async with open_runtime(repo, approver=PolicyApprover(apply=True), overrides=overrides(sim),
                            env=ENV) as rt:
        assert rt.settings.model.name == "gpt-5.3-codex-spark" and rt.watcher is not None
        events = [e async for e in rt.session.turn("EDIT", ["a.txt"])]
        result = events[-1].result
        assert isinstance(events[-1], TurnFinished) and result.status == TurnStatus.APPLIED
        assert rt.connection.transport == Transport.WS
        assert rt.connection.state == ConnectionStatus.CONNECTED
    assert (repo / "a.txt").read_text() == "one\nTWO\n"
    from spark_pair.store import RequestStore

    with RequestStore() as store:  # the log was written (from its own thread) and closed
        records = store.records()
    assert [r.turn_id for r in records] == [result.turn_id]


async def test_the_connection_state_shows_prewarm_reconnects_and_the_fallback(
        sim: SimProcess, repo: Path) -> None:
    sim.configure(replies=[{"match": "EDIT", "text": DIFF}])
    seen: list[tuple[str, str, int]] = []

    def on_change(state: ConnectionState) -> None:
        seen.append((state.state, state.transport, state.attempt))

    more = {"session.reconnect_attempts": "1"}
    async with open_runtime(repo, approver=PolicyApprover(), overrides=overrides(sim, **more),
                            env=ENV, prewarm=True) as rt:
        rt.connection.subscribe(on_change)
        assert rt.prewarming is not None
        await rt.prewarming
        # the socket drops twice: one reconnect, then the budget (1) is spent: HTTP from then on
        sim.set_faults([{"kind": "drop", "after_tokens": 3, "times": 2, "transport": "ws"}])
        events = [e async for e in rt.session.turn("EDIT", ["a.txt"])]
        assert events[-1].result.ok, events[-1].result.error
    assert seen[:2] == [("connecting", "ws", 0), ("connected", "ws", 0)]
    assert ("reconnecting", "ws", 1) in seen
    assert seen[-1][:2] == ("fell_back", "responses")
    assert rt.connection.reason  # says why (shown beside the state)


async def test_a_bad_setting_is_a_config_error_before_anything_opens(sim: SimProcess,
                                                                     repo: Path) -> None:
    with pytest.raises(ConfigError):
        async with open_runtime(repo, approver=PolicyApprover(),
                                overrides=overrides(sim, transport="carrier-pigeon"), env=ENV):
            pass


async def test_settings_are_loaded_off_the_event_loop(sim: SimProcess, repo: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    from spark_pair.base import config

    threads = []
    load = config.load_settings

    def spy(*args: object, **kwargs: object) -> config.Settings:
        threads.append(threading.current_thread())
        return load(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(config, "load_settings", spy)
    async with open_runtime(repo, approver=PolicyApprover(), overrides=overrides(sim),
                            env=ENV, watch=False):
        pass
    assert len(threads) == 1 and threading.main_thread() not in threads


async def test_a_switch_keeps_the_conversation_and_a_bad_one_changes_nothing(
        sim: SimProcess, repo: Path) -> None:
    sim.configure(replies=[{"match": "EDIT", "text": DIFF}])
    async with open_runtime(repo, approver=PolicyApprover(apply=True), overrides=overrides(sim),
                            env=ENV, prewarm=True) as rt:
        session, workspace = rt.session, rt.workspace
        [e async for e in rt.session.turn("EDIT", ["a.txt"])]
        await rt.switch({"model.name": "gpt-5.3-codex", "session.transport": "chat"})
        assert rt.session is session and rt.workspace is workspace and len(workspace.history) == 1
        assert rt.client.model == "gpt-5.3-codex" and session.client is rt.client
        assert rt.connection.transport == Transport.CHAT
        client = rt.client
        with pytest.raises(ConfigError):
            await rt.switch({"session.transport": "pigeon"})
        assert rt.client is client and rt.settings.session.transport == "chat"
        events = [e async for e in rt.session.turn("AGAIN", ["a.txt"])]
        assert events[-1].result.model == "gpt-5.3-codex"
    bodies = [r["body"] for r in sim.requests() if r.get("body")]
    again = next(b for b in bodies if "AGAIN" in str(b))
    assert any(m.get("role") == "assistant" for m in again["messages"])  # the first turn


@pytest.mark.parametrize("transport", ["ws", "chat"])
async def test_an_error_the_server_answers_with_is_not_a_failed_connection(
        sim: SimProcess, repo: Path, transport: str) -> None:
    """A refused key or an unknown model: the state names it; "failed" means the link broke."""
    sim.configure(api_key="sk-the-right-key")
    async with open_runtime(repo, approver=PolicyApprover(), overrides=overrides(sim, transport),
                            env=ENV, prewarm=False) as rt:
        events = [e async for e in rt.session.turn("EDIT", ["a.txt"])]
        assert not events[-1].result.ok
        assert (rt.connection.state, rt.connection.reason) == (
            ConnectionStatus.ANSWERED_ERROR, "key refused")
    sim.configure(api_key=None)
    more = {"model.name": "no-such-model"}
    async with open_runtime(repo, approver=PolicyApprover(),
                            overrides={**overrides(sim, transport), **more}, env=ENV,
                            prewarm=False) as rt:
        events = [e async for e in rt.session.turn("EDIT", ["a.txt"])]
        assert not events[-1].result.ok
        assert (rt.connection.state, rt.connection.reason) == (
            ConnectionStatus.ANSWERED_ERROR, "model not found")
    import socket

    with socket.socket() as s:  # a port nothing listens on: the link fails
        s.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{s.getsockname()[1]}"
    async with open_runtime(repo, approver=PolicyApprover(),
                            overrides={**overrides(sim, transport), "model.base_url": closed},
                            env=ENV, prewarm=False) as rt:
        events = [e async for e in rt.session.turn("EDIT", ["a.txt"])]
        assert not events[-1].result.ok
        assert rt.connection.state == ConnectionStatus.FAILED
