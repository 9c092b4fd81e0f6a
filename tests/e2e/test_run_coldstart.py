"""`spark-pair run` sends its request before it loads what only the reply needs.

A real `run` process (started as the installed command starts it) against the simulator
process, in a real git repo: a small boot script records which modules are loaded at every
socket write the process makes (the request is the first large one) and at its exit."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from support.runs import A_PY, env_for, make_repo

from spark_pair.sim.process import SimProcess

# the modules a run needs only once the reply streams in (parse, apply, journal, log, the
# repair round after the stream); none of them may delay the request
# (sqlite3 itself loads before: the index of definitions the automatic context reads is SQLite)
AFTER_FIRST_TOKEN = ("spark_pair.edits.parser", "spark_pair.edits.apply",
                     "spark_pair.edits.journal", "spark_pair.edits.render",
                     "spark_pair.store.sqlite", "spark_pair.session.repair_round",
                     "spark_pair.session.repair")
# ...and what a text-mode run with --apply never needs at all: the JSON lines and their cost
# table, review verdicts (a policy decides), the file watcher (one turn)
NEVER_IN_A_TEXT_RUN = ("spark_pair.headless.jsonl", "spark_pair.store.stats",
                       "spark_pair.store.verdicts", "spark_pair.session.review",
                       "spark_pair.workspace.watcher")

BOOT = """
import json, os, socket, sys

seen = []

def recording(name):
    real = getattr(socket.socket, name)

    def write(self, data, *args):
        seen.append({"bytes": len(data), "modules": sorted(sys.modules)})
        return real(self, data, *args)

    return write

for name in ("send", "sendall"):
    setattr(socket.socket, name, recording(name))
leave = os._exit

def dump(code):
    with open(os.environ["RECORD_TO"], "w") as out:
        json.dump({"writes": seen, "exit": sorted(sys.modules)}, out)
    leave(code)

os._exit = dump
sys.argv = ["spark-pair", *sys.argv[1:]]
from spark_pair.entry import main
main()
"""

PADDING = "".join(f"\n# line {i} of a long file" for i in range(200))  # a 5 kB request
DIFF = """--- a/a.py
+++ b/a.py
@@ -1,2 +1,2 @@
 def greet(name):
-    return 'hello ' + name
+    return f'hello {name}'
"""


@pytest.mark.parametrize("transport", ["ws", "responses", "chat"])
def test_the_request_goes_out_before_the_reply_modules_load(sim: SimProcess, tmp_path: Path,
                                                            transport: str) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": A_PY + PADDING})
    record = tmp_path / "modules.json"
    sim.configure(replies=[{"match": "GREET", "text": DIFF}])
    env = {**env_for(tmp_path / "home", sim), "RECORD_TO": str(record)}
    proc = subprocess.run([sys.executable, "-c", BOOT, "run", "GREET with an f-string", "-f",
                           "a.py", "--apply", "--transport", transport], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "f'hello {name}'" in (repo / "a.py").read_text()
    assert [e["transport"] for e in sim.requests()] == [transport]
    seen = json.loads(record.read_text())
    # the request (system prompt and the 5 kB file) is the first write of over 4 kB; the
    # WebSocket handshake and HTTP headers alone are far smaller
    request = next(w for w in seen["writes"] if w["bytes"] > 4000)
    early = [m for m in AFTER_FIRST_TOKEN if m in request["modules"]]
    assert early == [], f"loaded before the request went out: {early}"
    assert set(AFTER_FIRST_TOKEN) <= set(seen["exit"])  # ...and the run did need them later
    assert "watchfiles" not in seen["exit"]  # one turn: the last look before the write checks
    assert [m for m in NEVER_IN_A_TEXT_RUN if m in seen["exit"]] == []
