"""Automatic context: definitions, the index, the candidates and their reasons, the repository
map, and the request they make. Real files in real git repositories."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support.context import found, http_files, make_repo

from spark_pair.workspace.autocontext import AutoContext
from spark_pair.workspace.candidates import Why, suggest, withheld_reason
from spark_pair.workspace.context import Workspace
from spark_pair.workspace.index import RepoIndex, cache_file
from spark_pair.workspace.repomap import HEAD, repo_map
from spark_pair.workspace.symbols import _patterns, definitions


@pytest.fixture
def http_repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", http_files())


# --- definitions ---------------------------------------------------------------------------
def test_python_definitions_come_from_ast_with_their_lines_and_level() -> None:
    text = ("import os\nLIMIT = 3\n\nclass Store:\n    def load(self):\n        x = 1\n\n"
            "async def fetch():\n    pass\n\nif True:\n    def fallback():\n        pass\n")
    got = [(d.name, d.kind, d.line, d.top) for d in definitions("a.py", text)]
    assert got == [("LIMIT", "variable", 2, True), ("Store", "class", 4, True),
                   ("load", "method", 5, False), ("fetch", "function", 8, True),
                   ("fallback", "function", 12, True)]


def test_broken_python_is_read_by_the_patterns_instead() -> None:
    got = [d.name for d in definitions("a.py", "def ok(:\n    pass\nclass Fine:\n")]
    assert got == ["ok", "Fine"]


@pytest.mark.parametrize(("rel", "text", "names"), [
    ("a.go", "package m\ntype Server struct{}\nfunc (s *Server) Start() error {\n x := 1\n "
             "return nil\n}\nfunc helper() {}\n", {"Server", "Start", "helper"}),
    ("a.ts", "export class Client { send(): void { const z = 1 } }\n"
             "export const parseHeader = (s: string) => s;\nfunction main() { let q = 2 }\n",
     {"Client", "send", "parseHeader", "main"}),
    ("a.rs", "pub struct Foo {}\nimpl Foo { fn new() -> Self { let y = 2; Foo {} } }\n"
             "fn main() {}\n", {"Foo", "new", "main"}),
    ("a.c", "int parse_header(const char *s) { int local = 0; return local; }\n"
            "struct point { int x; };\n", {"parse_header", "point"}),
])
def test_other_languages_give_their_definitions_and_not_their_locals(rel: str, text: str,
                                                                     names: set[str]) -> None:
    got = {d.name for d in definitions(rel, text)}
    assert names <= got
    assert not got & {"x", "z", "q", "y", "local"}


def test_the_patterns_read_common_definition_keywords() -> None:
    text = ("export function render(a) {}\nclass Widget {}\nfunc Serve() {}\npub fn build() {}\n"
            "const LIMIT = 3\n  let local = 1\n")
    got = [(d.name, d.top) for d in _patterns(text)]
    assert got == [("render", True), ("Widget", True), ("Serve", True), ("build", True),
                   ("LIMIT", True)]


def test_text_that_is_not_code_defines_nothing() -> None:
    assert definitions("notes.md", "def looks_like_code():\n") == []


# --- the index -----------------------------------------------------------------------------
def test_the_index_knows_who_defines_a_name_and_keeps_it_in_its_cache(http_repo: Path,
                                                                      tmp_path: Path) -> None:
    cache = cache_file(http_repo, tmp_path / "data")
    index = RepoIndex(http_repo, cache)
    index.refresh()
    assert index.read_count == 6
    assert [(p, d.line) for p, d in index.defining(["parse_header"])] == [("http/utils.py", 1)]
    assert cache.is_file()
    again = RepoIndex(http_repo, cache)  # another process: nothing is read again
    again.refresh()
    assert again.read_count == 0
    assert [p for p, _ in again.defining(["PARSE_HEADER"], any_case=True)] == ["http/utils.py"]


def test_the_index_follows_changes_and_deletions(http_repo: Path) -> None:
    index = RepoIndex(http_repo)
    index.refresh()
    (http_repo / "http" / "utils.py").write_text("def parse_head(line):\n    return line\n")
    (http_repo / "hello.py").unlink()
    index.update(["http/utils.py", "hello.py"])
    assert index.defining(["parse_header"]) == []
    assert [p for p, _ in index.defining(["parse_head"])] == ["http/utils.py"]
    assert "hello.py" not in index.files
    (http_repo / "new.py").write_text("def fresh():\n    pass\n")
    index.refresh()  # untracked files are listed too
    assert [p for p, _ in index.defining(["fresh"])] == ["new.py"]


def test_a_damaged_cache_is_replaced_not_fatal(http_repo: Path, tmp_path: Path) -> None:
    cache = cache_file(http_repo, tmp_path / "data")
    cache.parent.mkdir(parents=True)
    cache.write_bytes(b"this is not a database" * 100)
    index = RepoIndex(http_repo, cache)
    index.refresh()
    assert [p for p, _ in index.defining(["format_date"])] == ["http/utils.py"]


def test_links_out_binaries_and_huge_files_are_listed_with_why(http_repo: Path,
                                                                tmp_path: Path) -> None:
    outside = tmp_path / "outside.py"
    outside.write_text("def leaked():\n    pass\n")
    os.symlink(outside, http_repo / "link.py")
    (http_repo / "blob.bin").write_bytes(b"\0\1\2" * 10)
    (http_repo / "huge.py").write_text("x = 1\n" * 200_000)
    (http_repo / "dangling.py").symlink_to(http_repo / "nowhere.py")
    index = RepoIndex(http_repo)
    index.refresh()
    assert index.files["link.py"].note == "a link that leaves the repository"
    assert index.files["blob.bin"].note == "binary"
    assert index.files["huge.py"].note == "too large to send"
    assert "dangling.py" not in index.files  # gone: nothing to read, no crash
    assert index.defining(["leaked"]) == []


# --- candidates ------------------------------------------------------------------------------
def test_a_file_defining_a_named_identifier_and_its_users_are_chosen(http_repo: Path) -> None:
    got = found(http_repo, "rename parse_header to parse_head in the http utils")
    assert got == {"http/utils.py": "defines parse_header",
                   "http/client.py": "uses parse_header",
                   "tests/test_utils.py": "test of http/utils.py"}  # by its name


def test_named_paths_file_names_and_new_files(http_repo: Path) -> None:
    assert found(http_repo, "make hello.py print hello world") == {"hello.py": "named"}
    assert found(http_repo, "fix the wording in `README.md`.") == {"README.md": "named"}
    got = found(http_repo, "add tests for format_date in tests/test_dates.py")
    assert got == {"http/utils.py": "defines format_date",
                   "tests/test_dates.py": "named, new file",
                   "tests/test_utils.py": "test of http/utils.py"}


def test_path_words_find_a_file_by_its_name(http_repo: Path) -> None:
    assert found(http_repo, "add a --verbose flag to the CLI") == {"src/app/cli.py": "path: cli"}
    assert found(http_repo, "fix the parse header function") == {
        "http/utils.py": "defines parse_header", "tests/test_utils.py": "test of http/utils.py"}


def test_edited_and_earlier_files_are_chosen_with_their_reason(http_repo: Path) -> None:
    got = found(http_repo, "tidy this up", edited=["hello.py"], earlier=["README.md"])
    assert got == {"hello.py": "edited on disk", "README.md": "earlier turn"}


def test_a_file_edited_on_disk_says_so_though_an_earlier_turn_showed_it(http_repo: Path
                                                                       ) -> None:
    """The fifth file edited scores below "earlier turn": its label is still its state."""
    edited = ["src/app/cli.py", "http/client.py", "http/utils.py", "tests/test_utils.py",
              "hello.py"]
    got = found(http_repo, "tidy this up", edited=edited, earlier=["hello.py", "README.md"])
    assert got["hello.py"] == "edited on disk" and got["README.md"] == "earlier turn"


def test_pinned_and_dropped_files_are_not_suggested(http_repo: Path) -> None:
    got = found(http_repo, "rename parse_header to parse_head", pinned=["http/utils.py"],
                dropped=["http/client.py"])
    assert got == {}


def test_an_instruction_naming_nothing_chooses_nothing(http_repo: Path) -> None:
    assert found(http_repo, "make it faster") == {}


def test_secrets_and_ignored_files_are_never_sent_on_their_own(http_repo: Path) -> None:
    (http_repo / ".env").write_text("KEY=1\n")
    (http_repo / "deploy.pem").write_text("-----BEGIN-----\n")
    (http_repo / ".gitignore").write_text("*.log\n")
    (http_repo / "debug.log").write_text("trace\n")
    index = RepoIndex(http_repo)
    index.refresh()
    got = suggest(http_repo, "read the key from .env and deploy.pem, and look at debug.log",
                  index)
    assert got.files == []
    withheld = {w.path: (w.reason, w.named) for w in got.withheld}
    assert withheld[".env"] == ("looks like a secret (.env)", True)
    assert withheld["deploy.pem"] == ("looks like a secret (*.pem)", True)
    assert withheld["debug.log"] == ("git ignores it", True)


def test_context_never_patterns_withhold_more(http_repo: Path) -> None:
    index = RepoIndex(http_repo)
    index.refresh()
    got = suggest(http_repo, "change hello.py", index, never=["hello.*"])
    assert got.files == []
    assert [(w.path, w.reason) for w in got.withheld] == [
        ("hello.py", "matches [context] never (hello.*)")]
    assert withheld_reason("src/id_utils.py", {}) is None  # source code, not a key
    assert withheld_reason("keys/id_ed25519", {}) == "looks like a secret (id_*)"
    assert withheld_reason("data/id_map.json", {}) is None
    assert withheld_reason("gcp/credentials.json", {}) == "looks like a secret (credentials*)"


def test_a_name_defined_everywhere_says_little(tmp_path: Path) -> None:
    files = {f"pkg{i}/mod.py": "def run():\n    pass\n" for i in range(10)}
    root = make_repo(tmp_path / "r", files)
    assert found(root, "make `run` faster") == {}


def test_ranking_puts_named_and_defining_files_first(http_repo: Path) -> None:
    index = RepoIndex(http_repo)
    index.refresh()
    got = suggest(http_repo, "in hello.py call parse_header", index, edited=["README.md"])
    assert [c.why for c in got.files] == [Why.NAMED, Why.DEFINES, Why.EDITED, Why.TEST,
                                          Why.USES]


# --- the map -------------------------------------------------------------------------------
def test_the_map_lists_related_files_first_within_its_budget(tmp_path: Path) -> None:
    files = {f"lib/mod{i:03}.py": f"def helper_{i}():\n    pass\n" for i in range(300)}
    files["lib/http/cookies.py"] = "class CookieJar:\n    pass\n\ndef parse_cookie(x):\n    pass\n"
    root = make_repo(tmp_path / "r", files)
    index = RepoIndex(root)
    index.refresh()
    text = repo_map(index, "store cookies in the jar", shown=set(), budget_tokens=120)
    assert text.startswith(HEAD)
    assert "lib/http/cookies.py: class CookieJar, parse_cookie\n" in text
    assert "more files: " in text.splitlines()[-1]
    assert len(text) / 4 <= 120
    assert repo_map(index, "anything", shown=set(index.files), budget_tokens=500) == ""


# --- the request -----------------------------------------------------------------------------
def test_the_request_carries_the_chosen_files_the_map_and_says_why(http_repo: Path) -> None:
    ws = Workspace(http_repo, auto=AutoContext(http_repo))
    prompt = "rename parse_header to parse_head in the http utils"
    plan = ws.plan(prompt)
    assert plan is not None
    request, hashes = ws.build(prompt, plan.found.paths(), followup=False)
    sent = request.new_input[-1].content
    # the files first, then the map, then the instruction (what changes most goes last)
    assert sent.startswith("Files:\n\n### ")
    assert sent.index("### http/client.py") < sent.index(HEAD) < sent.index("Instruction:\n")
    assert "src/app/cli.py: main" in sent
    assert "### http/utils.py\n" in sent and "### http/client.py\n" in sent
    assert sorted(hashes) == ["http/client.py", "http/utils.py", "tests/test_utils.py"]
    files, withheld, map_tokens = ws.chosen()
    assert [(f.path, f.reason, f.shown) for f in files] == [
        ("http/utils.py", "defines parse_header", "whole"),
        ("tests/test_utils.py", "test of http/utils.py", "whole"),
        ("http/client.py", "uses parse_header", "whole")]
    assert withheld == () and map_tokens > 0


def test_a_large_chosen_file_is_cut_around_its_relevant_lines(tmp_path: Path) -> None:
    body = "".join(f"def filler_{i}():\n    return {i}\n\n" for i in range(3000))
    root = make_repo(tmp_path / "r", {"big.py": body + "def parse_header(x):\n    return x\n"})
    ws = Workspace(root, budget_tokens=2000, auto=AutoContext(root))
    prompt = "rename parse_header"
    plan = ws.plan(prompt)
    assert plan is not None
    request, _ = ws.build(prompt, plan.found.paths(), followup=False)
    sent = request.new_input[-1].content
    assert "def parse_header(x):" in sent and "filler_100()" not in sent
    assert ws.chosen()[0][0].shown == "regions"
    assert len(sent) / 4 <= 2000 + 100  # the budget, and the instruction


def test_without_auto_context_nothing_is_chosen(http_repo: Path) -> None:
    ws = Workspace(http_repo)
    assert ws.plan("rename parse_header") is None
    request, hashes = ws.build("rename parse_header", [], followup=False)
    assert hashes == {} and "Repository map" not in request.new_input[-1].content
