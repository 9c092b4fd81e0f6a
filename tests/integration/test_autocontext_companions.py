"""The files that come with the chosen ones: their tests, and the files the history changes
with them. Real files in real git repositories, with real histories."""

from __future__ import annotations

import subprocess
from pathlib import Path

from support.context import commit_all, found, git, make_repo

from spark_pair.workspace.gitlog import LOG_FORMAT, recent_commits
from spark_pair.workspace.index import RepoIndex

TERMUI = "def style(text, fg=None):\n    return text\n\n\ndef echo(text):\n    print(text)\n"


# --- tests ---------------------------------------------------------------------------------
def test_the_test_of_a_chosen_file_comes_along_by_its_name(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {
        "src/app/termui.py": TERMUI, "src/app/core.py": "X = 1\n",
        "tests/test_termui.py": "def test_echo():\n    pass\n",
        "tests/test_core.py": "def test_x():\n    pass\n",
        "other/tests/test_termui.py": "def test_other():\n    pass\n"})
    got = found(root, "make `style` accept a background colour")
    assert got == {"src/app/termui.py": "defines style",
                   "tests/test_termui.py": "test of src/app/termui.py"}  # the nearest one


def test_the_test_of_a_named_identifier_comes_along(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {
        "src/termui.py": TERMUI, "tests/test_utils/test_style.py": "def test_x():\n    pass\n",
        "test/res.type.js": "it('sets', () => {})\n",
        "lib/response.js": "res.type = function type(t) { return t }\n"})
    assert found(root, "validate the arguments of style()")[
        "tests/test_utils/test_style.py"] == "test of style"
    assert found(root, "add edge cases for `res.type()`")["test/res.type.js"] == "test of res.type"


# --- the history ---------------------------------------------------------------------------
def history_repo(root: Path) -> Path:
    make_repo(root, {"src/app.py": "def make_app():\n    return 0\n", "docs/api.md": "# API\n",
                     "src/other.py": "Y = 0\n", "Cargo.lock": "v0\n", "README.md": "# r\n"})
    for i in range(6):
        (root / "src" / "app.py").write_text(f"def make_app():\n    return {i}\n")
        (root / "Cargo.lock").write_text(f"v{i + 1}\n")
        if i % 3:  # 4 of the 6 commits that change app.py change the docs too
            (root / "docs" / "api.md").write_text(f"# API {i}\n")
        else:
            (root / "README.md").write_text(f"# r {i}\n")
        commit_all(root, f"change {i}")
    return root


def test_the_file_the_history_changes_with_a_chosen_file_comes_along(tmp_path: Path) -> None:
    root = history_repo(tmp_path / "r")
    got = found(root, "make `make_app` return a config")
    assert got == {"src/app.py": "defines make_app", "docs/api.md": "changes with src/app.py"}
    assert "Cargo.lock" not in got  # a lock file is written by a tool, not by hand


def test_the_history_is_kept_in_the_index_cache_per_head(tmp_path: Path) -> None:
    root = history_repo(tmp_path / "r")
    cache = tmp_path / "index.sqlite3"
    assert "docs/api.md" in found(root, "make `make_app` return a config", cache)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True,
                          text=True, check=True).stdout.strip()
    index = RepoIndex(root, cache)  # a new process: the history is read back from the cache
    index.refresh()
    kept = index.commit_log(f"{head}:{LOG_FORMAT}")
    assert kept is not None and "docs/api.md" in kept
    assert recent_commits(root, index)[0] == frozenset({"src/app.py", "Cargo.lock", "docs/api.md"})
    (root / "src" / "other.py").write_text("Y = 1\n")
    commit_all(root, "another")  # a new HEAD: the history is read again
    index.refresh()
    assert recent_commits(root, index)[0] == frozenset({"src/other.py"})
    index.close()


def test_without_a_commit_there_is_no_history(tmp_path: Path) -> None:
    root = tmp_path / "r"
    root.mkdir()
    (root / "app.py").write_text("def make_app():\n    pass\n")
    git(root, "init", "-q")
    index = RepoIndex(root)
    index.refresh()
    assert recent_commits(root, index) == []
    index.close()
    assert found(root, "change `make_app`") == {"app.py": "defines make_app"}


def test_a_test_is_in_the_language_of_the_file_it_tests(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {
        "src/app.rs": "pub fn run_app() {}\n", "src/tests/App.svelte": "<main></main>\n",
        "tests/app.rs": "#[test]\nfn runs() {}\n", "web/app.ts": "export const a = 1\n",
        "web/__tests__/app.spec.js": "it('runs', () => {})\n"})
    assert found(root, "make `run_app` faster") == {"src/app.rs": "defines run_app",
                                                    "tests/app.rs": "test of src/app.rs"}
    got = found(root, "rename web/app.ts")  # JavaScript and TypeScript are one language
    assert got["web/__tests__/app.spec.js"] == "test of web/app.ts"
