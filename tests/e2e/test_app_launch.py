"""Launching: `spark-pair` and `spark-pair demo` open the app on a terminal (a real
pseudo-terminal here) and print as before without one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from support.ptyrun import PtyProcess

from spark_pair.sim.demo_project import FILES, final_files


def cli() -> list[str]:
    return [str(Path(sys.executable).parent / "spark-pair")]


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPARK_PAIR_", "OPENAI_"))}
    env["SPARK_PAIR_HOME"] = str(tmp_path / "home")
    return env


def test_without_a_terminal_spark_pair_prints_help(tmp_path: Path) -> None:
    res = subprocess.run(cli(), capture_output=True, text=True, timeout=60,
                         stdin=subprocess.DEVNULL, env=_env(tmp_path))
    assert res.returncode == 0
    assert "Commands:" in res.stdout and "demo" in res.stdout


def test_demo_opens_the_app_and_a_turn_is_reviewed_with_keys(tmp_path: Path) -> None:
    scratch = tmp_path / "scratch"
    app = PtyProcess(cli() + ["demo", "--dir", str(scratch), "--tps", "0", "--ttft-ms", "0"],
                     cwd=str(tmp_path), env=_env(tmp_path), cols=120, rows=40)
    try:
        app.read_until("Live diff")
        app.read_until("6 undecided")  # the scripted turn started by itself
        app.send("A")  # every modify and create
        app.send("R")  # the delete and the rename are rejected
        app.read_until("applied:")
        app.send("\x11")  # ctrl+q: nothing undecided, so no question
        assert app.wait() == 0
    finally:
        app.close()
    (root,) = scratch.iterdir() if scratch.exists() else (None,)
    assert root is not None
    after = final_files()
    for rel in ("inventory.py", "test_inventory.py", "README.md", "CHANGELOG.md"):
        assert (root / rel).read_text() == after[rel]
    assert (root / "TODO.txt").read_text() == FILES["TODO.txt"]  # rejected: still there
    assert (root / "stock.csv").exists() and not (root / "sample_stock.csv").exists()


def test_spark_pair_opens_the_app_in_the_git_top_level(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    (root / "sub").mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    app = PtyProcess(cli(), cwd=str(root / "sub"), env=_env(tmp_path), cols=100, rows=30)
    try:
        app.read_until("Live diff")
        app.read_until(" proj ")  # the header names the repository, not the sub folder
        app.send("\x11")
        assert app.wait() == 0
    finally:
        app.close()
