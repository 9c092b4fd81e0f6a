"""The package's layers, as pyproject.toml's import-linter `layers` contract declares them (the one
declaration; the core's forbidden contract and mypy's file list are held to it here):
every module belongs to a layer, imports go only down (lazy imports included), no module
import cycle anywhere, and the core (the layers under the front ends) never imports textual or
rich, neither in its import graph nor when it is imported."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "spark_pair"
FRONT_END = "spark_pair.ui"  # the core is every layer under the one holding the app


def config() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def contract(contract_id: str) -> dict:
    contracts = config()["tool"]["importlinter"]["contracts"]
    return next(c for c in contracts if c.get("id") == contract_id)


def layers() -> list[list[str]]:
    """The layers from the top, each as its packages' full names."""
    declared = contract("layers")
    (container,) = declared["containers"]
    return [[f"{container}.{name.strip()}" for name in line.split("|")]
            for line in declared["layers"]]


def core() -> list[str]:
    found = layers()
    below = next(i for i, line in enumerate(found) if FRONT_END in line) + 1
    return [name for line in found[below:] for name in line]


def build() -> grimp.ImportGraph:
    # grimp reads every import statement, those inside functions (lazy) and under TYPE_CHECKING too
    return grimp.build_graph("spark_pair", include_external_packages=True, cache_dir=None)


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return build()


def layer_of(module: str, found: list[list[str]]) -> tuple[int, str] | None:
    for index, line in enumerate(found):
        for name in line:
            if module == name or module.startswith(name + "."):
                return index, name
    return None


def wrong_imports(graph: grimp.ImportGraph, found: list[list[str]]) -> list[str]:
    """Every import between two layers' packages that does not go down a layer."""
    wrong = []
    for importer in sorted(m for m in graph.modules if m.startswith("spark_pair.")):
        src = layer_of(importer, found)
        for imported in sorted(graph.find_modules_directly_imported_by(importer)):
            dst = layer_of(imported, found)
            if src is None or dst is None or src[1] == dst[1]:
                continue
            if dst[0] <= src[0]:
                wrong.append(f"{importer} -> {imported}")
    return wrong


def cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The import cycles between spark_pair's modules (strongly connected sets of 2 or more)."""
    ours = sorted(m for m in graph.modules if m.split(".")[0] == "spark_pair")
    edges = {m: sorted(d for d in graph.find_modules_directly_imported_by(m)
                       if d.split(".")[0] == "spark_pair") for m in ours}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []
    for start in ours:  # Tarjan's algorithm, iterative
        if start in index:
            continue
        work = [(start, iter(edges[start]))]
        index[start] = low[start] = len(index)
        stack.append(start)
        while work:
            node, rest = work[-1]
            step = next(rest, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    work.append((step, iter(edges[step])))
                elif step in stack:
                    low[node] = min(low[node], index[step])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


def test_the_core_contract_covers_the_layers_under_the_front_ends_and_mypy_every_package():
    expected = core()
    assert expected and "spark_pair.session" in expected and FRONT_END not in expected
    assert sorted(contract("core")["source_modules"]) == sorted(expected)
    assert set(contract("core")["forbidden_modules"]) >= {"textual", "rich"}
    assert config()["tool"]["mypy"]["files"] == ["src/spark_pair"]  # the front ends too


def test_nothing_is_loose_at_the_package_top_and_every_package_has_a_layer():
    modules = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert modules == ["__init__.py", "entry.py"]
    packages = {f"spark_pair.{p.parent.name}" for p in PACKAGE.glob("*/__init__.py")}
    declared = {name for line in layers() for name in line}
    assert packages | {"spark_pair.entry"} == declared


def test_imports_go_only_down_the_layers(graph):
    assert wrong_imports(graph, layers()) == []


def test_the_check_notices_an_import_up_or_sideways():
    planted = build()
    planted.add_import(importer="spark_pair.base.errors", imported="spark_pair.session.turn")
    planted.add_import(importer="spark_pair.ui.app", imported="spark_pair.headless.runner")
    assert wrong_imports(planted, layers()) == ["spark_pair.base.errors -> spark_pair.session.turn",
                                                "spark_pair.ui.app -> spark_pair.headless.runner"]


def test_no_module_imports_itself_back_round_a_cycle(graph):
    assert cycles(graph) == []
    planted = build()
    planted.add_import(importer="spark_pair.ui.bindings", imported="spark_pair.ui.app")
    assert any("spark_pair.ui.bindings" in group for group in cycles(planted))


def test_no_core_module_imports_textual_or_rich_even_through_another(graph):
    for ui_library in ("textual", "rich"):
        users = graph.find_downstream_modules(ui_library)
        assert users, f"nothing imports {ui_library}: the check would be empty"
        leaks = sorted(m for m in users if any(m == c or m.startswith(c + ".") for c in core()))
        assert leaks == [], f"the core imports {ui_library}: {leaks}"


def test_importing_the_core_does_not_load_textual_or_rich():
    code = (
        "import importlib, pkgutil, sys\n"
        f"for name in {core()!r}:\n"
        "    mod = importlib.import_module(name)\n"
        "    for info in pkgutil.walk_packages(mod.__path__, name + '.'):\n"
        "        importlib.import_module(info.name)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"core pulled in: {out.stdout.strip()}"


def test_the_import_check_would_notice_a_leak():
    code = "import spark_pair.base.errors, rich; import sys; print('rich' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"
