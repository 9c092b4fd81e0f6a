"""The second look through `spark-pair run --json`: a real process against the simulator
process, in a real git repository. The model (a scripted reply) answers `NEED:` lines first;
the follow-up request carries what it asked for and the diff it writes then is applied."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from support.context import make_repo
from support.runs import check_schema, lines_of, run

from spark_pair.sim.process import SimProcess

UTIL = ("def slugify(text):\n    return text.lower().replace(' ', '-')\n\n\n"
        "def shout(text):\n    return text.upper()\n")
DIFF = ("--- a/pkg/util.py\n+++ b/pkg/util.py\n@@ -1,2 +1,2 @@\n def slugify(text):\n"
        "-    return text.lower().replace(' ', '-')\n"
        "+    return text.strip().lower().replace(' ', '-')\n")
PROMPT = "trim the input before making the url part"
FOLLOW = "You asked for: "  # what the follow-up message begins with


def lines_in(res: subprocess.CompletedProcess) -> list[dict]:
    out = lines_of(res.stdout)
    check_schema(out)
    return out


def last_user_text(body: dict) -> str:
    if "messages" in body:
        return body["messages"][-1]["content"]
    items = body["input"]
    content = items[-1]["content"]
    return content if isinstance(content, str) else "".join(p.get("text", "") for p in content)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", {"pkg/util.py": UTIL, "main.py": "print('hi')\n",
                                         "secrets/.env": "KEY=1\n"})


@pytest.mark.parametrize("transport", ["chat", "ws"])
def test_the_model_asks_for_a_file_then_edits_it(sim: SimProcess, repo: Path, tmp_path: Path,
                                                  transport: str) -> None:
    sim.configure(replies=[{"match": FOLLOW, "text": DIFF},
                           {"match": "trim", "text": "NEED: pkg/util.py\n"}])
    res = run(repo, tmp_path / "home", sim, PROMPT, "--json", "--apply",
                     "--transport", transport)
    assert res.returncode == 0, res.stderr
    assert "text.strip().lower()" in (repo / "pkg" / "util.py").read_text()
    lines = lines_in(res)
    kinds = [ln["type"] for ln in lines]
    assert kinds.count("request") == 2
    look = lines[kinds.index("look")]
    assert kinds.index("request") < kinds.index("look") < len(kinds) - kinds[::-1].index(
        "request") - 1
    assert look["asked"] == ["pkg/util.py"] and look["not_sent"] == []
    assert [(f["path"], f["reason"], f["shown"], f["lines"]) for f in look["files"]] == [
        ("pkg/util.py", "asked by the model", "whole", [[1, 6]])]
    assert look["tokens"] > 0
    assert "the model asked for pkg/util.py: sent pkg/util.py (whole" in res.stderr
    first, second = (r["body"] for r in sim.requests()[-2:])
    assert "def slugify" not in json.dumps(first)  # the context did not hold it
    follow = last_user_text(second)
    assert follow.startswith(FOLLOW + "pkg/util.py") and "def slugify(text):" in follow
    if transport == "ws":  # chained: only the new part goes
        assert second.get("previous_response_id") and len(second["input"]) == 1
    else:  # the full conversation: the reply that asked, then the follow-up
        roles = [m["role"] for m in second["messages"]]
        assert roles[-3:] == ["user", "assistant", "user"]
        assert second["messages"][-2]["content"] == "NEED: pkg/util.py"
    usage = lines[kinds.index("usage")]
    assert usage["input_tokens"] > 0 and usage["output_tokens"] > len(DIFF) // 4


def test_a_symbol_is_sent_as_its_definition(sim: SimProcess, repo: Path, tmp_path: Path
                                            ) -> None:
    sim.configure(replies=[{"match": FOLLOW, "text": DIFF},
                           {"match": "trim", "text": "NEED: shout\n"}])
    res = run(repo, tmp_path / "home", sim, PROMPT, "--json",
                     "--transport", "chat")
    look = next(ln for ln in lines_in(res) if ln["type"] == "look")
    assert [(f["path"], f["reason"], f["shown"], f["lines"]) for f in look["files"]] == [
        ("pkg/util.py", "asked by the model: defines shout", "regions", [[5, 6]])]
    follow = last_user_text(sim.requests()[-1]["body"])
    assert "def shout(text):" in follow and "def slugify" not in follow
    assert "the model asked for shout: sent pkg/util.py (defines shout: lines 5-6, ~" \
        in res.stderr


def test_unknown_names_outside_paths_and_withheld_files_are_said_not_sent(
        sim: SimProcess, repo: Path, tmp_path: Path) -> None:
    (tmp_path / "outside.py").write_text("TOP_SECRET = 1\n")
    sim.configure(replies=[{"match": FOLLOW, "text": DIFF},
                           {"match": "trim",
                            "text": "NEED: ../outside.py\nNEED: no_such_thing\n"
                                    "NEED: secrets/.env\n"}])
    res = run(repo, tmp_path / "home", sim, PROMPT, "--json",
                     "--transport", "ws")
    assert res.returncode == 0, res.stderr
    look = next(ln for ln in lines_in(res) if ln["type"] == "look")
    assert look["files"] == [] and look["tokens"] == 0
    why = {n["name"]: n["reason"] for n in look["not_sent"]}
    assert why["../outside.py"] == "'..' leaves the repository"
    assert why["no_such_thing"].startswith("not found")
    assert "secret" in why["secrets/.env"]
    follow = last_user_text(sim.requests()[-1]["body"])
    assert "TOP_SECRET" not in follow and "KEY=1" not in follow
    assert "Not sent: no_such_thing (not found" in follow


def test_a_second_need_ends_the_turn_with_an_error_and_a_hint(sim: SimProcess, repo: Path,
                                                              tmp_path: Path) -> None:
    sim.configure(replies=[{"match": FOLLOW, "text": "NEED: main.py\n"},
                           {"match": "trim", "text": "NEED: pkg/util.py\n"}])
    res = run(repo, tmp_path / "home", sim, PROMPT, "--json", "--apply",
                     "--transport", "chat")
    assert res.returncode == 4  # MODEL: the reply held no usable diff
    assert len(sim.requests()) == 2  # one look, never a third request
    lines = lines_in(res)
    error = next(ln for ln in lines if ln["type"] == "error")
    assert "asked again for more context (main.py)" in error["message"]
    assert "second_look" in error["hint"]
    assert "Traceback" not in res.stderr
    assert (repo / "pkg" / "util.py").read_text() == UTIL


def test_the_setting_off_sends_the_old_prompt_and_a_need_reply_is_no_diff(
        sim: SimProcess, repo: Path, tmp_path: Path) -> None:
    (repo / ".spark-pair.toml").write_text("[context]\nsecond_look = false\n")
    sim.configure(replies=[{"match": FOLLOW, "text": DIFF},
                           {"match": "trim", "text": "NEED: pkg/util.py\n"}])
    res = run(repo, tmp_path / "home", sim, PROMPT, "--json",
                     "--transport", "chat")
    assert len(sim.requests()) == 1
    system = sim.requests()[0]["body"]["messages"][0]["content"]
    assert "NEED" not in system
    assert all(ln["type"] != "look" for ln in lines_in(res))
    assert res.returncode != 0 and "no unified diff" in res.stderr


def test_the_prompt_offers_the_look_by_default(sim: SimProcess, repo: Path, tmp_path: Path
                                               ) -> None:
    sim.configure(replies=[{"match": "trim", "text": DIFF}])
    res = run(repo, tmp_path / "home", sim, PROMPT, "--json",
                     "--transport", "chat")
    assert res.returncode == 0, res.stderr
    assert "NEED: path/to/file.py" in sim.requests()[0]["body"]["messages"][0]["content"]
    assert len(sim.requests()) == 1


def test_no_auto_context_offers_no_look(sim: SimProcess, repo: Path, tmp_path: Path) -> None:
    sim.configure(replies=[{"match": "trim", "text": DIFF}])
    res = run(repo, tmp_path / "home", sim, PROMPT, "--json", "--transport", "chat",
              "--no-auto-context", "-f", "pkg/util.py")
    assert res.returncode == 0, res.stderr
    assert "NEED" not in sim.requests()[0]["body"]["messages"][0]["content"]
