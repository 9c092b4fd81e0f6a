"""Definitions in a source file: the names it defines, their kind and line.

Python is read with `ast`; other languages with tree-sitter's language pack when it is installed
(`pip install 'spark-pair[langs]'`), else with a line-based pattern that knows the common
definition keywords (function, class, def, func, fn, struct, interface, ...). Nothing here reads
the disk: callers hand over the text.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple


class Definition(NamedTuple):
    name: str
    kind: str  # function | class | method | variable | type | ...
    line: int  # 1-based
    top: bool  # defined at the file's top level (shown in the repository map)


# file suffix -> tree-sitter language name (tree-sitter-language-pack)
LANGUAGES = {
    ".js": "javascript", ".jsx": "javascript", ".mjs": "javascript", ".cjs": "javascript",
    ".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "tsx",
    ".go": "go", ".rs": "rust", ".java": "java", ".kt": "kotlin", ".kts": "kotlin",
    ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hpp": "cpp",
    ".hh": "cpp", ".cs": "csharp", ".rb": "ruby", ".php": "php", ".swift": "swift",
    ".scala": "scala", ".lua": "lua", ".ex": "elixir", ".exs": "elixir", ".sh": "bash",
    ".bash": "bash", ".zig": "zig", ".dart": "dart", ".hs": "haskell", ".ml": "ocaml",
}
SOURCE_SUFFIXES = frozenset({".py", ".pyi", *LANGUAGES})
MAX_DEFINITIONS = 5000  # per file, at most (the index reads files up to 512 KB)


def definitions(rel: str, text: str) -> list[Definition]:
    """The definitions in `text` (the file `rel`), in file order; [] for a file that is not
    source code."""
    suffix = rel[rel.rfind("."):].lower() if "." in rel.rsplit("/", 1)[-1] else ""
    if suffix in (".py", ".pyi"):
        found = _python(text)
    elif suffix in LANGUAGES:
        parsed = _tree_sitter(LANGUAGES[suffix], text)
        found = _patterns(text) if parsed is None else parsed
    else:
        return []
    return found[:MAX_DEFINITIONS]


# --- Python --------------------------------------------------------------------------------
def _python(text: str) -> list[Definition]:
    import ast

    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return _patterns(text)
    out: list[Definition] = []
    for node in tree.body:
        out.extend(_python_node(node, top=True))
    return out


def _python_node(node: object, *, top: bool) -> list[Definition]:
    import ast

    match node:
        case ast.ClassDef(name=name, lineno=line, body=body):
            inner = [Definition(d.name, "method" if d.kind == "function" else d.kind, d.line,
                                False)
                     for child in body for d in _python_node(child, top=False)]
            return [Definition(name, "class", line, top), *inner]
        case ast.FunctionDef(name=name, lineno=line) | ast.AsyncFunctionDef(name=name,
                                                                               lineno=line):
            return [Definition(name, "function", line, top)]
        case ast.Assign(targets=targets, lineno=line) if top:
            return [Definition(t.id, "variable", line, top) for t in targets
                    if isinstance(t, ast.Name)]
        case ast.AnnAssign(target=ast.Name(id=name), lineno=line) if top:
            return [Definition(name, "variable", line, top)]
        case ast.If(body=body, orelse=orelse) | ast.Try(body=body, orelse=orelse) if top:
            # definitions under `if TYPE_CHECKING:` / `try: import x` stay top-level
            return [d for child in [*body, *orelse] for d in _python_node(child, top=True)]
    return []


# --- tree-sitter ---------------------------------------------------------------------------
# node types whose `name` child names a definition, by a word they contain
_DEF_WORDS = ("function", "class", "method", "struct", "interface", "enum", "trait", "type_",
              "module", "impl", "macro", "constant", "const_", "protocol", "object", "record",
              "namespace", "union", "variable_declarator", "type_spec", "alias", "var_spec",
              "static_item")
_NOT_DEFS = ("parameter", "argument", "call", "reference", "identifier", "expression",
             "pattern", "field_declaration", "property_identifier")
_KINDS = (("method", "method"), ("function", "function"), ("class", "class"),
          ("struct", "struct"), ("interface", "interface"), ("enum", "enum"),
          ("trait", "trait"), ("impl", "impl"), ("module", "module"), ("macro", "macro"))
_CONTAINERS = ("class", "struct", "impl", "trait", "interface", "module", "enum", "object",
               "namespace", "record", "protocol")
_MAX_DEPTH = 4  # definitions nested deeper (inside function bodies) are not listed
_parsers: dict[str, object] = {}


def _tree_sitter(language: str, text: str) -> list[Definition] | None:
    """The definitions found by tree-sitter, or None when it (or the language) is missing."""
    parser = _parsers.get(language)
    if parser is None:
        try:
            from tree_sitter_language_pack import get_parser
        except ImportError:
            return None
        try:
            parser = get_parser(language)  # type: ignore[arg-type]
        except Exception:  # noqa: BLE001 - a language the pack lacks: the patterns read it
            return None
        _parsers[language] = parser
    try:
        tree = parser.parse(text.encode("utf-8", "replace"))  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - a parser failure leaves the patterns to read it
        return None
    out: list[Definition] = []
    _walk(tree.root_node, 0, out, container=False)
    return out


def _walk(node: object, depth: int, out: list[Definition], *, container: bool) -> None:
    for child in node.named_children:  # type: ignore[attr-defined]
        kind = child.type
        if kind == "assignment_expression":  # JS: `app.listen = function () {...}`
            member = _member_function(child)
            if member is not None:
                out.append(Definition(member.text.decode("utf-8", "replace"),
                                      "method" if container else "function",
                                      child.start_point[0] + 1, not container))
                continue
        is_def = any(w in kind for w in _DEF_WORDS) and not any(w in kind for w in _NOT_DEFS)
        named = False
        if is_def:
            name = _name_of(child)
            if name is not None:
                named = True
                word = name.text.decode("utf-8", "replace")
                if _IDENT.fullmatch(word):
                    out.append(Definition(word, _kind_of(kind, container),
                                          child.start_point[0] + 1, not container))
            if len(out) >= MAX_DEFINITIONS:
                return
        if depth < _MAX_DEPTH and (is_def or child.named_child_count):
            inside = container or (named and any(w in kind for w in _CONTAINERS))
            if "function" in kind or "method" in kind:
                continue  # names inside a function body are local
            _walk(child, depth + 1, out, container=inside)


def _member_function(node: Any) -> Any:
    """The property a function is assigned to (`obj.name = function` / `= () =>`), or None."""
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    if left is None or right is None or left.type != "member_expression":
        return None
    if right.type not in ("function_expression", "function", "arrow_function", "class",
                          "generator_function"):
        return None
    name = left.child_by_field_name("property")
    word = "" if name is None else name.text.decode("utf-8", "replace")
    return name if _IDENT.fullmatch(word) and word != "exports" else None


def _name_of(node: Any) -> Any:
    """The node naming a definition: its `name` child, or (C, C++) the identifier at the end of
    its chain of declarators."""
    name = node.child_by_field_name("name")
    if name is None and "impl" in node.type:
        name = node.child_by_field_name("type")  # Rust: impl T
    if name is not None:
        return name
    for _ in range(6):
        node = node.child_by_field_name("declarator")
        if node is None:
            return None
        if node.type.endswith("identifier"):
            return node
    return None


def _kind_of(node_type: str, container: bool) -> str:
    for word, kind in _KINDS:
        if word in node_type:
            return "method" if kind == "function" and container else kind
    return "variable" if any(w in node_type for w in ("variable", "const", "var_spec",
                                                       "static")) else "type"


# --- patterns (no parser) ------------------------------------------------------------------
_IDENT = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_DEF_LINE = re.compile(
    r"^(?P<indent>[ \t]*)(?:(?:export|default|public|private|protected|internal|static|async"
    r"|abstract|final|pub(?:\([a-z]+\))?|unsafe|extern|inline|override|open|sealed|data"
    r"|declare)\s+)*"
    r"(?P<kw>def|class|function\*?|func|fn|struct|enum|trait|interface|type|module|impl"
    r"|object|record|namespace|macro_rules!|defmodule|defp?|const|let|var|val)\s+"
    r"(?:\([^)]*\)\s*)?(?P<name>[A-Za-z_$][A-Za-z0-9_$]*)")
_WORD_KIND = {"def": "function", "function": "function", "function*": "function",
              "func": "function", "fn": "function", "defp": "function", "class": "class",
              "struct": "struct", "enum": "enum", "trait": "trait", "interface": "interface",
              "type": "type", "module": "module", "defmodule": "module", "impl": "impl",
              "object": "class", "record": "class", "namespace": "module",
              "macro_rules!": "macro", "const": "variable", "let": "variable",
              "var": "variable", "val": "variable"}
# JS: a function assigned to a property (`app.listen = function`, `exports.x = () =>`)
_MEMBER_LINE = re.compile(
    r"^(?P<indent>[ \t]*)(?:[A-Za-z_$][\w$]*\.)+(?P<name>[A-Za-z_$][\w$]*)\s*=\s*(?:async\s+)?"
    r"(?:function\b|\([^)]*\)\s*=>|[A-Za-z_$][\w$]*\s*=>)")
_MAX_LINE = 400  # longer lines (minified code) are not read for definitions


def _patterns(text: str) -> list[Definition]:
    out: list[Definition] = []
    for n, line in enumerate(text.splitlines(), 1):
        if len(line) > _MAX_LINE:
            continue
        m = _DEF_LINE.match(line)
        if m is None:
            m = _MEMBER_LINE.match(line)
            if m is not None and m.group("name") != "exports":
                top = not m.group("indent")
                out.append(Definition(m.group("name"), "function" if top else "method", n, top))
            continue
        kw = m.group("kw")
        top = not m.group("indent")
        if _WORD_KIND[kw] == "variable" and not top:
            continue  # a local variable
        out.append(Definition(m.group("name"), _WORD_KIND[kw], n, top))
        if len(out) >= MAX_DEFINITIONS:
            break
    return out
