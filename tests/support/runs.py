"""`spark-pair run` and the other commands as real processes, in real git repositories: the
repository and reply the end-to-end tests share, and how they run and read a command."""

from __future__ import annotations

import json
import os
import selectors
import shutil
import subprocess
import sys
import time
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

from spark_pair.sim.process import SimProcess

from . import forkrun

A_PY = "def greet(name):\n    return 'hello ' + name\n\n\ndef unused():\n    pass\n"
A_NEW = "def greet(name):\n    return f'hello {name}'\n\n\ndef unused():\n    pass\n"
# the reply that turns A_PY into A_NEW
A_DIFF = """```diff
--- a/a.py
+++ b/a.py
@@ -1,2 +1,2 @@
 def greet(name):
-    return 'hello ' + name
+    return f'hello {name}'
```
"""
OLD_PY = "# no longer needed\nLEGACY = True\n"
UTIL_PY = "def helper():\n    return 42\n"
NEW_PY = "from a import greet\n\nprint(greet('world'))\n"
MULTI_DIFF = """I changed four files:

```diff
--- a/a.py
+++ b/a.py
@@ -1,3 +1,3 @@
 def greet(name):
-    return 'hello ' + name
+    return f'hello {name}'
 
--- /dev/null
+++ b/main.py
@@ -0,0 +1,3 @@
+from a import greet
+
+print(greet('world'))
--- a/old.py
+++ /dev/null
@@ -1,2 +0,0 @@
-# no longer needed
-LEGACY = True
diff --git a/util.py b/helpers.py
similarity index 100%
rename from util.py
rename to helpers.py
```
"""


def cli(cold: bool = False) -> list[str]:
    """`spark-pair`: through the worker's fork server (support/forkrun: a process of its own,
    the imports shared), or `cold`, a new interpreter that imports everything itself."""
    script = Path(sys.executable).parent / "spark-pair"
    if not script.exists():
        return [sys.executable, "-c", "from spark_pair.entry import main; main()"]
    if cold or os.environ.get("SPARK_PAIR_TESTS_COLD"):
        return [str(script)]
    return forkrun.command(script)


def make_repo(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for rel, text in files.items():
        (root / rel).write_text(text)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    for args in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "base"]):
        subprocess.run(git + args, cwd=root, check=True, capture_output=True, timeout=30)
    return root


def copy_repo(template: Path, root: Path) -> Path:
    """A repository of a test's own at `root`, copied whole (.git and all) from one made once a
    session: git's three processes took four times a copy's CPU."""
    shutil.copytree(template, root, symlinks=True, dirs_exist_ok=True)
    return root


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".git" not in p.relative_to(root).parts}


def env_for(home: Path, sim: SimProcess) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPARK_PAIR_", "OPENAI_"))}
    env.update(SPARK_PAIR_HOME=str(home), SPARK_PAIR_BASE_URL=sim.base_url,
               SPARK_PAIR_MODEL="gpt-5.3-codex-spark", SPARK_PAIR_API_KEY="sk-test-e2e-secret-key",
               PYTHONUNBUFFERED="1")
    return env


def run(repo: Path, home: Path, sim: SimProcess, *args: str, stdin: str | None = None,
        timeout: float = 60, env: dict[str, str] | None = None
        ) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cli() + ["run", *args], cwd=repo,
                          env={**env_for(home, sim), **(env or {})}, input=stdin,
                          capture_output=True, text=True, timeout=timeout)


def lines_of(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


SCHEMA = json.loads(resources.files("spark_pair.headless").joinpath("schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


def branches(schema: dict) -> dict[str, jsonschema.Draft202012Validator]:
    """The schema's oneOf, a validator per line type: the branch a line's `type` names. With
    one branch per type, each requiring its `type` const (tests/unit/test_headless_schema.py
    holds it so), a line passes its branch exactly when it passes the oneOf, whose failing
    branches' errors took twenty times the check's CPU."""
    root = {k: v for k, v in schema.items() if k != "oneOf"}
    return {ref["$ref"].rpartition("/")[2]: jsonschema.Draft202012Validator({**root, **ref})
            for ref in schema["oneOf"]}


BY_TYPE = branches(SCHEMA)


def check_line(line: dict) -> None:
    branch = BY_TYPE.get(line.get("type"))
    (branch or VALIDATOR).validate(line)  # no branch: the whole schema says why not
    assert branch is not None, line


def check_schema(lines: list[dict]) -> None:
    for line in lines:
        check_line(line)
    assert lines[0]["type"] == "session" and lines[-1]["type"] == "end"


def make_runs_repo(root: Path) -> Path:
    return make_repo(root, {"a.py": A_PY, "old.py": OLD_PY, "util.py": UTIL_PY})


@pytest.fixture
def repo(tmp_path: Path, runs_repo_template: Path) -> Path:
    """a.py, old.py and util.py, committed (runs_repo_template: tests/conftest.py)."""
    return copy_repo(runs_repo_template, tmp_path / "repo")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def run_editing_mid_stream(sim: SimProcess, repo: Path, home: Path, diff: str,
                            mine: str) -> tuple[int, list[dict]]:
    """`run --apply --json` whose a.py the user rewrites to `mine` while the reply streams."""
    padding = "".join(f"+line {i}\n" for i in range(150))
    sim.configure(replies=[{"match": "MID", "text": diff + (
        f"--- /dev/null\n+++ b/pad.txt\n@@ -0,0 +1,150 @@\n{padding}")}], tps=400, ttft_ms=0)
    proc = subprocess.Popen(cli() + ["run", "MID", "-f", "a.py", "--apply", "--json"],
                            cwd=repo, env=env_for(home, sim), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    lines: list[dict] = []
    try:
        edited = False
        deadline = time.monotonic() + 60
        assert proc.stdout is not None
        with selectors.DefaultSelector() as sel:
            sel.register(proc.stdout, selectors.EVENT_READ)
            while time.monotonic() < deadline:
                if not sel.select(timeout=1.0):
                    continue
                raw = proc.stdout.readline()
                if not raw:
                    break
                lines.append(json.loads(raw))
                if not edited and lines[-1]["type"] == "file" and lines[-1]["path"] == "pad.txt":
                    (repo / "a.py").write_text(mine)
                    edited = True
        code = proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()
    assert edited
    check_schema(lines)
    return code, lines
