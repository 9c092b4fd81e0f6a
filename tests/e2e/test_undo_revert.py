"""`spark-pair undo --revert` against the real git binary when one commit holds several turns
(the rounds of a --fix run): a revert is recorded only once all of them are undone, and it
reverts the whole commit; never a partial revert claiming to be whole."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from support.gitrepo import GIT_ENV, git, identity, replies
from support.runs import A_NEW, A_PY, check_schema, cli, env_for, lines_of, make_repo, run

from spark_pair.base.exitcodes import ExitCode
from spark_pair.sim.process import SimProcess

LOUD = A_NEW.replace("hello", "HELLO")
ROUND2 = ("```diff\n--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n def greet(name):\n"
          "-    return f'hello {name}'\n+    return f'HELLO {name}'\n```\n")
CHECK = "python3 -c 'import a; assert a.greet(\"x\") == \"HELLO x\", \"LOUDER\"'"


def test_a_commit_of_two_rounds_is_reverted_only_whole(sim: SimProcess, tmp_path: Path
                                                        ) -> None:
    repo = identity(make_repo(tmp_path / "repo", {"a.py": A_PY}))
    home = tmp_path / "home"
    sim.configure(replies=[replies()[0], {"match": "LOUDER", "text": ROUND2}, replies()[1]])
    base = git(repo, "rev-parse", "HEAD").strip()
    proc = run(repo, home, sim, "FSTRING please", "-f", "a.py", "--apply", "--commit",
               "--check", CHECK, "--fix", "2", "--json", env=GIT_ENV)
    lines = lines_of(proc.stdout)
    check_schema(lines)
    commit = lines[-1]["commit"]
    assert proc.returncode == 0 and commit, proc.stderr
    assert git(repo, "show", "HEAD:a.py") == LOUD and git(repo, "rev-parse", "HEAD^").strip() \
        == base

    def undo(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(cli() + ["undo", "--revert", "--json", *args], cwd=repo,
                              capture_output=True, text=True, timeout=60,
                              env={**env_for(home, sim), **GIT_ENV})

    first = undo()  # round 2 undone; round 1 still applied: no revert of the whole yet

    assert first.returncode == ExitCode.COMMIT, first.stderr
    out = json.loads(first.stdout)
    assert out["restored"] == ["a.py"] and "only part of it" in out["error"]["message"]
    assert (repo / "a.py").read_text() == A_NEW
    assert git(repo, "rev-parse", "HEAD").strip() == commit
    assert "`spark-pair undo --revert` again" in first.stderr

    second = undo()  # round 1 undone too: the revert of the whole commit

    assert second.returncode == 0, second.stderr
    out = json.loads(second.stdout)
    assert out["commit"] == commit and git(repo, "rev-parse", "HEAD").strip() == out["revert"]
    assert git(repo, "rev-parse", "HEAD^").strip() == commit
    assert git(repo, "show", "HEAD:a.py") == A_PY == (repo / "a.py").read_text()
    assert git(repo, "status", "--porcelain") == ""
    assert git(repo, "log", "--format=%s").count("Revert") == 1


def test_a_refused_revert_lists_the_restored_files_and_says_the_undo_stands(
        sim: SimProcess, tmp_path: Path) -> None:
    repo = identity(make_repo(tmp_path / "repo", {"a.py": A_PY}))
    home = tmp_path / "home"
    hook = repo / ".git" / "hooks" / "commit-msg"
    hook.write_text("#!/bin/sh\nif grep -q '^Revert' \"$1\"; then echo 'no reverts' >&2; "
                    "exit 1; fi\n")
    hook.chmod(0o755)
    sim.configure(replies=replies())
    proc = run(repo, home, sim, "FSTRING please", "-f", "a.py", "--apply", "--commit",
               env=GIT_ENV)
    assert proc.returncode == 0, proc.stderr
    commit = git(repo, "rev-parse", "HEAD").strip()

    undone = subprocess.run(cli() + ["undo", "--revert", "--json"], cwd=repo,
                            capture_output=True, text=True, timeout=60,
                            env={**env_for(home, sim), **GIT_ENV})

    assert undone.returncode == ExitCode.COMMIT, undone.stderr
    out = json.loads(undone.stdout)
    assert out["restored"] == ["a.py"] and "commit-msg hook refused" in out["error"]["message"]
    assert "the undo stands" in out["error"]["hint"] and "stays applied" not in undone.stderr
    assert (repo / "a.py").read_text() == A_PY
    assert git(repo, "rev-parse", "HEAD").strip() == commit
