"""Which replies are a second look's NEED reply, told as the text streams in."""

from __future__ import annotations

import pytest

from spark_pair.session.look import may_be_need, need_names
from spark_pair.workspace.look import _definition


@pytest.mark.parametrize("text", ["", "N", "NEE", "NEED:", "NEED: a.py", "NEED: a.py\n",
                                  "\nNEED: a.py\nNEED: b", "  NEED: x\n\nNE"])
def test_a_reply_that_may_still_be_only_need_lines_is_held(text: str) -> None:
    assert may_be_need(text)


@pytest.mark.parametrize("text", ["-", "--- a/x.py", "NEED: a.py\n--- a/a.py",
                                  "I need the file", "NEEDS", "NEED: a.py\nok",
                                  "NEED: " + "x" * 1200])
def test_a_reply_that_cannot_be_one_is_let_go_at_once(text: str) -> None:
    assert not may_be_need(text)


def test_the_names_of_a_need_reply() -> None:
    assert need_names("NEED: a/b.py\n NEED: parse_header \n") == ["a/b.py", "parse_header"]
    assert need_names("NEED: a.py, b.py\n") == ["a.py", "b.py"]
    assert need_names("NEED:\n") is None
    assert need_names("") is None
    assert need_names("NEED: a.py\n--- a/a.py\n") is None


def test_a_definition_spans_its_decorators_and_body() -> None:
    lines = ["import x", "", "@cache", "def f(a):", "    if a:", "", "        return 1",
             "    return 2", "", "", "def g():", "    pass"]
    assert _definition(lines, 4) == (3, 8)
    assert _definition(lines, 11) == (11, 12)
    braces = ["func main() {", "  run()", "}", "", "func other() {}"]
    assert _definition(braces, 1) == (1, 3)
