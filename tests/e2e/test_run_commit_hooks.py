"""`run --apply --commit` against the real git binary, where the commit takes its time or is
stopped: --timeout passing during a slow hook, Ctrl-C during a hook, a hook that fixes files.
Whatever happens, the run says what was written and what was committed."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from support.gitrepo import GIT_ENV, git, identity, replies
from support.runs import A_NEW, A_PY, check_schema, lines_of, make_repo, run

from spark_pair.sim.process import SimProcess


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return identity(make_repo(tmp_path / "repo", {"a.py": A_PY}))


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def hook(repo: Path, name: str, body: str) -> None:
    path = repo / ".git" / "hooks" / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)


def commit_run(repo: Path, home: Path, sim: SimProcess, *more: str,
               env: dict[str, str] | None = None
               ) -> tuple[subprocess.CompletedProcess[str], list[dict]]:
    proc = run(repo, home, sim, "FSTRING please", "-f", "a.py", "--apply", "--commit",
               "--json", *more, env={**GIT_ENV, **(env or {})})
    lines = lines_of(proc.stdout)
    check_schema(lines)
    return proc, lines


def test_timeout_passing_during_a_slow_hook_reports_the_turn_and_its_commit(
        sim: SimProcess, repo: Path, home: Path) -> None:
    sim.configure(replies=replies())
    hook(repo, "pre-commit", "sleep 6\n")

    proc, lines = commit_run(repo, home, sim, "--timeout", "2")

    end = lines[-1]
    assert (repo / "a.py").read_text() == A_NEW
    assert end["status"] == "applied" and end["turn_id"], proc.stderr
    assert end["commit"] == git(repo, "rev-parse", "HEAD").strip()
    assert proc.returncode == 0
    assert "nothing was written" not in proc.stderr


def test_signing_with_a_passphrase_and_no_agent_fails_at_once_and_says_why(
        sim: SimProcess, repo: Path, home: Path, tmp_path: Path) -> None:
    key = tmp_path / "locked_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "secretpass", "-f", str(key)],
                   check=True, timeout=30)
    for k, v in (("gpg.format", "ssh"), ("user.signingkey", f"{key}.pub"),
                 ("commit.gpgsign", "true")):
        git(repo, "config", k, v)
    sim.configure(replies=replies())
    base = git(repo, "rev-parse", "HEAD").strip()

    proc, lines = commit_run(repo, home, sim, env={"SSH_AUTH_SOCK": ""})

    assert proc.returncode == 10, proc.stderr
    assert git(repo, "rev-parse", "HEAD").strip() == base
    assert (repo / "a.py").read_text() == A_NEW
    assert "cannot ask for a key's passphrase" in proc.stderr
    assert "ssh-add" in proc.stderr
    assert lines[-1]["status"] == "applied" and lines[-1]["commit"] is None
