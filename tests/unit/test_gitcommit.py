"""base.gitcommit's own rule for a message's whitespace is git's (`git stripspace`)."""

from __future__ import annotations

import subprocess

from hypothesis import given, settings
from hypothesis import strategies as st

from spark_pair.base.gitcommit import strip_space

LINES = st.lists(st.sampled_from(["", " ", "\t", "Fix it", "  body line  ", "# not a comment",
                                  "x\t", "\r"]), max_size=8)


@settings(max_examples=40, deadline=None)
@given(LINES)
def test_strip_space_is_git_stripspace(lines: list[str]) -> None:
    text = "\n".join(lines)
    git = subprocess.run(["git", "stripspace"], input=text.encode(), capture_output=True,
                         timeout=10, check=True).stdout.decode()
    assert strip_space(text) == git
