"""A base URL answered with a redirect (a gateway's move to https, a moved path) is one clear
error on every transport and in doctor, naming where it points and the base URL that stands
for. It is never followed, so the API key goes nowhere else. Real `run` processes and doctor
against the simulator (its `redirect` fault) and a tiny server that redirects within its own
origin (tests/wire_server.py)."""

from __future__ import annotations

import json
import subprocess

import pytest
from click.testing import CliRunner
from support.runs import MULTI_DIFF, cli, home, lines_of, repo, run  # noqa: F401
from support.wire import Wire, wire, wire_env  # noqa: F401 (fixtures)

from spark_pair.base.errors import Redirected
from spark_pair.cli.main import main
from spark_pair.protocol import errors_map
from spark_pair.sim.process import SimProcess

KEY = "sk-test-e2e-secret-key"  # the key the run tests send
@pytest.mark.parametrize("transport", ["ws", "responses", "chat", "auto"])
def test_a_redirect_is_one_clear_error_on_every_transport(sim: SimProcess, repo, home,
                                                          transport: str) -> None:
    sim.configure(replies=[{"match": "MULTI", "text": MULTI_DIFF}])
    sim.set_faults([{"kind": "redirect", "status": 308, "times": -1}])
    res = run(repo, home, sim, "MULTI change", "--json", "--transport", transport)
    lines = lines_of(res.stdout)
    error = next(ln for ln in lines if ln["type"] == "error")
    moved = sim.base_url.replace("http://", "https://")
    assert res.returncode == 4 and lines[-1]["exit_name"] == "MODEL", res.stdout
    assert error["kind"] == "redirect", error
    assert f"the server redirected the request to {moved}/v1/" in error["message"]
    assert f"set the base URL to where it points: {moved} (model.base_url / --base-url)" \
        in error["hint"]
    assert [e["status"] for e in sim.requests()] == [308]  # asked once: not followed, not retried
    assert KEY not in res.stdout + res.stderr
    assert "Traceback" not in res.stderr


@pytest.mark.parametrize("transport", ["ws", "chat"])
def test_the_redirect_reads_plainly_without_json(sim: SimProcess, repo, home,
                                                 transport: str) -> None:
    sim.set_faults([{"kind": "redirect", "times": -1}])
    res = run(repo, home, sim, "MULTI change", "--transport", transport)
    assert res.returncode == 4
    said = res.stderr.splitlines()
    assert said[0].startswith("spark-pair: the server redirected the request to https://"), said
    assert said[1].startswith("  hint: set the base URL to where it points: https://")
    assert "InvalidURI" not in res.stderr and "OpenAI-shaped" not in res.stderr
    assert KEY not in res.stderr


@pytest.mark.parametrize("wire", [("redirect", 0)], indirect=True)
@pytest.mark.parametrize("transport", ["ws", "responses", "chat"])
def test_a_redirect_within_the_same_server_is_not_followed_either(
        sim: SimProcess, repo, home, wire: Wire, transport: str) -> None:
    path = "/v1/chat/completions" if transport == "chat" else "/v1/responses"
    res = subprocess.run(cli() + ["run", "MULTI change", "--json", "--transport", transport],
                         cwd=repo, env=wire_env(home, sim, wire, ""), capture_output=True,
                         text=True, timeout=60)
    error = next(ln for ln in lines_of(res.stdout) if ln["type"] == "error")
    assert res.returncode == 4 and error["kind"] == "redirect", res.stdout
    assert f"127.0.0.1:{wire.port}/moved{path}" in error["message"]
    assert f"127.0.0.1:{wire.port}/moved (model.base_url" in error["hint"]
    assert [r["line"].split(" ")[1] for r in wire.requests()] == [path]


# ---- doctor ----------------------------------------------------------------------------------

