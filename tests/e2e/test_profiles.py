"""Real third-party servers, as simulator profiles: what each offers, and run / doctor / bench
against each with both base-URL forms (the API root and the SDK form ending in /v1)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner
from support.runs import check_schema, cli, env_for, lines_of, make_repo, run

from spark_pair.cli.main import main
from spark_pair.sim.process import SimProcess
from spark_pair.sim.profiles import PROFILES, Endpoint
from spark_pair.store.sqlite import RequestStore

MODEL = "gpt-5.3-codex-spark"
A_PY = "def greet(name):\n    return 'hello ' + name\n"
DIFF = ("```diff\n--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n def greet(name):\n"
        "-    return 'hello ' + name\n+    return f'hello {name}'\n```\n")
REPLIES = [{"match": "GREET", "text": DIFF}, {"match": "What number", "text": "42"}]
# what auto ends up using on each server
SETTLES_ON = {"llama.cpp": "chat", "vllm": "responses", "ollama": "chat",
              "gateway": "responses"}


@pytest.fixture(scope="module", params=list(SETTLES_ON))
def server(request):
    with SimProcess(tps=0, ttft_ms=0, profile=request.param) as sim:
        yield request.param, sim


@pytest.fixture
def profiled(server):
    name, sim = server
    sim.reset()
    sim.configure(replies=REPLIES)
    return name, sim


def base_url(sim: SimProcess, form: str) -> str:
    return sim.base_url + ("/v1" if form == "sdk" else "")


def test_each_profile_serves_only_its_endpoints_with_its_own_404(profiled):
    name, sim = profiled
    profile = PROFILES[name]
    body = {"model": MODEL, "messages": [{"role": "user", "content": "hi"}], "stream": True,
            "stream_options": {"include_usage": True}, "max_tokens": 3}
    with httpx.Client(base_url=sim.base_url, timeout=10, trust_env=False) as http:
        assert http.get("/v1/models").status_code == 200
        stream = http.post("/v1/chat/completions", json=body)
        assert stream.status_code == 200
        assert ('"usage"' in stream.text) is profile.usage_chunk
        answer = http.post("/v1/responses", json={"model": MODEL, "input": "hi"})
        if Endpoint.RESPONSES in profile.endpoints:
            assert answer.status_code == 200
        else:
            assert (answer.status_code, answer.text) == (profile.not_found.status,
                                                         profile.not_found.body)
            assert answer.headers["content-type"].startswith(profile.not_found.content_type)
        upgrade = http.get("/v1/responses", headers={"Connection": "Upgrade",
                                                     "Upgrade": "websocket",
                                                     "Sec-WebSocket-Version": "13",
                                                     "Sec-WebSocket-Key": "dGhlIHNhbXBsZQ=="})
        assert upgrade.status_code == profile.not_found.status  # no profile here offers WS


@pytest.mark.parametrize("form", ["root", "sdk"])
def test_doctor_passes_with_notes_on_both_base_url_forms(profiled, form, tmp_path, monkeypatch):
    name, sim = profiled
    sim.configure(tps=150, ttft_ms=0)  # streamed: an unpaced stream may look buffered on a busy
    # machine (see PACED in test_doctor)
    monkeypatch.setenv("SPARK_PAIR_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("SPARK_PAIR_BASE_URL", base_url(sim, form))
    monkeypatch.setenv("SPARK_PAIR_MODEL", MODEL)
    monkeypatch.setenv("SPARK_PAIR_API_KEY", "sk-profile-test-key")
    result = CliRunner().invoke(main, ["doctor", "--json"])
    report = json.loads(result.output)
    checks = {c["id"]: c for c in report["checks"]}
    assert result.exit_code == 0 and report["ok"], [(c["id"], c["detail"], c["hint"])
                                                   for c in report["checks"]]
    assert checks["base_url"]["status"] == "pass" and checks["base_url"]["note"] is None
    assert checks["config"]["data"]["warnings"] == []
    assert "does not offer the WebSocket mode" in checks["ws"]["note"]
    stream = checks["stream"]
    assert stream["data"]["api"] == SETTLES_ON[name]
    assert ("Responses API" in (stream["note"] or "")) is (SETTLES_ON[name] == "chat")
    assert ("no usage in the stream" in (stream["note"] or "")) is (name == "llama.cpp")
    assert checks["memory"]["status"] == "pass"


def test_run_settles_on_what_the_server_offers_and_remembers_it(profiled, tmp_path):
    name, sim = profiled
    repo = make_repo(tmp_path / "repo", {"a.py": A_PY})
    home = tmp_path / "home"
    sim.base_url = base_url(sim, "sdk")  # what the server's own docs write
    probes, requests = [], []
    for _ in range(2):
        res = run(repo, home, sim, "GREET please", "-f", "a.py", "--json")
        assert res.returncode == 0, res.stderr
        assert "config:" not in res.stderr  # the /v1 form is right: no warning
        lines = lines_of(res.stdout)
        check_schema(lines)
        probes.append([(ln["old"], ln["new"]) for ln in lines
                       if ln["type"] == "transport_changed"])
        metrics = [ln for ln in lines if ln["type"] == "metrics"]
        assert len(metrics) == 1 and metrics[0]["partial"] is False
        assert metrics[0]["output_tokens"] > 0
        requests.append([ln["transport"] for ln in lines if ln["type"] == "request"])
    assert probes[0] and probes[0][-1][1] == SETTLES_ON[name]
    assert probes[1] == [] and requests[1] == [SETTLES_ON[name]]  # remembered: no probe
    remembered = json.loads((home / "data" / "transports.json").read_text())
    assert [e["transport"] for e in remembered.values()] == [SETTLES_ON[name]]


def test_bench_runs_against_each_profile(profiled, tmp_path, monkeypatch):
    name, sim = profiled
    monkeypatch.setenv("SPARK_PAIR_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("SPARK_PAIR_BASE_URL", base_url(sim, "sdk"))
    monkeypatch.setenv("SPARK_PAIR_MODEL", MODEL)
    result = CliRunner().invoke(main, ["bench", "--concurrency", "1,2", "--requests", "2",
                                       "--max-tokens", "40", "--json", "--no-save"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert [(lv["transport"], lv["error_rate"]) for lv in data["levels"]] == \
        [(SETTLES_ON[name], 0)] * 2
    assert data["knee"][SETTLES_ON[name]] is not None
    remembered = json.loads(Path(tmp_path / "home" / "data" / "transports.json").read_text())
    assert [e["transport"] for e in remembered.values()] == [SETTLES_ON[name]]


def test_a_run_stopped_by_timeout_reports_and_keeps_what_it_measured(sim, tmp_path):
    """A chat-only server with no usage chunk, stalled after some tokens: --timeout stops the
    turn; the meter, the JSON metrics line and the request store keep what was measured."""
    repo = make_repo(tmp_path / "repo", {"a.py": A_PY})
    home = tmp_path / "home"
    sim.set_faults([{"kind": "stall", "after_tokens": 30, "seconds": 3600, "times": -1}])
    res = run(repo, home, sim, "anything", "--json", "--timeout", "3", "--transport", "chat")
    assert res.returncode == 7, res.stderr  # TIMEOUT
    lines = lines_of(res.stdout)
    check_schema(lines)
    metrics = [ln for ln in lines if ln["type"] == "metrics"]
    assert len(metrics) == 1 and metrics[0]["partial"] is True
    assert metrics[0]["ttft_ms"] is not None and metrics[0]["output_tokens"] > 0
    assert metrics[0]["duration_ms"] >= 1000  # the stall is in it: 3 s less the start-up
    assert lines[-1]["status"] == "cancelled"

    text = run(repo, home, sim, "anything", "--timeout", "3", "--transport", "chat")
    meter = [ln for ln in text.stderr.splitlines() if "TTFT" in ln]
    assert len(meter) == 1 and meter[0].endswith("│ stopped"), text.stderr
    assert "so far (est.)" in meter[0]

    stats = CliRunner(env=env_for(home, sim)).invoke(main, ["stats", "--json"])
    total = json.loads(stats.output)["total"]
    assert (total["requests"], total["ok"], total["cancelled"]) == (2, 0, 2)
    assert total["output_tokens"] >= 2 * metrics[0]["output_tokens"] - 2


def test_a_run_stopped_during_the_first_probe_is_recorded_under_the_transport_it_used(tmp_path):
    """auto on a chat-only server: WS and Responses answer 404, chat streams slowly and the
    timeout stops it. The request store keeps chat, no stale 404, and estimated tokens both
    ways."""
    repo = make_repo(tmp_path / "repo", {"a.py": A_PY})
    home = tmp_path / "home"
    with SimProcess(tps=10, ttft_ms=100, profile="llama.cpp") as slow:
        res = run(repo, home, slow, "hello", "-f", "a.py", "--timeout", "3")
        assert res.returncode == 7, res.stderr
        meter = [ln for ln in res.stderr.splitlines() if "TTFT" in ln]
        assert meter and "chat" in meter[-1] and meter[-1].endswith("stopped"), res.stderr
        assert re.search(r"│ in [1-9][\d,]* / out [1-9][\d,]* tok so far \(est\.\) │",
                         meter[-1]), meter[-1]
        stats = CliRunner(env=env_for(home, slow)).invoke(main, ["stats", "--json",
                                                                  "--by", "transport"])
    data = json.loads(stats.output)
    by = {g["key"]: g for g in data["by"]["transport"]}
    assert list(by) == ["chat"], by
    chat = by["chat"]
    assert (chat["requests"], chat["cancelled"], chat["errors"]) == (1, 1, 0)
    assert chat["output_tokens"] > 0 and chat["input_tokens"] > 0
    with RequestStore(next(home.rglob("requests.sqlite3")), must_exist=True) as store:
        [rec] = store.records()
    assert (rec.transport, rec.http_status, rec.usage_estimated) == ("chat", None, True)


@pytest.mark.parametrize("form", ["root", "sdk"])
def test_demanding_a_mode_the_server_lacks_says_so_not_fix_the_url(form, tmp_path):
    """A chat-only server at a right base URL: demanding the Responses API or WebSocket mode
    is a missing mode (set transport = auto or chat), not a base URL to fix."""
    repo = make_repo(tmp_path / "repo", {"a.py": A_PY})
    home = tmp_path / "home"
    with SimProcess(tps=0, ttft_ms=0, profile="llama.cpp") as sim:
        root = sim.base_url
        sim.base_url = base_url(sim, form)
        env = env_for(home, sim)
        doctor = subprocess.run(cli() + ["doctor", "--json", "--transport", "responses"],
                                cwd=repo, env=env, capture_output=True, text=True, timeout=60)
        report = json.loads(doctor.stdout)
        failed = [c for c in report["checks"] if c["status"] == "fail"]
        assert doctor.returncode == 1 and failed, doctor.stdout
        for check in failed:
            assert "does not offer the Responses API" in check["detail"], check
            assert "set transport = auto" in check["hint"], check  # (said once: not again)
            assert "does not offer" not in check["hint"], check
            assert "/v1 doubled" not in check["hint"] and "API root" not in check["hint"]
        for transport in ("responses", "ws"):
            res = run(repo, home, sim, "hello", "-f", "a.py", "--transport", transport,
                      "--no-meter")
            assert res.returncode == 4, res.stderr
            assert "set transport = auto" in res.stderr and "or chat" in res.stderr
            assert "/v1 doubled" not in res.stderr and "transport = responses" not in res.stderr
        sim.base_url = root + "/wrong"  # a wrong URL keeps the URL hint
        res = run(repo, home, sim, "hello", "-f", "a.py", "--transport", "responses",
                  "--no-meter")
        assert res.returncode == 4 and "/v1 doubled or missing" in res.stderr, res.stderr


def test_a_refused_key_keeps_the_transport_the_server_was_found_to_offer(tmp_path):
    """A 401 (or a model not found) is the server answering on the remembered transport: the
    next run does not probe WebSocket and Responses again (two requests and two stderr lines
    each time, seen against a real llama.cpp server)."""
    repo = make_repo(tmp_path / "repo", {"a.py": A_PY})
    home = tmp_path / "home"
    with SimProcess(tps=0, ttft_ms=0, profile="llama.cpp") as sim:
        sim.configure(replies=REPLIES)
        assert run(repo, home, sim, "GREET please", "-f", "a.py").returncode == 0
        sim.configure(api_key="another-key-entirely")
        refused = run(repo, home, sim, "GREET please", "-f", "a.py", "--json")
        assert refused.returncode == 4 and "key" in refused.stderr
        assert "transport" not in refused.stderr  # no probe: chat was remembered
        remembered = json.loads((home / "data" / "transports.json").read_text())
        assert [e["transport"] for e in remembered.values()] == ["chat"]
        sim.configure(api_key=None)
        again = run(repo, home, sim, "GREET please", "-f", "a.py", "--json")
        assert again.returncode == 0, again.stderr
        assert not [ln for ln in lines_of(again.stdout) if ln["type"] == "transport_changed"]
