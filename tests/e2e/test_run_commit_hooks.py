"""`run --apply --commit` against the real git binary, where the commit takes its time or is
stopped: --timeout passing during a slow hook, Ctrl-C during a hook, a hook that fixes files.
Whatever happens, the run says what was written and what was committed."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
from support.gitrepo import GIT_ENV, git, identity, replies
from support.runs import A_NEW, A_PY, check_schema, cli, env_for, lines_of, make_repo, run

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
    """The hook outlasts the run's deadline however long the run took to reach it (on a busy
    machine, longer than a fixed sleep allows for): it waits until a second past the deadline."""
    sim.configure(replies=replies())
    hook(repo, "pre-commit", 'left=$(awk -v u="$HOOK_UNTIL" -v n="$(date +%s.%N)" '
                             "'BEGIN { d = u - n; print (d > 0 ? d : 0) }')\n"
                             'sleep "$left"\n')
    timeout = 6  # time enough to reach the commit on a busy machine
    start = time.time()

    proc, lines = commit_run(repo, home, sim, "--timeout", str(timeout),
                             env={"HOOK_UNTIL": f"{start + timeout + 1:.3f}"})
    assert time.time() - start > timeout + 1  # the hook was still running at the deadline

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


def test_ctrl_c_during_a_hook_is_said_as_interrupted_not_as_a_refusal(
        sim: SimProcess, repo: Path, home: Path) -> None:
    sim.configure(replies=replies())
    began = repo.parent / "hook-began"
    hook(repo, "pre-commit", f"touch {began}\nsleep 8\n")
    base = git(repo, "rev-parse", "HEAD").strip()
    proc = subprocess.Popen(cli() + ["run", "FSTRING please", "-f", "a.py", "--apply",
                                     "--commit", "--json"], cwd=repo,
                            env={**env_for(home, sim), **GIT_ENV}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        end = time.monotonic() + 30
        while not began.exists() and time.monotonic() < end and proc.poll() is None:
            time.sleep(0.05)
        assert began.exists()
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C at a terminal: the whole group
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err
    assert "the pre-commit hook was interrupted, so nothing was committed" in err
    assert "refused" not in err
    lines = lines_of(out)
    assert lines[-1]["status"] == "applied" and lines[-1]["commit"] is None
    assert git(repo, "rev-parse", "HEAD").strip() == base
    assert (repo / "a.py").read_text() == A_NEW


def test_a_pre_commit_hook_that_fixes_and_adds_files_has_its_fixes_committed(
        sim: SimProcess, repo: Path, home: Path) -> None:
    sim.configure(replies=replies())
    hook(repo, "pre-commit", "sed -i 's/hello/HELLO/' a.py && git add a.py\n")

    proc, lines = commit_run(repo, home, sim)

    assert proc.returncode == 0, proc.stderr
    fixed = A_NEW.replace("hello", "HELLO")
    assert (repo / "a.py").read_text() == fixed
    assert git(repo, "show", "HEAD:a.py") == fixed
    assert git(repo, "status", "--porcelain") == ""


def test_hooks_run_on_a_git_without_git_hook(sim: SimProcess, repo: Path, home: Path,
                                             tmp_path: Path) -> None:
    """git before 2.36 has no `git hook`: the hook file is run as git commit runs it (here a
    git that answers `hook` as an old one does, the real git for the rest)."""
    real = shutil.which("git")
    shim = tmp_path / "bin"
    shim.mkdir()
    (shim / "git").write_text(f"#!/bin/sh\nif [ \"$1\" = hook ]; then echo \"git: 'hook' is "
                              f"not a git command. See 'git --help'.\" >&2; exit 1; fi\n"
                              f"exec {real} \"$@\"\n")
    (shim / "git").chmod(0o755)
    ran = tmp_path / "ran"
    hooks_dir = repo / "my-hooks"
    hooks_dir.mkdir()
    (hooks_dir / "post-commit").write_text(f"#!/bin/sh\necho post >> {ran}\n")
    (hooks_dir / "post-commit").chmod(0o755)
    git(repo, "config", "core.hooksPath", "my-hooks")
    sim.configure(replies=replies())

    proc, lines = commit_run(repo, home, sim,
                             env={"PATH": f"{shim}{os.pathsep}{os.environ['PATH']}"})

    assert proc.returncode == 0, proc.stderr
    assert lines[-1]["commit"] == git(repo, "rev-parse", "HEAD").strip()
    assert ran.read_text() == "post\n"
