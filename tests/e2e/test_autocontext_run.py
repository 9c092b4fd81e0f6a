"""Automatic context through `spark-pair run`: a real process against the simulator process, in a
real git repository; what the request carried is read back from the simulator."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.context import CLIENT, RENAME, UTILS, commit_all, make_repo

from spark_pair.sim.process import SimProcess

PROMPT = "rename parse_header to parse_head in the http utils"


def spark_pair(repo: Path, home: Path, sim: SimProcess, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPARK_PAIR_", "OPENAI_"))}
    env.update(SPARK_PAIR_HOME=str(home), SPARK_PAIR_BASE_URL=sim.base_url,
               SPARK_PAIR_MODEL="gpt-5.3-codex-spark", SPARK_PAIR_API_KEY="sk-test-auto-key")
    script = Path(sys.executable).parent / "spark-pair"
    return subprocess.run([str(script), *args], cwd=repo, env=env, capture_output=True,
                          text=True, timeout=60)


def sent_text(sim: SimProcess) -> str:
    body = sim.requests()[-1]["body"]
    if "messages" in body:
        return body["messages"][-1]["content"]
    items = body["input"]
    return items[-1]["content"] if isinstance(items[-1]["content"], str) else json.dumps(items)


@pytest.fixture
def http_repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", {"http/utils.py": UTILS, "http/client.py": CLIENT,
                                         "hello.py": "print('hi')\n"})


def test_run_without_f_sends_the_file_that_defines_the_name_and_the_diff_applies(
        sim: SimProcess, http_repo: Path, tmp_path: Path) -> None:
    sim.configure(replies=[{"match": "parse_header", "text": RENAME}])
    res = spark_pair(http_repo, tmp_path / "home", sim, "run", PROMPT, "--apply")
    assert res.returncode == 0, res.stderr
    assert "def parse_head(line):" in (http_repo / "http" / "utils.py").read_text()
    text = sent_text(sim)
    assert "### http/utils.py\n" in text and "### http/client.py\n" in text
    assert "Repository map" in text and "hello.py" in text
    assert "context: http/utils.py (defines parse_header), http/client.py (uses parse_header)" \
        in res.stderr


def test_run_json_names_each_file_with_its_reason(sim: SimProcess, http_repo: Path,
                                                  tmp_path: Path) -> None:
    (http_repo / "tests").mkdir()
    (http_repo / "tests" / "test_utils.py").write_text("def test_split():\n    pass\n")
    commit_all(http_repo, "a test")
    sim.configure(replies=[{"match": "parse_header", "text": RENAME}])
    res = spark_pair(http_repo, tmp_path / "home", sim, "run", PROMPT, "--json", "-f",
                     "hello.py")
    lines = [json.loads(ln) for ln in res.stdout.splitlines()]
    kinds = [ln["type"] for ln in lines]
    assert kinds.index("context") == kinds.index("turn") + 1
    context = lines[kinds.index("context")]
    assert [(f["path"], f["reason"], f["shown"]) for f in context["files"]] == [
        ("hello.py", "added", "whole"), ("http/utils.py", "defines parse_header", "whole"),
        ("tests/test_utils.py", "test of http/utils.py", "whole"),
        ("http/client.py", "uses parse_header", "whole")]
    assert all(f["tokens"] > 0 for f in context["files"]) and context["map_tokens"] == 0


def test_no_auto_context_and_the_config_switch_send_only_the_files_given(
        sim: SimProcess, http_repo: Path, tmp_path: Path) -> None:
    sim.configure(replies=[{"match": "parse_header", "text": RENAME}])
    res = spark_pair(http_repo, tmp_path / "home", sim, "run", PROMPT, "--no-auto-context")
    assert "### http/utils.py" not in sent_text(sim)
    assert "Repository map" not in sent_text(sim)
    assert "context:" not in res.stderr
    (http_repo / ".spark-pair.toml").write_text("[context]\nauto = false\n")
    spark_pair(http_repo, tmp_path / "home", sim, "run", PROMPT)
    assert "### http/utils.py" not in sent_text(sim)


def test_a_named_secret_is_not_sent_and_the_note_says_how_to_add_it(
        sim: SimProcess, http_repo: Path, tmp_path: Path) -> None:
    (http_repo / ".env").write_text("API_TOKEN=hunter2\n")
    sim.configure(replies=[{"match": "env", "text": "nothing to change"}])
    res = spark_pair(http_repo, tmp_path / "home", sim, "run", "read the token from .env")
    assert "hunter2" not in sent_text(sim)
    assert "note: .env is not sent (looks like a secret (.env)); to send it anyway, add it " \
           "by hand: -f .env" in res.stderr
    spark_pair(http_repo, tmp_path / "home", sim, "run", "read the token from .env", "-f", ".env")
    assert "hunter2" in sent_text(sim)  # added by hand: sent


def test_ctrl_c_while_the_index_is_built_stops_the_run(sim: SimProcess, tmp_path: Path) -> None:
    files = {f"pkg{i % 50}/m{i}.py": "".join(f"def f_{i}_{j}():\n    pass\n" for j in range(60))
             for i in range(3000)}
    repo = make_repo(tmp_path / "big", files)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPARK_PAIR_", "OPENAI_"))}
    env.update(SPARK_PAIR_HOME=str(tmp_path / "home"), SPARK_PAIR_BASE_URL=sim.base_url)
    script = Path(sys.executable).parent / "spark-pair"
    proc = subprocess.Popen([str(script), "run", "rename f_1_1", "--json"], cwd=repo, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: __import__("signal").signal(2, 0))
    import time

    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not (tmp_path / "home" / "data" / "index").exists():
        time.sleep(0.02)
    time.sleep(0.2)  # reading the 3,000 files
    proc.send_signal(2)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "interrupted (Ctrl-C)" in err
    assert json.loads(out.splitlines()[-1])["type"] == "end"
    assert not sim.requests()


def test_a_named_function_in_a_large_file_goes_as_its_lines_and_the_request_stays_small(
        sim: SimProcess, tmp_path: Path) -> None:
    fillers = "".join(f"def filler{i}(x):\n    return x + {i}\n\n\n" for i in range(3000))
    repo = make_repo(tmp_path / "repo", {"big.py": fillers + UTILS + fillers.replace(
        "filler", "later")})
    sim.configure(replies=[{"match": "parse_header", "text": ""}])
    res = spark_pair(repo, tmp_path / "home", sim, "run", "make parse_header strip tabs",
                     "--json")
    lines = [json.loads(ln) for ln in res.stdout.splitlines()]
    context = next(ln for ln in lines if ln["type"] == "context")
    big = next(f for f in context["files"] if f["path"] == "big.py")
    assert big["reason"] == "defines parse_header" and big["shown"] == "regions"
    assert any(a <= 12001 <= b for a, b in big["lines"])  # `def parse_header` is line 12001
    assert sum(f["tokens"] for f in context["files"]) <= 7500  # of a ~90,000-token file
    assert "12001| def parse_header(line):" in sent_text(sim)
    res = spark_pair(repo, tmp_path / "home", sim, "run", "make parse_header strip tabs")
    assert "context: big.py (defines parse_header, lines 1-" in res.stderr
