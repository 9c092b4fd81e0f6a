"""A fix round's instruction quotes the check command: the language's keywords and the
command's own words in it name nothing (a file is not chosen for `import`). Real files in a
real git repository."""

from __future__ import annotations

from pathlib import Path

from support.context import found, make_repo

from spark_pair.session.fixloop import fix_instruction
from spark_pair.workspace.checkrun import CheckResult
from spark_pair.workspace.naming import identifiers

CALC = "def add(a, b):\n    return a - b\n"
PAGER = "import os\nimport sys\n\n\ndef page(text):\n    return text\n"


def test_a_fix_round_chooses_no_file_for_the_commands_keywords(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {"calc.py": CALC, "pager.py": PAGER,
                                      "notes.md": "python3 assert\n"})
    command = 'python3 -c "import calc; assert calc.add(1, 2) == 3"'
    output = ('Traceback (most recent call last):\n  File "<string>", line 1, in <module>\n'
              "AssertionError\n")
    instruction = fix_instruction(CheckResult(command, 1, 0.1, output))
    chosen = found(root, instruction)
    assert "pager.py" not in chosen, chosen
    assert "notes.md" not in chosen, chosen
    assert not any("import" in why or "assert" in why for why in chosen.values()), chosen


def test_keywords_in_backticks_are_no_names_but_identifiers_stay() -> None:
    names = identifiers("in `import calc; assert calc.add_one(1) is None` and `def parse_x`")
    assert {"calc", "add_one", "parse_x"} <= names.strong
    assert not names.strong & {"import", "assert", "None", "def"}
    assert "return" not in identifiers("make `return(1)` a call").strong
