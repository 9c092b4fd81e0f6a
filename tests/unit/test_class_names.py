"""One class per name in src/spark_pair: a reader who meets a class name should not have to ask
which of two it is. Nested classes count too (a Textual message `ReviewPane.Decisions` is
still met as `Decisions` in a handler's signature)."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import spark_pair

SRC = Path(spark_pair.__file__).parent


def classes_by_name(root: Path) -> dict[str, list[str]]:
    """Every class defined under `root` (nested ones too): name -> ["path:line", ...]."""
    found: dict[str, list[str]] = defaultdict(list)
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                found[node.name].append(f"{path.relative_to(root)}:{node.lineno}")
    return found


def test_no_two_classes_share_a_name() -> None:
    twice = {name: where for name, where in classes_by_name(SRC).items() if len(where) > 1}
    assert not twice, "one class per name; rename one of each: " + "; ".join(
        f"{name} ({', '.join(where)})" for name, where in sorted(twice.items()))


def test_a_name_defined_twice_is_found(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("class Outcome:\n    pass\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "b.py").write_text(
        "def f():\n    class Inner:\n        pass\n\n\nclass Box:\n    class Outcome:\n"
        "        pass\n")
    found = classes_by_name(tmp_path)
    assert found["Outcome"] == ["a.py:1", "pkg/b.py:7"]
    assert found["Inner"] == ["pkg/b.py:2"] and found["Box"] == ["pkg/b.py:6"]
