"""What the model reads never holds a key: a key the environment sets or a config file holds
literally goes as *** wherever it stands (a file, an instruction); spark-pair's own config file
is no automatic context. A real run process against the simulator process."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from support.runs import env_for, home, lines_of, repo, run  # noqa: F401 (fixtures)

from spark_pair.sim.process import SimProcess

ENV_KEY = "sk-test-e2e-secret-key"  # support.runs.env_for's
FILE_KEY = "sk-INFILE-SECRET-0123456789"


def test_keys_in_files_and_the_instruction_are_sent_as_stars(sim: SimProcess, repo: Path,
                                                             home: Path) -> None:
    (repo / "launch.sh").write_text(f"export SPARK_PAIR_API_KEY={ENV_KEY}\nexec app\n")
    (repo / ".spark-pair.toml").write_text(f'[model]\napi_key = "{FILE_KEY}"\n')
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True, capture_output=True)
    (repo / ".spark-pair.toml").write_text(f'[model]\napi_key = "{FILE_KEY}"\n# edited\n')
    (repo / "launch.sh").write_text(f"export SPARK_PAIR_API_KEY={ENV_KEY}\nexec app --x\n")
    sim.clear_requests()
    done = run(repo, home, sim, f"why does launch.sh say {ENV_KEY}", "-f", "launch.sh",
               "--json")
    assert "literal key" in done.stderr  # the config's key is warned of, and ignored
    bodies = [json.dumps(r["body"]) for r in sim.requests()]
    assert bodies and any("exec app --x" in b for b in bodies)  # the file went
    assert all(ENV_KEY not in b and FILE_KEY not in b for b in bodies)
    assert any("export SPARK_PAIR_API_KEY=***" in b for b in bodies)
    context = next(line for line in lines_of(done.stdout) if line["type"] == "context")
    assert ".spark-pair.toml" not in json.dumps(context)  # edited, but not the task's context
    assert ENV_KEY not in done.stdout + done.stderr and FILE_KEY not in done.stdout + done.stderr
