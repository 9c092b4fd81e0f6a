"""Launching: `spark-pair` and `spark-pair demo` open the app on a terminal (a real
pseudo-terminal here) and print as before without one."""

from __future__ import annotations

import os
import subprocess
import sys
import time
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
        app.read_until("sent: validate input lines")  # the demo shows what it asked
        app.send("Also add a test for the discount")  # typed text: to the prompt, decides nothing
        app.send("\x1b[200~first line\nsecond line\nthird line\x1b[201~")  # a bracketed paste
        app.read_until("lines (^j: new line)")  # the prompt holds every line of it
        for chord in ("\x1bA", "\x1bR"):  # alt+A: every modify and create; alt+R: the rest
            time.sleep(0.3)  # (an escape with no key after it for a moment: alt, not a prefix)
            app.send(chord)
        app.read_until("applied:")
        app.send("\x11")  # ctrl+q: nothing undecided, but the prompt holds a draft: asked
        app.read_until("printed as you leave")
        app.send("\x11")  # a second ctrl+q quits
        assert app.wait() == 0
        app.read_until("third line")  # the draft is printed: nothing typed is lost
        app.read_until("put it back exactly")  # the exit note says what happened
    finally:
        app.close()
    (root,) = scratch.iterdir() if scratch.exists() else (None,)
    assert root is not None
    note = app.text()
    assert "applied: 4 file(s) changed" in note and "nothing was written" not in note
    assert "your unsent prompt:" in note and "Also add a test for the discount" in note
    assert f"{cli()[0]} undo" in note  # a command that runs where the README installs it
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
