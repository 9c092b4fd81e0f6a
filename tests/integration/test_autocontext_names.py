"""Automatic context: how the names an instruction writes lead to files (dotted names, calls,
library names, words inside names, commit-style prefixes, the bodies of named definitions,
packages and flags), the changelog, and the definitions other languages give. Real files in
real git repositories."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.context import commit_all, found, make_repo

from spark_pair.workspace.autocontext import AutoContext
from spark_pair.workspace.candidates import suggest
from spark_pair.workspace.context import Workspace
from spark_pair.workspace.index import RepoIndex
from spark_pair.workspace.layout import changelog_lines
from spark_pair.workspace.symbols import _patterns, definitions

SESSIONS = ("class Session:\n    def get(self, url):\n        return url\n\n"
            "    def post(self, url):\n        return url\n")


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


# --- names in the instruction --------------------------------------------------------------
@pytest.fixture
def web_repo(tmp_path: Path) -> Path:
    files: dict[str, str | bytes] = {
        "lib/sessions.py": SESSIONS,
        "lib/api.py": "def get(url):\n    return url\n",
        "lib/cookies.py": "def get(jar, name):\n    return jar[name]\n",
        "lib/style.py": "def style(text, fg=None):\n    return text\n",
        "lib/request.js": "req.range = function range(size) {\n  return this.trimRight();\n};\n",
        "lib/other.js": "var x = 1;\n",
    }
    return make_repo(tmp_path / "web", files)


def test_a_dotted_name_leads_to_its_member_in_the_file_of_its_owner(web_repo: Path) -> None:
    index = RepoIndex(web_repo)
    index.refresh()
    got = suggest(web_repo, "Align Session.get parameters with the api", index)
    top = got.files[0]
    assert (top.path, top.label) == ("lib/sessions.py", "defines get")
    assert 2 in top.lines  # where Session.get is defined, not api.get or cookies.get


def test_a_called_name_is_code_though_it_is_a_plain_word(web_repo: Path) -> None:
    (web_repo / "lib" / "jobs.py").write_text("def run(job):\n    return job\n")
    assert found(web_repo, "make run() retry twice") == {"lib/jobs.py": "defines run"}
    assert found(web_repo, "make the run retry twice") == {}


def test_a_library_name_written_as_code_leads_to_the_files_calling_it(web_repo: Path) -> None:
    assert found(web_repo, "replace deprecated trimRight() with trimEnd()") == {
        "lib/request.js": "uses trimRight"}


def test_a_part_of_a_file_name_is_not_followed_to_its_users(web_repo: Path) -> None:
    (web_repo / "notes.txt").write_text("the log is kept\n")
    assert found(web_repo, "look at debug.log") == {}


def test_a_name_used_all_over_leads_only_to_its_tests(tmp_path: Path) -> None:
    files: dict[str, str | bytes] = {"core.py": "def fetch_all():\n    pass\n"}
    for i in range(10):
        files[f"pkg/use{i}.py"] = "from core import fetch_all\nfetch_all()\n"
    files["tests/test_core.py"] = "from core import fetch_all\n\ndef test_it():\n    fetch_all()\n"
    root = make_repo(tmp_path / "r", files)
    assert found(root, "make fetch_all retry") == {"core.py": "defines fetch_all",
                                                   "tests/test_core.py": "test of core.py"}


def test_words_inside_definition_names_find_a_file(tmp_path: Path) -> None:
    impl = ("def _pipepager(cmd):\n    pass\n\ndef _tempfilepager(cmd):\n    pass\n\n"
            "def _nullpager(stream):\n    pass\n")
    root = make_repo(tmp_path / "r", {"src/termui_impl.py": impl, "src/core.py": "X = 1\n"})
    assert found(root, "close the pager temp file before unlinking it") == {
        "src/termui_impl.py": "defines _pipepager"}


def test_two_words_written_together_find_the_name_that_joins_them(tmp_path: Path) -> None:
    # "setup" and "result" are each in the names of many files; joined, in one
    files: dict[str, str | bytes] = {
        f"src/m{i}.ts": f"export function setupM{i}() {{}}\nexport const resultM{i} = 1\n"
        for i in range(14)}
    files["src/component.ts"] = ("export function handleSetupResult(r) {\n  return r\n}\n"
                                 "export function restoreAll() {}\n")
    files["src/other.ts"] = "export function restoreAll() {}\n"
    root = make_repo(tmp_path / "r", files)
    # "restore" alone is not enough (src/other.ts); with the two words joined, it is
    assert set(found(root, "restore when handling an async setup result")) == {
        "src/component.ts"}


def test_links_name_no_file_and_paths_never_leave_the_repository(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {"cmd/main.go": "package main\n"})
    index = RepoIndex(root)
    index.refresh()
    got = suggest(root, "Fixes https://github.com/acme/tool/issues/12 and see //etc/passwd and "
                        "../outside.py", index)
    assert got.files == []
    assert got.withheld == []


# --- the bodies of named definitions -------------------------------------------------------
def test_a_cut_file_shows_the_body_of_the_named_function(tmp_path: Path) -> None:
    head = "".join(f"def filler_{i}():\n    return {i}\n\n" for i in range(400))
    body = "".join(f"    step_{i} = {i}\n" for i in range(120))
    tail = "".join(f"def after_{i}():\n    return {i}\n\n" for i in range(400))
    text = head + "def encode_files(files):\n" + body + "    return files\n\n" + tail
    root = make_repo(tmp_path / "r", {"models.py": text})
    defined_at = text.splitlines().index("def encode_files(files):") + 1
    ws = Workspace(root, budget_tokens=3000, auto=AutoContext(root, map_tokens=0))
    prompt = "fix the detection in `encode_files`"
    plan = ws.plan(prompt)
    assert plan is not None
    lines = plan.focus()["models.py"]
    assert max(lines) == defined_at + 122  # the line before the next definition
    request, _ = ws.build(prompt, plan.found.paths(), followup=False)
    sent = request.new_input[-1].content
    assert ws.chosen()[0][0].shown == "regions"
    assert "step_119 = 119" in sent and "filler_100()" not in sent


def test_a_commit_style_prefix_is_no_call_and_its_scope_is_a_place(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {"tools/fix.py": "def fix(x):\n    return x\n",
                                      "src/parser.py": "def parse(text):\n    return text\n"})
    assert found(root, "fix(parser): keep the last empty line") == {"src/parser.py": "path: parser"}


def test_double_backticks_quote_code_and_not_the_words_between(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {"src/kinds.py": "class NoReturn:\n    pass\n",
                                      "docs/guide.md": "Both are the same as before.\n"})
    assert found(root, "Treat ``typing.NoReturn`` the same as ``Never``") == {
        "src/kinds.py": "defines NoReturn"}


# --- the changelog -------------------------------------------------------------------------
@pytest.mark.parametrize(("with_log", "share"), [(10, "85%"), (2, "23%"), (1, "")])
def test_the_changelog_comes_along_when_a_fifth_of_changes_add_to_it(tmp_path: Path,
                                                                     with_log: int,
                                                                     share: str) -> None:
    root = make_repo(tmp_path / "r", {"CHANGES.md": "# Changes\n", "src/app.py": "X = 0\n"})
    for i in range(12):
        (root / "src" / "app.py").write_text(f"X = {i + 1}\n")
        if i < with_log:
            with (root / "CHANGES.md").open("a") as fh:
                fh.write(f"- change {i}\n")
        commit_all(root, f"change {i}")
    index = RepoIndex(root)
    index.refresh()
    got = {c.path: c for c in suggest(root, "make app.py count from one", index).files}
    assert ("CHANGES.md" in got) == bool(share)  # 11, 3 or 2 of the 13 commits changed it
    if share:
        assert got["CHANGES.md"].label == f"changelog (in {share} of recent commits)"
        assert 1 in got["CHANGES.md"].lines  # its head: where an entry goes


def test_a_changelog_is_shown_where_an_entry_goes() -> None:
    parts = "# unreleased\n\n## Features\n\n- a\n- b\n\n## Bugfixes\n- c\n\n# v0.26.1\n\n- old\n"
    assert changelog_lines(parts)[:4] == (1, 2, 6, 4)  # each part's end, then its top
    underlined = ("Version 8.5.0\n-------------\n\nUnreleased\n\n- one\n- two\n\n"
                  "Version 8.4.1\n-------------\n\n- old\n")
    assert changelog_lines(underlined)[0] == 7  # the end of the newest release's entries
    assert changelog_lines("# Changes\n\n- a\n")[0] == 1  # no release named: the head


def test_a_changelog_chosen_for_another_reason_shows_where_an_entry_goes(
        tmp_path: Path) -> None:
    old = "".join(f"- `fresh` was changed in release {i}\n" for i in range(200, 0, -1))
    log = f"unreleased\n==========\n\n- a new entry\n\n1.0.0\n=====\n\n{old}"
    root = make_repo(tmp_path / "r", {"History.md": log,
                                      "lib/request.js": "function fresh() {}\n"})
    index = RepoIndex(root)
    index.refresh()
    got = {c.path: c for c in suggest(root, "Make `fresh` revalidate QUERY requests",
                                      index).files}
    assert got["History.md"].label == "uses fresh"  # no commit says most changes add to it
    assert got["History.md"].lines[0] == 4  # the end of the newest entries, before old uses
    assert 10 in got["History.md"].lines  # ... which still come after


def test_the_changelog_keeps_a_place_when_more_files_than_the_cap_are_found(
        tmp_path: Path) -> None:
    files: dict[str, str | bytes] = {f"src/m{i}.py": f"def go{i}():\n    return render_page()\n"
                                     for i in range(6)}
    files["src/page.py"] = "def render_page():\n    return 1\n"
    files["CHANGES.md"] = "# Changes\n"
    files["notes.txt"] = "0\n"
    root = make_repo(tmp_path / "r", files)
    for i in range(12):  # changes elsewhere that add to the changelog
        (root / "notes.txt").write_text(f"{i}\n")
        with (root / "CHANGES.md").open("a") as fh:
            fh.write(f"- change {i}\n")
        commit_all(root, f"change {i}")
    got = found(root, "make `render_page` return two", max_files=3)
    assert len(got) == 3 and got["src/page.py"] == "defines render_page"
    assert got["CHANGES.md"].startswith("changelog")  # below six users, it keeps the last place
    assert len(found(root, "make `render_page` return two", max_files=8)) == 8


# --- packages and flags -------------------------------------------------------------------
def test_a_named_package_leads_to_the_manifest_that_declares_it(tmp_path: Path) -> None:
    files: dict[str, str | bytes] = {
        f"test/t{i}.js": f"res.set('content-type', 't{i}')\n" for i in range(12)}
    files["package.json"] = '{"dependencies": {"content-type": "~1.0.5", "debug": "2"}}\n'
    files["go.mod"] = "module example.com/x\n\nrequire gopkg.in/yaml.v3 v3.0.1\n"
    files["doc/yaml.go"] = 'package doc\n\nimport "gopkg.in/yaml.v3"\n'
    root = make_repo(tmp_path / "r", files)
    assert found(root, "Upgrade `content-type`")["package.json"] == "uses content-type"
    got = found(root, "Migrate from gopkg.in/yaml.v3 to go.yaml.in/yaml/v3")
    assert got == {"go.mod": "uses gopkg.in/yaml.v3", "doc/yaml.go": "uses gopkg.in/yaml.v3"}


def test_a_command_line_flag_leads_to_the_files_that_define_it(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {
        "src/clap_app.rs": 'Arg::new("list-themes").long("list-themes")\n',
        "src/main.rs": "fn main() {}\n"})
    assert found(root, "Fix probing when --list-themes is called") == {
        "src/clap_app.rs": "uses list-themes"}


def test_a_flag_mentioned_all_over_leads_to_the_code_that_handles_it(tmp_path: Path) -> None:
    files: dict[str, str | bytes] = {f"doc/page{i}.md": "Run with --diagnostic.\n"
                                     for i in range(10)}
    files["src/cli.rs"] = 'Arg::new("diagnostic").long("diagnostic")\n'
    files["src/main.rs"] = 'if matches.get_flag("diagnostic") { report() }\n'
    files["tests/cli.rs"] = 'cmd.arg("--diagnostic");\n'
    root = make_repo(tmp_path / "r", files)
    assert found(root, "Update --diagnostic output with the detected theme") == {
        "src/cli.rs": "uses diagnostic", "src/main.rs": "uses diagnostic",
        "tests/cli.rs": "test of src/cli.rs"}


def test_a_dotted_name_leads_to_the_files_that_write_it_so(tmp_path: Path) -> None:
    files: dict[str, str | bytes] = {
        f"lib/db{i}.js": f"const connection = open({i})\n" for i in range(10)}
    files["lib/request.js"] = "module.exports = Object.create(http.IncomingMessage.prototype)\n"
    files["test/req.ip.js"] = "assert.ok(req.connection.remoteAddress)\n"
    root = make_repo(tmp_path / "r", files)
    got = found(root, "lib: use req.socket over deprecated req.connection")
    assert got["test/req.ip.js"] == "uses req.connection"
    assert not any(rel.startswith("lib/db") for rel in got)  # `connection` alone says little


# --- module names --------------------------------------------------------------------------
def test_a_module_named_as_code_leads_to_its_file(tmp_path: Path) -> None:
    files = {f"lib/modules/{name}.py": f"def main():\n    return '{name}'\n"
             for name in ("get_url", "apt", "copy", "uri")}
    files["lib/utils/urls.py"] = "def fetch_url(url, timeout=10):\n    return url\n"
    root = make_repo(tmp_path / "r", files)
    got = found(root, "raise the default timeout of get_url's fetch_url call")
    assert got["lib/modules/get_url.py"] == "path: get_url"  # neither defines nor holds a name
    assert got["lib/utils/urls.py"] == "defines fetch_url"
    assert "lib/modules/uri.py" not in got and "lib/modules/copy.py" not in got


def test_a_module_name_many_files_share_leads_to_none(tmp_path: Path) -> None:
    files = {f"pkg{i}/read_me.py": "x = 1\n" for i in range(5)}
    root = make_repo(tmp_path / "r", files)
    assert found(root, "clean up read_me in every package") == {}
    one = make_repo(tmp_path / "s", {"src/read_me.py": "x = 1\n", "src/other.py": "y = 2\n"})
    assert found(one, "clean up read_me") == {"src/read_me.py": "path: read_me"}
