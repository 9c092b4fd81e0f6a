"""Definitions in other languages than Python: functions set on an object (JavaScript), Go
vars and Rust statics."""

from __future__ import annotations

import pytest

from spark_pair.workspace.symbols import _patterns, definitions

# --- definitions ---------------------------------------------------------------------------
JS = ("var app = exports = module.exports = {};\n"
      "app.listen = function listen() {\n  return 1;\n};\n"
      "exports.render = (view) => view;\n"
      "Foo.prototype.close = async function () {};\n"
      "app.limit = 3;\n")


def test_a_function_set_on_an_object_is_a_definition_in_javascript() -> None:
    names = {d.name for d in definitions("lib/app.js", JS)}
    assert {"listen", "render", "close"} <= names
    assert not names & {"exports", "limit"}  # module.exports, and a value that is no function


def test_the_patterns_read_a_function_set_on_an_object_too() -> None:
    got = [(d.name, d.line, d.top) for d in _patterns(JS) if d.kind == "function"]
    assert got == [("listen", 2, True), ("render", 5, True), ("close", 6, True)]


@pytest.mark.parametrize(("rel", "text", "name"), [
    ("a.go", "package m\n\nvar minUsagePadding = 25\n\nvar (\n\tgrouped = 1\n)\n",
     "minUsagePadding"),
    ("a.go", "package m\n\nvar (\n\tgrouped = 1\n)\n", "grouped"),
    ("a.rs", "static LIMIT: u8 = 1;\nfn main() {}\n", "LIMIT"),
])
def test_go_vars_and_rust_statics_are_definitions(rel: str, text: str, name: str) -> None:
    got = {d.name: d.kind for d in definitions(rel, text)}
    assert got.get(name) == "variable"
