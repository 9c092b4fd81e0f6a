"""The files pane's rows: a chosen file's reason on the line below it, within the pane's width."""

from __future__ import annotations

from spark_pair.ui.widgets.files import Chosen, file_rows


def reasons(chosen: list[Chosen], dropped: frozenset[str] = frozenset(), width: int = 28
            ) -> list[str]:
    rows = file_rows({}, chosen, set(dropped), set(), set(), frozenset(), width)
    return [str(row.prompt).split("\n")[1].strip() for row in rows]


def test_a_short_reason_is_shown_as_it_is() -> None:
    assert reasons([Chosen("http/utils.py", "defines parse_header", 40),
                    Chosen("tests/test_utils.py", "test of http/utils.py", 20)]) == [
        "defines parse_header", "test of http/utils.py"]


def test_a_long_path_of_the_file_a_companion_comes_with_is_shown_by_its_name() -> None:
    chosen = [Chosen("tests/test_termui.py", "test of src/app/widgets/termui.py", 20),
              Chosen("docs/api.md", "changes with packages/runtime-core/src/app.ts", 9)]
    assert reasons(chosen) == ["test of termui.py", "changes with app.ts"]
    assert reasons(chosen, {"docs/api.md"}, width=32) == ["test of termui.py",
                                                          "dropped: changes with app.ts"]


def test_another_long_reason_is_cut_at_the_pane_s_width() -> None:
    got = reasons([Chosen("go.mod", "uses github.com/spf13/cobra/doc", 10)])
    assert got == ["uses github.com/spf13/c…"] and len(got[0]) == 24
