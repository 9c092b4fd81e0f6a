"""The help on an 80-column terminal: a description that wraps goes on under its own column."""

from __future__ import annotations

from rich.console import Console

from spark_pair.ui.screens.help import help_text


def test_wrapped_descriptions_stay_in_their_column() -> None:
    console = Console(width=76, record=True, color_system=None)
    console.print(help_text())
    lines = console.export_text().splitlines()
    head = next(i for i, line in enumerate(lines) if "stop the stream" in line)
    column = lines[head].index("stop the stream")
    follow = lines[head + 1]
    assert "nothing is written" in follow and follow.index(follow.strip()) == column
    assert "? / f1" not in "\n".join(lines) and "question_mark" not in "\n".join(lines)


def test_the_help_shows_the_id_of_every_key_a_config_may_remap() -> None:
    from spark_pair.ui.bindings import default_keys

    console = Console(width=76, record=True, color_system=None)
    console.print(help_text())
    words = set(console.export_text().split())
    missing = [i for i in default_keys() if i not in words]
    assert not missing, f"ids the help does not show: {missing}"
