"""Automatic context from the history: the files of past commits whose subjects resemble an
instruction that names no file or identifier. Real files in a real git repository, with a real
history."""

from __future__ import annotations

import subprocess
from pathlib import Path

from support.context import commit_all, found, make_repo

from spark_pair.workspace.autocontext import AutoContext
from spark_pair.workspace.gitlog import LOG_FORMAT, recent_log
from spark_pair.workspace.index import RepoIndex
from spark_pair.workspace.pastcommits import like_commits


def past_repo(root: Path) -> Path:
    make_repo(root, {f"src/mod{i}.py": f"def work{i}():\n    return {i}\n" for i in range(6)})
    steps = [("src/mod3.py", "Keep the terminal pager open until stdin closes"),
             ("src/mod1.py", "Speed up the startup"),
             ("src/mod3.py", "Pager: pass the colour flag to less"),
             ("src/mod4.py", "Document the configuration file")]
    for i, (rel, subject) in enumerate(steps):
        (root / rel).write_text(f"def work():\n    return {i + 10}\n")
        commit_all(root, subject)
    return root


def test_the_files_of_commits_like_the_instruction_are_chosen(tmp_path: Path) -> None:
    root = past_repo(tmp_path / "r")
    got = found(root, "the pager hangs when stdin is already closed")
    # nothing in the code says "pager": only the commits do
    assert got == {"src/mod3.py": "like commit: Keep the terminal pager open until stdin closes"}


def test_one_shared_word_of_several_is_not_enough(tmp_path: Path) -> None:
    root = past_repo(tmp_path / "r")
    assert found(root, "the startup banner repeats twice") == {}
    index = RepoIndex(root)
    index.refresh()
    log = recent_log(root, index)
    assert [c.subject for c in log][0] == "Document the configuration file"
    assert log[0].files == frozenset({"src/mod4.py"})
    ranked = like_commits(log, "faster startup of the banner", index.files)
    assert ranked == []  # "startup" alone: one word of two
    ranked = like_commits(log, "fix the startup", index.files)
    assert [rel for rel, *_ in ranked] == ["src/mod1.py"]  # its only word is enough
    index.close()


def test_warming_reads_the_history_into_the_index_cache_before_any_plan(tmp_path: Path) -> None:
    root = past_repo(tmp_path / "r")
    cache = tmp_path / "index.sqlite3"
    auto = AutoContext(root, index=RepoIndex(root, cache))
    auto.warm()  # what the app runs in the background at start
    assert auto.ready
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True,
                          check=True).stdout.strip()
    kept = auto.index.commit_log(f"{head}:{LOG_FORMAT}")
    assert kept is not None and "Keep the terminal pager open" in kept
    auto.index.close()
