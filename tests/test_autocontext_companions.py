"""The files that come with the chosen ones: their tests. Real files in real git
repositories."""

from __future__ import annotations

from pathlib import Path

from test_autocontext import make_repo

from spark_pair.workspace.candidates import suggest
from spark_pair.workspace.index import RepoIndex


def found(root: Path, instruction: str, cache: Path | None = None) -> dict[str, str]:
    index = RepoIndex(root, cache)
    index.refresh()
    try:
        return {c.path: c.label for c in suggest(root, instruction, index).files}
    finally:
        index.close()


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
