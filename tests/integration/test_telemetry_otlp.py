"""Telemetry of real `spark-pair run` processes against the simulator, exported over OTLP/HTTP
to a real receiver on loopback (tests/support/otlp.py): what arrives, what never does, and
that an endpoint that is down or refuses costs a run at most its exit budget and one note."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.otlp import OtlpReceiver
from support.runs import A_NEW, A_PY, cli, env_for, make_repo

from spark_pair.sim.process import SimProcess

KEY = "sk-test-e2e-secret-key"  # env_for's key
PROMPT = "GREET-TELEMETRY make greet use an f-string (secret-words-xyzzy)"
DIFF = ("```diff\n--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n def greet(name):\n"
        "-    return 'hello ' + name\n+    return f'hello {name}'\n```\n")
# a live receiver's tests give the exit export room on a busy machine (the 1 s default is
# for a broken endpoint; the bound itself is tested below with the default)
ROOMY = "[telemetry]\nexit_timeout_s = 10\n"
PAD = 120  # lines of a created file: a reply long enough to have a rate
LONG = DIFF.replace("```\n", f"--- /dev/null\n+++ b/pad.txt\n@@ -0,0 +1,{PAD} @@\n"
                    + "".join(f"+padding line number {i}\n" for i in range(PAD)) + "```\n")


def run_with(repo: Path, sim: SimProcess, env: dict[str, str], *args: str
             ) -> subprocess.CompletedProcess[str]:
    full = {**env_for(repo.parent / "home", sim), **env}
    return subprocess.run(cli() + ["run", PROMPT, "-f", "a.py", *args], cwd=repo, env=full,
                          capture_output=True, text=True, timeout=60)


def test_a_run_exports_its_figures_over_otlp_and_nothing_private(sim, tmp_path):
    repo = make_repo(tmp_path / "repo", {"a.py": A_PY, ".spark-pair.toml": ROOMY})
    # paced, so that the reply has a rate (an unpaced one arrives as one burst)
    sim.configure(replies=[{"match": "GREET-TELEMETRY", "text": LONG}], tps=4000)
    with OtlpReceiver() as receiver:
        proc = run_with(repo, sim, {"SPARK_PAIR_TELEMETRY": "1",
                                    "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url,
                                    "OTEL_RESOURCE_ATTRIBUTES": "team=editors"}, "--apply")
        assert proc.returncode == 0, proc.stderr
        assert (repo / "a.py").read_text() == A_NEW
        receiver.wait(1)
    assert receiver.paths == ["/v1/metrics"], proc.stderr
    got = {(name, tuple(sorted(attrs.items()))): value
           for name, attrs, value in receiver.points()}
    model = (("model", "gpt-5.3-codex-spark"),)
    assert got[("spark_pair.session.count", ())] == 1
    assert got[("spark_pair.token.usage", (*model, ("type", "output")))] > 0
    assert got[("spark_pair.token.usage", (*model, ("type", "input")))] > 0
    where = (*model, ("transport", "ws"))
    for name in ("turn.ttft.duration_ms", "turn.tokens_per_second", "turn.e2e_duration_ms"):
        assert got[("spark_pair." + name, where)] == 1  # one request: a histogram of one
    assert got[("spark_pair.lines_of_code.count", (("type", "added"),))] == 1 + PAD
    assert got[("spark_pair.lines_of_code.count", (("type", "removed"),))] == 1
    assert receiver.resources()[0]["team"] == "editors"
    assert receiver.resources()[0]["service.name"] == "spark-pair"
    body = b"".join(receiver.bodies)
    for private in (b"secret-words-xyzzy", b"GREET", b"hello", b"a.py", b"padding", KEY.encode(),
                    sim.base_url.encode(), b"127.0.0.1"):
        assert private not in body, private
    assert "telemetry" not in proc.stderr  # it went through: nothing to say


def test_a_dropped_socket_is_counted_as_one_reconnect(sim, tmp_path):
    """The runtime's observer hands telemetry the protocol's Retrying event by its type: the
    socket drops once mid-reply, the run reconnects and finishes, and one reconnect arrives."""
    repo = make_repo(tmp_path / "repo", {"a.py": A_PY, ".spark-pair.toml": ROOMY})
    sim.configure(replies=[{"match": "GREET-TELEMETRY", "text": DIFF}])
    sim.set_faults([{"kind": "drop", "after_tokens": 3, "times": 1, "transport": "ws"}])
    with OtlpReceiver() as receiver:
        proc = run_with(repo, sim, {"SPARK_PAIR_TELEMETRY": "1",
                                    "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url}, "--apply")
        assert proc.returncode == 0, proc.stderr
        receiver.wait(1)
    got = {(name, tuple(sorted(attrs.items()))): value
           for name, attrs, value in receiver.points()}
    assert got[("spark_pair.ws.reconnects", ())] == 1
    assert got[("spark_pair.lines_of_code.count", (("type", "added"),))] == 1


def test_telemetry_off_sends_nothing_even_with_an_endpoint_in_the_environment(sim, tmp_path):
    repo = make_repo(tmp_path / "repo", {"a.py": A_PY})
    sim.configure(replies=[{"match": "GREET-TELEMETRY", "text": DIFF}])
    with OtlpReceiver() as receiver:
        proc = run_with(repo, sim, {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url})
        assert proc.returncode == 0, proc.stderr
        time.sleep(0.3)  # (nothing is in flight: the process has exited)
    assert receiver.bodies == []


# what the note says when the 1 s exit budget ran out: before the answer was logged, or before
# the SDK had loaded and sent at all (a loaded machine)
OUT_OF_TIME = ("no answer", "did not finish within 1 s")


def test_an_endpoint_that_is_down_refuses_or_hangs_costs_a_bounded_wait_and_one_note(sim, tmp_path):
    from support.promstack import free_port

    repo = make_repo(tmp_path / "repo", {"a.py": A_PY})
    sim.configure(replies=[{"match": "GREET-TELEMETRY", "text": DIFF}])
    down = f"http://127.0.0.1:{free_port()}"
    env = {"SPARK_PAIR_TELEMETRY": "1", "OTEL_EXPORTER_OTLP_ENDPOINT": down}
    start = time.monotonic()
    proc = run_with(repo, sim, env)
    took = time.monotonic() - start
    assert proc.returncode == 0, proc.stderr  # the turn's own exit code: a dry run, ok
    notes = [line for line in proc.stderr.splitlines() if "telemetry" in line]
    assert len(notes) == 1 and down in notes[0] and "dropped" in notes[0], proc.stderr
    # the cause in plain words (refused, or no answer in time when the budget ran out first,
    # or the whole end past its budget on a busy machine), not the SDK's own log line
    assert any(why in notes[0] for why in ("connection refused",) + OUT_OF_TIME) and \
        "HTTPConnectionPool" not in notes[0] and "Transient" not in notes[0], notes
    assert "Traceback" not in proc.stderr
    assert took < 8, took  # the start-up, the turn, and at most the 1 s exit budget
    with OtlpReceiver(status=503) as refusing:
        proc = run_with(repo, sim, {**env, "OTEL_EXPORTER_OTLP_ENDPOINT": refusing.url})
    assert proc.returncode == 0, proc.stderr
    assert refusing.bodies  # it was tried...
    notes = [line for line in proc.stderr.splitlines() if "telemetry" in line]
    assert len(notes) == 1 and "dropped" in notes[0], proc.stderr  # ...and said once
    # its answer in plain words (or no answer, when the budget ran out before it was logged)
    assert any(why in notes[0] for why in ("answered Service Unavailable",) + OUT_OF_TIME) and \
        "retrying" not in notes[0], notes
    with socket.socket() as silent:  # takes the connection and never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        slow = f"http://127.0.0.1:{silent.getsockname()[1]}"
        start = time.monotonic()
        proc = run_with(repo, sim, {**env, "OTEL_EXPORTER_OTLP_ENDPOINT": slow})
        took = time.monotonic() - start
    assert proc.returncode == 0, proc.stderr
    notes = [line for line in proc.stderr.splitlines() if "telemetry" in line]
    assert len(notes) == 1 and slow in notes[0] and "dropped" in notes[0], proc.stderr
    assert took < 8, took  # not the SDK's own 10 s timeout: the 1 s exit budget


def test_without_the_extra_telemetry_on_says_how_to_install_it(sim, tmp_path):
    """The SDK made unimportable (as in a default install): the run works, one note says
    `pip install 'spark-pair[otel]'`, no traceback."""
    repo = make_repo(tmp_path / "repo", {"a.py": A_PY})
    sim.configure(replies=[{"match": "GREET-TELEMETRY", "text": DIFF}])
    boot = ("import sys; sys.modules['opentelemetry'] = None; "
            "sys.argv = ['spark-pair', *sys.argv[1:]]; "
            "from spark_pair.entry import main; main()")
    full = {**env_for(tmp_path / "home", sim), "SPARK_PAIR_TELEMETRY": "1"}
    proc = subprocess.run([sys.executable, "-c", boot, "run", PROMPT, "-f", "a.py", "--apply"],
                          cwd=repo, env=full, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert (repo / "a.py").read_text() == A_NEW
    assert "pip install 'spark-pair[otel]'" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_default_run_loads_no_telemetry_module(sim, tmp_path):
    """With telemetry off, neither the package nor the SDK is imported (sys.modules)."""
    repo = make_repo(tmp_path / "repo", {"a.py": A_PY})
    sim.configure(replies=[{"match": "GREET-TELEMETRY", "text": DIFF}])
    record = tmp_path / "modules.txt"
    boot = ("import os, sys; sys.argv = ['spark-pair', *sys.argv[1:]]\n"
            "leave = os._exit\n"
            "def dump(code):\n"
            f"    open({str(record)!r}, 'w').write('\\n'.join(sorted(sys.modules)))\n"
            "    leave(code)\n"
            "os._exit = dump\n"
            "from spark_pair.entry import main; main()\n")
    full = env_for(tmp_path / "home", sim)
    proc = subprocess.run([sys.executable, "-c", boot, "run", PROMPT, "-f", "a.py"], cwd=repo,
                          env=full, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    loaded = record.read_text().split()
    assert "spark_pair.session.runtime" in loaded  # (the record is the run's)
    assert [m for m in loaded if m.startswith(("opentelemetry", "prometheus_client",
                                               "spark_pair.telemetry"))] == []


def doctor_check(repo: Path, sim: SimProcess, env: dict[str, str]) -> tuple[dict, int]:
    full = {**env_for(repo.parent / "home", sim), "SPARK_PAIR_TELEMETRY": "1", **env}
    proc = subprocess.run(cli() + ["doctor", "--json"], cwd=repo, env=full,
                          capture_output=True, text=True, timeout=60)
    report = json.loads(proc.stdout)
    return next(c for c in report["checks"] if c["id"] == "telemetry"), proc.returncode


def test_doctor_sends_a_test_point_and_says_whether_the_collector_took_it(sim, tmp_path):
    from support.promstack import free_port

    repo = make_repo(tmp_path / "repo", {"a.py": A_PY})
    with OtlpReceiver() as receiver:
        check, code = doctor_check(repo, sim, {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url})
        assert (check["status"], code) == ("pass", 0), check
        assert "took a test point" in check["detail"]
        assert [name for name, _, _ in receiver.points()] == ["spark_pair.doctor.check"]
    closed = f"http://127.0.0.1:{free_port()}"
    check, code = doctor_check(repo, sim, {"OTEL_EXPORTER_OTLP_ENDPOINT": closed})
    assert (check["status"], code) == ("fail", 1)
    assert closed in check["detail"] and "start the collector" in check["hint"]
    with OtlpReceiver(status=404) as wrong_path:
        check, _ = doctor_check(repo, sim, {"OTEL_EXPORTER_OTLP_ENDPOINT": wrong_path.url})
    assert check["status"] == "fail" and "404" in check["detail"]
    assert "adds /v1/metrics" in check["hint"]
    check, code = doctor_check(repo, sim, {"SPARK_PAIR_TELEMETRY": "0"})
    assert check["status"] == "skip" and "telemetry is off" in check["detail"]


async def test_a_run_exports_to_an_independent_otlp_receiver(sim, tmp_path):
    """The same export taken by oteltap's OTLP/HTTP receiver (its own decoder, a native core):
    what spark-pair sends is OTLP as others read it, not only as the SDK's classes parse it."""
    try:
        import oteltap
    except (ImportError, OSError) as exc:  # not installed, or no native core for this machine
        pytest.skip(f"needs oteltap (the test extra) with its native core: {exc}")
    from support.promstack import free_port

    port = free_port()
    try:
        receiver = oteltap.OtelTapHttpProtobufReceiver(
            oteltap.OtelTapHttpProtobufReceiverSettings(http_port=port))
        await receiver.start()
    except (OSError, oteltap.OtelTapInitializationError) as exc:
        pytest.skip(f"oteltap's receiver does not start on this machine: {exc}")
    repo = make_repo(tmp_path / "repo", {"a.py": A_PY, ".spark-pair.toml": ROOMY})
    sim.configure(replies=[{"match": "GREET-TELEMETRY", "text": LONG}], tps=4000)
    got: dict[str, object] = {}

    async def take() -> None:
        async for metric in receiver.stream_metrics():
            got[metric.name] = metric

    taking = asyncio.create_task(take())
    try:
        env = {**env_for(tmp_path / "home", sim), "SPARK_PAIR_TELEMETRY": "1",
               "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{port}"}
        proc = await asyncio.create_subprocess_exec(
            *cli(), "run", PROMPT, "-f", "a.py", "--apply", cwd=repo, env=env,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        _, err = await asyncio.wait_for(proc.communicate(), 60)
        assert proc.returncode == 0, err
        assert b"telemetry" not in err, err  # the receiver took it
        for _ in range(200):  # the receiver hands what it decoded over by polling
            if "spark_pair.lines_of_code.count" in got:
                break
            await asyncio.sleep(0.05)
    finally:
        taking.cancel()
        await asyncio.gather(taking, return_exceptions=True)
        await receiver.stop()
    assert {"spark_pair.session.count", "spark_pair.token.usage",
            "spark_pair.turn.ttft.duration_ms", "spark_pair.turn.tokens_per_second",
            "spark_pair.turn.e2e_duration_ms", "spark_pair.lines_of_code.count"} <= set(got)
    ttft = got["spark_pair.turn.ttft.duration_ms"]
    point = ttft.histogram.data_points[0]  # type: ignore[attr-defined]
    assert point.count == 1 and 0 < point.sum < 60_000
    assert {a.key: a.value.string_value for a in point.attributes} == {
        "model": "gpt-5.3-codex-spark", "transport": "ws"}
    lines = got["spark_pair.lines_of_code.count"].sum.data_points  # type: ignore[attr-defined]
    assert sorted((p.attributes[0].value.string_value, p.as_int or p.as_double)
                  for p in lines) == [("added", 1 + PAD), ("removed", 1)]
