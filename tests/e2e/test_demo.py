"""`spark-pair demo`: offline, no key, a scratch repo edited by one real turn."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from spark_pair.sim.demo_project import FILES, final_files


def cli() -> list[str]:
    script = Path(sys.executable).parent / "spark-pair"
    return [str(script)] if script.exists() else [sys.executable, "-c",
                                                  "from spark_pair.cli.main import main; main()"]


def test_demo_edits_a_scratch_repo_offline(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPARK_PAIR_", "OPENAI_"))}
    env["SPARK_PAIR_HOME"] = str(tmp_path / "home")
    res = subprocess.run(cli() + ["demo", "--dir", str(tmp_path / "scratch"), "--tps", "0",
                                   "--ttft-ms", "0"], env=env, capture_output=True, text=True,
                         timeout=90, stdin=subprocess.DEVNULL)
    assert res.returncode == 0, res.stderr
    found = re.search(r"the repo is at (\S+)", res.stderr)
    assert found, res.stderr
    root = Path(found.group(1))
    assert root.parent == tmp_path / "scratch"
    after = final_files()
    tree = {p.relative_to(root).as_posix() for p in root.rglob("*")
            if p.is_file() and ".git" not in p.parts}
    assert tree == set(after)  # a file made, one deleted, one renamed
    for rel, text in after.items():
        assert (root / rel).read_text() == text, rel
    assert "+++ b/inventory.py" in res.stdout and "@@" in res.stdout  # the diff on stdout
    assert "TTFT" in res.stderr and "tok/s" in res.stderr  # the meter on stderr
    status = subprocess.run(["git", "status", "--porcelain"], cwd=root, capture_output=True,
                            text=True, check=True)
    assert sorted(line[3:] for line in status.stdout.splitlines()) == sorted(
        ["CHANGELOG.md", "README.md", "TODO.txt", "inventory.py", "sample_stock.csv",
         "stock.csv", "test_inventory.py"])
    assert "applied: 7 file(s) changed" in res.stderr
    said = re.search(r"^  (cd .* undo)   # put it back exactly$", res.stderr, re.M)
    assert said, res.stderr  # the undo command as printed, run as printed (from another folder)
    undo = subprocess.run(said.group(1), shell=True, cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60)
    assert undo.returncode == 0, undo.stderr
    for rel, text in FILES.items():
        assert (root / rel).read_text() == text
    assert not (root / "CHANGELOG.md").exists() and not (root / "sample_stock.csv").exists()



def test_the_exit_note_says_nothing_was_written_or_that_it_was_undone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The note after the demo reads the undo journal: a file edited by hand is no turn;
    an applied turn put back is "applied, then undone" with the redo command."""
    from spark_pair.cli.commands.demo import exit_note, make_repo

    monkeypatch.setenv("SPARK_PAIR_HOME", str(tmp_path / "home"))
    root = make_repo(tmp_path)
    (root / "inventory.py").write_text("changed by hand\n")
    assert "nothing was written: no turn was applied" in exit_note(root)
    env = {**os.environ, "SPARK_PAIR_HOME": str(tmp_path / "home")}
    res = subprocess.run(cli() + ["demo", "--dir", str(tmp_path / "scratch"), "--tps", "0",
                                   "--ttft-ms", "0"], env=env, capture_output=True, text=True,
                         timeout=90, stdin=subprocess.DEVNULL)
    found = re.search(r"the repo is at (\S+)", res.stderr)
    assert found, res.stderr
    demo = Path(found.group(1))
    assert "applied: 7 file(s)" in exit_note(demo)
    undo = subprocess.run(cli() + ["undo"], cwd=demo, env=env, capture_output=True, text=True,
                          timeout=60)
    assert undo.returncode == 0, undo.stderr
    note = exit_note(demo)
    assert "applied, then undone" in note and " redo   # apply it again" in note
