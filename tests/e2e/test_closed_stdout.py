"""`spark-pair run ... | head -1`: a reader that goes away stops the run plainly (no traceback)
and a turn stopped that way writes nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from support.context import CLIENT, RENAME, UTILS, make_repo

from spark_pair.sim.process import SimProcess


def test_a_closed_stdout_stops_the_run_without_a_traceback_or_a_write(
        sim: SimProcess, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"http/utils.py": UTILS, "http/client.py": CLIENT})
    sim.configure(replies=[{"match": "parse_header", "text": RENAME}])
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPARK_PAIR_", "OPENAI_"))}
    env.update(SPARK_PAIR_HOME=str(tmp_path / "home"), SPARK_PAIR_BASE_URL=sim.base_url)
    script = Path(sys.executable).parent / "spark-pair"
    read, write = os.pipe()
    proc = subprocess.Popen([str(script), "run", "rename parse_header to parse_head", "--json",
                             "--apply"], cwd=repo, env=env, stdout=write,
                            stderr=subprocess.PIPE, text=True)
    os.close(write)
    with os.fdopen(read) as out:
        first = out.readline()  # the reader takes one line and goes away
    _, err = proc.communicate(timeout=60)
    assert '"type":"session"' in first
    assert proc.returncode == 1
    assert "Traceback" not in err and "internal error" not in err, err
    assert "stdout was closed" in err
    assert (repo / "http" / "utils.py").read_text() == UTILS