@pytest.fixture
def doctor_env(sim: SimProcess, tmp_path, monkeypatch) -> SimProcess:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SPARK_PAIR_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("SPARK_PAIR_BASE_URL", sim.base_url)
    monkeypatch.setenv("SPARK_PAIR_API_KEY", KEY)
    monkeypatch.setenv("SPARK_PAIR_MODEL", "gpt-5.3-codex-spark")
    for name in ("SPARK_PAIR_TRANSPORT", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    return sim


def _doctor(*args: str) -> tuple[int, dict]:
    result = CliRunner().invoke(main, ["doctor", "--check-timeout", "3", "--json", *args])
    assert KEY not in result.output
    return result.exit_code, json.loads(result.stdout)


def test_doctor_names_where_the_api_moved(doctor_env: SimProcess) -> None:
    doctor_env.set_faults([{"kind": "redirect", "transport": "models", "times": -1}])
    code, data = _doctor()
    check = next(c for c in data["checks"] if c["id"] == "models")
    moved = doctor_env.base_url.replace("http://", "https://")
    assert code == 1 and data["failed_check"] == "models"
    assert check["error_class"] == "redirect"
    assert f"redirected the request to {moved}/v1/models" in check["detail"]
    assert f"to where it points: {moved} (model.base_url" in check["hint"]


def test_doctor_names_a_redirected_websocket_upgrade(doctor_env: SimProcess) -> None:
    doctor_env.set_faults([{"kind": "redirect", "transport": "ws", "times": -1}])
    code, data = _doctor("--transport", "ws")
    check = next(c for c in data["checks"] if c["id"] == "ws")
    assert code == 1 and check["error_class"] == "redirect", check
    assert "redirected the request to https://" in check["detail"]
    assert len([e for e in doctor_env.requests() if e["transport"] == "ws"]) == 1


def test_doctor_under_auto_notes_a_redirected_chat_endpoint_the_responses_api_works_around(
        doctor_env: SimProcess) -> None:
    doctor_env.set_faults([{"kind": "redirect", "transport": "chat", "times": -1}])
    code, data = _doctor()
    checks = {c["id"]: c for c in data["checks"]}
    request = checks["request"]
    assert code == 0 and data["ok"], data["failed_check"]
    assert request["status"] == "pass" and request["data"]["api"] == "responses", request
    moved = doctor_env.base_url.replace("http://", "https://")
    assert request["note"] == (f"chat completions redirects (HTTP 307 to {moved}/v1/chat/"
                               "completions; not followed); the Responses API answers, and "
                               "transport = auto uses it")
    assert checks["memory"]["status"] == "pass"


def test_doctor_under_auto_says_a_redirected_responses_stream_is_a_redirect(
        doctor_env: SimProcess) -> None:
    doctor_env.set_faults([{"kind": "redirect", "transport": "responses", "times": -1}])
    code, data = _doctor()
    stream = next(c for c in data["checks"] if c["id"] == "stream")
    assert code == 0 and stream["status"] == "pass", stream
    assert stream["note"].startswith("the Responses API redirects (HTTP 307 to https://")
    assert "chat completions answers, and transport = auto uses it" in stream["note"]


def test_doctor_fails_a_demanded_transport_that_redirects(doctor_env: SimProcess) -> None:
    doctor_env.set_faults([{"kind": "redirect", "transport": "chat", "times": -1}])
    code, data = _doctor("--transport", "chat")
    request = next(c for c in data["checks"] if c["id"] == "request")
    assert code == 1 and data["failed_check"] == "request"
    assert request["error_class"] == "redirect" and not request["note"], request


def test_doctor_under_auto_fails_a_redirect_no_other_endpoint_works_around(
        doctor_env: SimProcess) -> None:
    doctor_env.set_faults([{"kind": "redirect", "transport": "http", "times": -1}])
    code, data = _doctor()
    request = next(c for c in data["checks"] if c["id"] == "request")
    assert code == 1 and data["failed_check"] == "request"
    assert request["error_class"] == "redirect" and "chat/completions" in request["detail"]


# ---- the message ------------------------------------------------------------------------------

@pytest.mark.parametrize(("url", "location", "base"), [
    ("http://h:1/v1/responses", "https://h:1/v1/responses", "https://h:1"),
    ("http://h:1/v1/chat/completions", "/api/v1/chat/completions", "http://h:1/api"),
    ("ws://h/gw/v1/responses", "wss://new.example/api/v1/responses?x=1", "https://new.example/api"),
    ("http://h/v1/models", "https://login.example/sso", None),
])
def test_the_hint_names_the_base_url_the_target_stands_for(url: str, location: str,
                                                           base: str | None) -> None:
    err = errors_map.error_from_response(307, "", url, headers={"Location": location})
    assert isinstance(err, Redirected) and err.status == 307 and not err.retryable
    assert errors_map.moved_base(url, location if "://" in location else "http://h:1" + location) \
        == base
    if base is None:
        assert err.hint == Redirected.default_hint
    else:
        assert f"to where it points: {base} (" in err.hint


def test_a_redirect_without_a_location_still_says_it_moved() -> None:
    err = errors_map.error_from_response(302, "<html>moved</html>", "http://h/v1/responses",
                                         headers={"content-type": "text/html"})
    assert isinstance(err, Redirected)
    assert "a redirect without a Location header" in err.message
