"""Automatic context from the history: the files of past commits whose subjects resemble an
instruction that names no file or identifier. Real files in a real git repository, with a real
history."""

from __future__ import annotations

import subprocess
from pathlib import Path

from support.context import commit_all, found, make_repo

from spark_pair.workspace.autocontext import AutoContext
from spark_pair.workspace.candidates import suggest
from spark_pair.workspace.gitlog import LOG_FORMAT, recent_log
from spark_pair.workspace.index import RepoIndex
from spark_pair.workspace.pastcommits import like_commits, past_lines
from spark_pair.workspace.prompt import build_context


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


def test_a_large_file_is_cut_where_the_like_commit_wrote_in_it(tmp_path: Path) -> None:
    root = tmp_path / "r"
    body = "".join(f"def step{i}(x):\n    return x + {i}\n\n\n" for i in range(400))
    make_repo(root, {"src/pager.py": body, "src/other.py": "def other():\n    return 1\n"})
    text = body.replace("    return x + 250\n", "    stream.close_when_stdin_ends(x)\n"
                        "    return x + 250\n")
    (root / "src/pager.py").write_text(text)
    commit_all(root, "Keep the terminal pager open until stdin closes")
    # later work moves every line down: the line is found by its text, not its old number
    (root / "src/pager.py").write_text("import os\nimport sys\n\n\n" + text)
    commit_all(root, "Import what the module needs")
    wrote = (root / "src/pager.py").read_text().splitlines().index(
        "    stream.close_when_stdin_ends(x)") + 1
    index = RepoIndex(root)
    index.refresh()
    got = suggest(root, "the pager hangs when stdin is already closed", index)
    index.close()
    [pick] = got.files
    assert pick.path == "src/pager.py" and pick.label.startswith("like commit: Keep the")
    assert wrote in pick.lines
    # cut to a small budget, the file shows that line, far from its head and its end
    ctx = build_context(root, ["src/pager.py"], 600, query=got.instruction,
                        focus={pick.path: pick.lines})
    assert any(a <= wrote <= b for a, b in ctx.partial["src/pager.py"])


def test_lines_found_all_over_a_file_say_nowhere(tmp_path: Path) -> None:
    root = tmp_path / "r"
    make_repo(root, {"a.py": "x = 1\n"})
    (root / "a.py").write_text("x = 1\n" + "value = compute()\n" * 5 + "unique_line_here = 2\n")
    commit_all(root, "Compute the values")
    sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True,
                         check=True).stdout.strip()
    assert past_lines(root, [("a.py", (sha,))]) == {"a.py": (7,)}
    assert past_lines(root, [("a.py", ("0" * 40,))]) == {}  # git fails: nothing, no error


def test_a_test_that_comes_with_its_module_is_cut_where_recent_work_on_it_was(
        tmp_path: Path) -> None:
    root = tmp_path / "r"
    tests = "".join(f"def test_case{i}():\n    assert {i} == {i}\n\n\n" for i in range(300))
    make_repo(root, {"src/termui.py": "def render_bar(width):\n    return '#' * width\n",
                     "tests/test_termui.py": tests, "CHANGES.md": "# Changes\n"})
    text = tests.replace("def test_case150():\n", "def test_bar_of_no_width():\n"
                         "    assert termui.draw_empty() == ''\n\n\ndef test_case150():\n")
    (root / "tests/test_termui.py").write_text(text)
    commit_all(root, "Test an empty bar")
    wrote = text.splitlines().index("def test_bar_of_no_width():") + 1
    index = RepoIndex(root)
    index.refresh()
    got = {c.path: c for c in suggest(root, "make `render_bar` draw a frame", index).files}
    index.close()
    test = got["tests/test_termui.py"]
    assert test.label == "test of src/termui.py"
    assert wrote in test.lines  # neither its head nor its end: where it was last worked on
