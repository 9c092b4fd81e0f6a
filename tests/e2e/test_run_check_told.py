"""`run --apply --check CMD` without --fix: a failing check is kept with its turn in the stored
session, so `run -c` tells the model its change failed the check (as the app's does), and the
check counts in `spark-pair stats`. Real processes against the simulator, in a real git repo."""

from __future__ import annotations

import json
import subprocess

from support.runs import cli, env_for, run
from test_run_fix import bodies, diff, repo_at

from spark_pair.base.exitcodes import ExitCode
from spark_pair.sim.process import SimProcess
from spark_pair.store.sessions import SessionStore


def test_a_failed_check_goes_with_the_next_continued_run(sim: SimProcess, tmp_path) -> None:
    repo, home = repo_at(tmp_path), tmp_path / "home"
    sim.configure(replies=[{"match": "MORE", "text": diff("a - b", "a + b")},
                           {"match": "ADD", "text": diff("0", "a - b")}])
    res = run(repo, home, sim, "ADD numbers in calc.py", "-f", "calc.py", "--apply",
              "--check", "python3 check.py")
    assert res.returncode == int(ExitCode.CHECK), res.stderr
    with SessionStore(home / "data" / "sessions.sqlite3") as store:
        (info,) = store.listed(str(repo))
        (turn,) = store.turns(info.id)
    assert turn.status == "applied" and turn.check is not None and not turn.check["ok"]
    res = run(repo, home, sim, "MORE: make it pass", "-c", "-f", "calc.py", "--apply")
    assert res.returncode == 0, res.stderr
    sent = bodies(sim)
    assert len(sent) == 2
    assert "The check `python3 check.py` failed" in sent[1] and "add(2, 3) is -1" in sent[1]
    stats = subprocess.run(cli() + ["stats", "--json", "--since", "all"], cwd=repo,
                           env=env_for(home, sim), capture_output=True, text=True, timeout=60)
    (task,) = json.loads(stats.stdout)["tasks"]
    assert task["tasks"] == 1 and task["green"] == 0
