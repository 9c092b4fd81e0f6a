"""TLS set-up failures as a user meets them: `spark-pair run` and `spark-pair doctor` as real
processes, with a CA bundle that cannot be loaded (SSL_CERT_FILE missing, a directory, a file
with no certificate in it) and against a TLS server on 127.0.0.1 whose CA is not trusted."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from support.runs import cli, env_for, home, lines_of, repo, run  # noqa: F401 (fixtures)
from support.tlsca import tls_server

from spark_pair.base.exitcodes import ExitCode
from spark_pair.protocol.errors_map import CERT_HINT
from spark_pair.sim.process import SimProcess

BUNDLES = {"missing": ("nothing-here.pem", "no such file"),
           "garbage": ("garbage.pem", "holds no PEM certificate"),
           "directory": ("certs", "a directory")}


def _bundle(tmp_path: Path, which: str) -> Path:
    name, _ = BUNDLES[which]
    path = tmp_path / name
    if which == "garbage":
        path.write_text("not a certificate\n")
    elif which == "directory":
        path.mkdir()
    return path


@pytest.mark.parametrize("transport", ["chat", "ws"])
@pytest.mark.parametrize("which", list(BUNDLES))
def test_a_ca_bundle_that_cannot_load_is_a_config_error_not_a_traceback(
        sim: SimProcess, repo: Path, home: Path, tmp_path: Path, which: str,
        transport: str) -> None:
    bundle = _bundle(tmp_path, which)
    env = {"SSL_CERT_FILE": str(bundle), "SPARK_PAIR_BASE_URL": "https://localhost:9"}
    done = run(repo, home, sim, "x", "--transport", transport, "--json", env=env)
    assert "Traceback" not in done.stderr and "Exception in thread" not in done.stderr
    assert done.returncode == ExitCode.CONFIG, done.stderr
    assert f"SSL_CERT_FILE={bundle}" in done.stderr and BUNDLES[which][1] in done.stderr
    assert "hint: point SSL_CERT_FILE at a PEM file of CA certificates" in done.stderr
    error = next(ln for ln in lines_of(done.stdout) if ln["type"] == "error")
    assert error["class"] == "ConfigError" and "SSL_CERT_FILE" in error["hint"]


def test_doctor_reports_a_ca_bundle_that_cannot_load_as_a_failed_check(
        sim: SimProcess, repo: Path, home: Path, tmp_path: Path) -> None:
    bundle = _bundle(tmp_path, "missing")
    env = {**env_for(home, sim), "SSL_CERT_FILE": str(bundle),
           "SPARK_PAIR_BASE_URL": "https://localhost:9"}
    done = subprocess.run(cli() + ["doctor", "--json"], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=60)
    assert "Traceback" not in done.stderr + done.stdout
    assert done.returncode == ExitCode.FAILURE, done.stderr
    report = json.loads(done.stdout)
    checks = {c["id"]: c for c in report["checks"]}
    connect = checks["connect"]
    assert connect["status"] == "fail", connect
    assert f"SSL_CERT_FILE={bundle}" in connect["detail"] and "no such file" in connect["detail"]
    assert "point SSL_CERT_FILE at a PEM file" in connect["hint"]
    assert checks["auth"]["status"] == "skip"


needs_openssl = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl")


@needs_openssl
@pytest.mark.parametrize("transport", ["chat", "responses", "ws"])
def test_an_untrusted_certificate_says_so_with_the_ca_hint_on_every_transport(
        sim: SimProcess, repo: Path, home: Path, tmp_path: Path, transport: str) -> None:
    with tls_server(tmp_path) as port:
        env = {"SPARK_PAIR_BASE_URL": f"https://localhost:{port}"}
        done = run(repo, home, sim, "x", "--transport", transport, "--json", env=env)
    assert "Traceback" not in done.stderr
    assert done.returncode == ExitCode.MODEL, done.stderr
    error = next(ln for ln in lines_of(done.stdout) if ln["type"] == "error")
    assert "TLS certificate is not trusted" in error["message"], error
    assert error["hint"] == CERT_HINT
    assert "a link problem" not in error["message"]
