"""Replies that could lose a file: a delete that shows only part of it, headers that disagree
about which file a section is about, two operations on one file, a file edited mid-stream.
Real files in real git repos; `spark-pair run` as a process against the simulator process."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.runs import check_schema, lines_of, make_repo, run, run_editing_mid_stream, tree

from spark_pair.base.errors import ConflictError, ParseError, StaleError
from spark_pair.base.exitcodes import ExitCode
from spark_pair.edits.apply import apply_turn, check_each
from spark_pair.edits.journal import Journal
from spark_pair.edits.ops import Delete, Hunk, Modify, Rename, content_hash
from spark_pair.edits.parser import parse_diff
from spark_pair.sim.process import SimProcess

TODO = "- validate the input lines\n- add a discount to the order total\n"
STOCK = "pen, 1.50, 4\npad, 3.00, 1\n"


def fenced(body: str) -> str:
    return f"Here:\n\n```diff\n{body}```\n"


PARTIAL_DELETE = fenced("--- a/TODO.txt\n+++ /dev/null\n@@ -1,1 +0,0 @@\n"
                        "-- validate the input lines\n")
WHOLE_DELETE = fenced("--- a/TODO.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n"
                      "-- validate the input lines\n-- add a discount to the order total\n")
RENAME_THEN_DELETE_LINES = fenced(
    "diff --git a/stock.csv b/TODO.txt\nsimilarity index 100%\nrename from stock.csv\n"
    "rename to TODO.txt\n--- a/TODO.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n"
    "-- validate the input lines\n-- add a discount to the order total\n")
BARE_DELETE = fenced("diff --git a/TODO.txt b/TODO.txt\ndeleted file mode 100644\n")
TWO_CREATES = fenced("--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+one\n"
                     "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+two\n")
DELETE_THEN_MODIFY = WHOLE_DELETE.removesuffix("```\n") + (
    "--- a/TODO.txt\n+++ b/TODO.txt\n@@ -1,2 +1,2 @@\n-- validate the input lines\n+- X\n"
    " - add a discount to the order total\n```\n")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", {"TODO.txt": TODO, "stock.csv": STOCK,
                                          "README.md": "# inventory\n"})


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


# ---- through `spark-pair run` ---------------------------------------------------------------


def test_a_delete_showing_part_of_the_file_is_refused_and_keeps_unseen_work(
        sim: SimProcess, repo: Path, home: Path) -> None:
    sim.configure(replies=[{"match": "PARTIAL", "text": PARTIAL_DELETE}])
    (repo / "TODO.txt").write_text(TODO + "- mine, not committed\n")  # never shown to the model
    before = tree(repo)
    out = run(repo, home, sim, "PARTIAL", "--apply", "--allow-delete", "--json")
    assert out.returncode == ExitCode.CONFLICT, out.stderr
    assert tree(repo) == before
    lines = lines_of(out.stdout)
    check_schema(lines)
    refused = [ln for ln in lines if ln["type"] == "refused"]
    assert [(r["path"], r["kind"]) for r in refused] == [("TODO.txt", "conflict")]
    assert "are not the whole file" in refused[0]["reason"]
    assert "the file has 3" in refused[0]["reason"]
    # refused as soon as it was parsed: the policy was never asked about it
    assert not any(ln["type"] == "decision" for ln in lines)
    assert "hint:" in out.stderr and "Traceback" not in out.stderr


def test_a_delete_showing_the_whole_file_applies_and_counts_its_lines(
        sim: SimProcess, repo: Path, home: Path) -> None:
    sim.configure(replies=[{"match": "WHOLE", "text": WHOLE_DELETE}])
    out = run(repo, home, sim, "WHOLE", "--json")
    lines = lines_of(out.stdout)
    check_schema(lines)
    (op,) = [ln for ln in lines if ln["type"] == "operation"]
    assert (op["op"], op["removed"], op["added"]) == ("delete", 2, 0)
    out = run(repo, home, sim, "WHOLE", "--apply", "--allow-delete")
    assert out.returncode == ExitCode.OK, out.stderr
    assert not (repo / "TODO.txt").exists()


def test_a_delete_with_the_wrong_spacing_goes_only_for_a_file_the_model_was_shown(
        sim: SimProcess, repo: Path, home: Path) -> None:
    (repo / "stock.tsv").write_text("name\tqty\npen\t4\n")
    sim.configure(replies=[{"match": "TSV", "text": fenced(
        "--- a/stock.tsv\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-name qty\n-pen 4\n")}])
    out = run(repo, home, sim, "TSV", "--apply", "--allow-delete",  # never shown: exact
              "--no-auto-context")  # (else the file, edited on disk, is chosen and shown)
    assert out.returncode == ExitCode.CONFLICT, out.stderr
    assert "not the whole file" in out.stderr and "hint:" in out.stderr
    assert (repo / "stock.tsv").read_text() == "name\tqty\npen\t4\n"
    out = run(repo, home, sim, "TSV", "-f", "stock.tsv", "--apply", "--allow-delete")
    assert out.returncode == ExitCode.OK, out.stderr  # the file it saw: a slip is forgiven
    assert not (repo / "stock.tsv").exists()


def test_a_rename_whose_lines_delete_another_file_deletes_nothing(
        sim: SimProcess, repo: Path, home: Path) -> None:
    sim.configure(replies=[{"match": "SWAP", "text": RENAME_THEN_DELETE_LINES}])
    before = tree(repo)
    out = run(repo, home, sim, "SWAP", "--apply", "--allow-delete", "--allow-rename")
    assert out.returncode == ExitCode.MODEL, out.stderr
    assert tree(repo) == before
    assert "disagree about which file it is" in out.stderr
    assert "stock.csv" in out.stderr and "TODO.txt" in out.stderr
    assert "DELETE stock.csv" not in out.stdout + out.stderr


def test_a_delete_of_a_missing_file_is_missing_at_once_not_uncommitted(
        sim: SimProcess, repo: Path, home: Path) -> None:
    sim.configure(replies=[{"match": "GONE", "text": WHOLE_DELETE}])
    (repo / "TODO.txt").unlink()  # tracked by git, gone from the disk
    out = run(repo, home, sim, "GONE", "--apply", "--json")
    assert out.returncode == ExitCode.CONFLICT, out.stderr
    lines = lines_of(out.stdout)
    check_schema(lines)
    assert "uncommitted" not in out.stdout + out.stderr
    assert not any(ln["type"] == "decision" for ln in lines)
    (refused,) = [ln for ln in lines if ln["type"] == "refused"]
    assert refused["reason"] == "cannot delete TODO.txt: the file does not exist"


def test_a_header_only_delete_goes_only_for_a_file_the_model_was_shown(
        sim: SimProcess, repo: Path, home: Path) -> None:
    sim.configure(replies=[{"match": "BARE", "text": BARE_DELETE}])
    out = run(repo, home, sim, "BARE", "--apply", "--allow-delete")
    assert out.returncode == ExitCode.CONFLICT, out.stderr
    assert "the model was not shown the file" in out.stderr
    assert (repo / "TODO.txt").read_text() == TODO
    out = run(repo, home, sim, "BARE", "-f", "TODO.txt", "--apply", "--allow-delete")
    assert out.returncode == ExitCode.OK, out.stderr
    assert not (repo / "TODO.txt").exists()


QUOTED = fenced('diff --git "a/\\303\\251t\\303\\251.txt" "b/\\303\\251t\\303\\251.txt"\n'
                'index 1111111..2222222 100644\n--- "a/\\303\\251t\\303\\251.txt"\n'
                '+++ "b/\\303\\251t\\303\\251.txt"\n@@ -1 +1 @@\n-sun\n+rain\n'
                'diff --git a/stock.csv "b/r\\303\\251serve.csv"\nsimilarity index 100%\n'
                'rename from stock.csv\nrename to "r\\303\\251serve.csv"\n')


def test_a_git_quoted_path_names_the_real_file(sim: SimProcess, repo: Path, home: Path) -> None:
    (repo / "été.txt").write_text("sun\n")
    sim.configure(replies=[{"match": "QUOTED", "text": QUOTED}])
    out = run(repo, home, sim, "QUOTED", "-f", "été.txt", "--apply", "--allow-rename")
    assert out.returncode == ExitCode.OK, out.stderr
    assert (repo / "été.txt").read_text() == "rain\n"
    assert (repo / "réserve.csv").read_text() == STOCK and not (repo / "stock.csv").exists()
    assert "diff --git a/été.txt b/été.txt" in out.stdout


@pytest.mark.parametrize(("path", "why"), [
    ("\\377.txt", "bytes that are not UTF-8 in the path"),
    ("x\\000.txt", "control character or NUL byte in the path"),
    ("..\\057outside.txt", "'..' leaves the repository"),
    ("\\056git/config", "inside .git/"),
])
def test_a_quoted_path_that_decodes_to_an_unsafe_name_is_refused(
        sim: SimProcess, repo: Path, home: Path, path: str, why: str) -> None:
    reply = fenced(f'--- /dev/null\n+++ "b/{path}"\n@@ -0,0 +1 @@\n+boom\n')
    sim.configure(replies=[{"match": "UNSAFE", "text": reply}])
    before = tree(repo)
    out = run(repo, home, sim, "UNSAFE", "--apply", "--json")
    assert out.returncode == ExitCode.CONFLICT, out.stderr
    assert tree(repo) == before and not (repo.parent / "outside.txt").exists()
    lines = lines_of(out.stdout)
    check_schema(lines)
    (refused,) = [ln for ln in lines if ln["type"] == "refused"]
    assert refused["kind"] == "path" and why in refused["reason"]
    (error,) = [ln for ln in lines if ln["type"] == "error"]
    assert error["hint"] and "hint:" in out.stderr and "Traceback" not in out.stderr


BIN = b"GIF89a\x01\x00\x01\x00\x7f\x00\x00;"  # binary, yet it decodes as UTF-8
BINARY_DELETE = fenced("diff --git a/logo.png b/logo.png\ndeleted file mode 100644\n"
                       "index 3f2a1b4..0000000\nBinary files a/logo.png and /dev/null differ\n")


def test_a_binary_file_given_for_the_context_is_named_as_left_out(
        sim: SimProcess, repo: Path, home: Path) -> None:
    (repo / "logo.png").write_bytes(BIN)
    out = run(repo, home, sim, "anything", "-f", "logo.png", "-f", "TODO.txt", "--json")
    lines = lines_of(out.stdout)
    check_schema(lines)
    (turn,) = [ln for ln in lines if ln["type"] == "turn"]
    assert turn["files"] == ["TODO.txt"]
    (note,) = [ln for ln in out.stderr.splitlines() if "logo.png" in ln]
    assert note == "spark-pair: note: logo.png is not sent to the model (logo.png looks binary)"


@pytest.mark.parametrize("given", [(), ("-f", "logo.png")])
def test_a_binary_delete_is_refused_with_a_hint_that_can_help_and_shows_no_made_up_hunk(
        sim: SimProcess, repo: Path, home: Path, given: tuple[str, ...]) -> None:
    (repo / "logo.png").write_bytes(BIN)
    sim.configure(replies=[{"match": "DROP", "text": BINARY_DELETE}])
    out = run(repo, home, sim, "DROP", *given)  # a dry run prints the diff
    assert out.returncode == ExitCode.CONFLICT, out.stderr
    assert out.stdout == ("diff --git a/logo.png b/logo.png\ndeleted file mode 100644\n"
                          "Binary files a/logo.png and /dev/null differ\n")
    out = run(repo, home, sim, "DROP", *given, "--apply", "--allow-delete")
    assert out.returncode == ExitCode.CONFLICT, out.stderr
    assert (repo / "logo.png").read_bytes() == BIN
    assert "a binary file is never sent" in out.stderr
    hint = next(ln for ln in out.stderr.splitlines() if "hint:" in ln)
    assert "git rm logo.png" in hint and "-f" not in hint
    # without a `Binary files` line: the header only, never the file's bytes as lines
    sim.configure(replies=[{"match": "BARE", "text": fenced(
        "diff --git a/logo.png b/logo.png\ndeleted file mode 100644\n")}])
    out = run(repo, home, sim, "BARE", *given)
    assert out.stdout == "diff --git a/logo.png b/logo.png\ndeleted file mode 100644\n"


@pytest.mark.parametrize(("reply", "message", "index"), [
    (TWO_CREATES, "cannot create new.txt: an earlier operation in this reply creates it", 1),
    (DELETE_THEN_MODIFY, "cannot modify TODO.txt: an earlier operation in this reply deletes it",
     1),
])
def test_two_operations_on_one_file_name_the_earlier_one(
        sim: SimProcess, repo: Path, home: Path, reply: str, message: str, index: int) -> None:
    sim.configure(replies=[{"match": "TWICE", "text": reply}])
    before = tree(repo)
    for extra in ((), ("--apply", "--allow-delete")):  # the dry run's check and the write's
        out = run(repo, home, sim, "TWICE", "--json", *extra)
        assert out.returncode == ExitCode.CONFLICT, out.stderr
        lines = lines_of(out.stdout)
        check_schema(lines)
        (refused,) = [ln for ln in lines if ln["type"] == "refused"]
        assert (refused["index"], refused["reason"]) == (index, message)
        assert "already exists" not in out.stderr and "since the request" not in out.stderr
    assert tree(repo) == before


A_PY = "def greet(name):\n    return 'hello ' + name\n\n\ndef bye():\n    return 'bye'\n"
A_HUNK = ("--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n def greet(name):\n"
          "-    return 'hello ' + name\n+    return f'hello {name}'\n")


def test_a_change_made_mid_stream_away_from_the_hunk_is_kept(sim: SimProcess, tmp_path: Path,
                                                             home: Path) -> None:
    repo = make_repo(tmp_path / "mid", {"a.py": A_PY})
    mine = A_PY.replace("'bye'", "'see you'")
    code, lines = run_editing_mid_stream(sim, repo, home, A_HUNK, mine)
    assert code == ExitCode.OK
    assert (repo / "a.py").read_text() == mine.replace("'hello ' + name", "f'hello {name}'")
    (applied,) = [ln for ln in lines if ln["type"] == "applied"]
    assert any("change on disk was kept" in note for note in applied["notes"])


def test_a_whitespace_change_made_mid_stream_inside_the_hunk_is_never_overwritten(
        sim: SimProcess, tmp_path: Path, home: Path) -> None:
    repo = make_repo(tmp_path / "mid", {"a.py": A_PY})
    mine = A_PY.replace("    return 'hello ' + name", "    return  'hello '  +  name")
    code, lines = run_editing_mid_stream(sim, repo, home, A_HUNK, mine)
    assert code == ExitCode.CONFLICT
    assert any(ln["type"] == "refused" and ln["kind"] == "stale" for ln in lines)
    assert (repo / "a.py").read_text() == mine
    assert not (repo / "pad.txt").exists()


# ---- the apply step ---------------------------------------------------------------------------


def _apply(repo: Path, ops: list) -> None:
    apply_turn(repo, ops, journal=Journal(repo, data_dir=repo.parent / "data"))


def test_a_delete_compares_every_line_and_keeps_the_file_on_any_difference(repo: Path) -> None:
    before = tree(repo)
    shown = TODO.splitlines()
    for lines, word in ([shown[:1], "removes 1 line(s), the file has 2"],
                        [[*shown, "more"], "removes 3 line(s), the file has 2"],
                        [[shown[0], "- something else"], "line 2 is"]):
        with pytest.raises(ConflictError, match="not the whole file") as err:
            _apply(repo, [Delete("TODO.txt", lines=lines)])
        assert word in err.value.message and err.value.hint
    assert tree(repo) == before
    crlf = b"a\r\n  b\r\nc"  # CRLF, no final newline
    (repo / "crlf.txt").write_bytes(crlf)
    _apply(repo, [Delete("crlf.txt", lines=["a", "  b", "c"])])
    assert not (repo / "crlf.txt").exists()


def test_a_delete_forgives_spacing_only_in_the_file_the_model_was_shown(repo: Path) -> None:
    (repo / "a.py").write_text("def f():\n    return 1\n")
    sloppy = ["def f():", "  return 1"]  # the model's spacing is not the file's
    with pytest.raises(ConflictError, match="not the whole file") as err:
        _apply(repo, [Delete("a.py", lines=sloppy)])  # never shown: compared exactly
    assert "'    return 1' in the file but '  return 1' in the reply" in err.value.message
    assert (repo / "a.py").read_text() == "def f():\n    return 1\n"
    with pytest.raises(StaleError, match="no longer what the reply deletes"):
        _apply(repo, [Delete("a.py", content_hash(b"def f():\n  return 1\n"), lines=sloppy)])
    assert (repo / "a.py").exists()
    _apply(repo, [Delete("a.py", content_hash((repo / "a.py").read_bytes()), lines=sloppy)])
    assert not (repo / "a.py").exists()  # exactly the file it was shown: a slip is forgiven


def test_a_header_only_delete_of_a_binary_file_points_past_the_context(repo: Path) -> None:
    (repo / "logo.png").write_bytes(BIN)
    with pytest.raises(ConflictError, match="a binary file is never sent") as err:
        _apply(repo, [Delete("logo.png", binary=True)])
    assert "git rm logo.png" in (err.value.hint or "") and "-f" not in (err.value.hint or "")
    (repo / "my logo.png").write_bytes(BIN)
    with pytest.raises(ConflictError) as err:
        _apply(repo, [Delete("my logo.png")])  # no `Binary files` line: the disk decides
    assert "git rm 'my logo.png'" in (err.value.hint or "")
    assert (repo / "logo.png").read_bytes() == BIN == (repo / "my logo.png").read_bytes()


def test_a_header_only_delete_needs_the_shown_hash_unless_the_file_is_empty(repo: Path) -> None:
    with pytest.raises(ConflictError, match="the model was not shown the file"):
        _apply(repo, [Delete("TODO.txt")])
    with pytest.raises(StaleError, match="changed since the request"):
        _apply(repo, [Delete("TODO.txt", content_hash(b"what the model saw\n"))])
    assert (repo / "TODO.txt").read_text() == TODO
    (repo / "empty.txt").write_bytes(b"")
    _apply(repo, [Delete("empty.txt"), Delete("TODO.txt", content_hash(TODO.encode()))])
    assert not (repo / "empty.txt").exists() and not (repo / "TODO.txt").exists()


def test_a_stale_file_takes_hunks_only_where_they_match_exactly(repo: Path) -> None:
    seen = content_hash(b"one\ntwo\nthree\n")
    hunk = Hunk(1, 2, 1, 2, [" one", "-two", "+TWO"])
    (repo / "f.txt").write_text("one\ntwo  \nthree\n")  # a change the model never saw
    with pytest.raises(StaleError, match="no longer apply exactly"):
        _apply(repo, [Modify("f.txt", [hunk], seen)])
    assert (repo / "f.txt").read_text() == "one\ntwo  \nthree\n"
    _apply(repo, [Modify("f.txt", [hunk])])  # fresh: the model's spacing slip is tolerated
    assert (repo / "f.txt").read_text() == "one\nTWO\nthree\n"
    (repo / "g.txt").write_text("one\ntwo\nthree\nmine\n")
    _apply(repo, [Modify("g.txt", [hunk], seen)])
    assert (repo / "g.txt").read_text() == "one\nTWO\nthree\nmine\n"


def test_an_operation_after_a_rename_or_delete_of_its_file_names_it(repo: Path) -> None:
    found = check_each(repo, [Rename("stock.csv", "s.csv"),
                              Delete("stock.csv", lines=STOCK.splitlines()),
                              Delete("TODO.txt", lines=TODO.splitlines()),
                              Rename("README.md", "s.csv")])
    assert [(i, e.message) for i, e in found] == [
        (1, "cannot delete stock.csv: an earlier operation in this reply renames it to s.csv"),
        (3, "cannot rename README.md to s.csv: an earlier operation in this reply writes s.csv "
            "(a rename never overwrites)")]


# ---- the parser: header lines that disagree ---------------------------------------------------


@pytest.mark.parametrize("text", [
    # a rename whose ---/+++ lines delete the rename's target
    RENAME_THEN_DELETE_LINES,
    # a rename whose ---/+++ lines create its target
    "diff --git a/a b/b\nrename from a\nrename to b\n--- /dev/null\n+++ b/b\n@@ -0,0 +1 @@\n+b\n",
    # ---/+++ lines naming the rename's target as its source
    "diff --git a/a b/b\nrename from a\nrename to b\n--- a/b\n+++ b/b\n@@ -1 +1 @@\n-a\n+b\n",
    # rename lines naming other files than the diff line
    "diff --git a/p b/q\nrename from a\nrename to b\n",
    # a new file whose --- line names an existing one
    "diff --git a/x b/x\nnew file mode 100644\n--- a/x\n+++ b/x\n@@ -0,0 +1 @@\n+y\n",
    # a deleted file whose +++ line names a file
    "diff --git a/x b/x\ndeleted file mode 100644\n--- a/x\n+++ b/x\n@@ -1 +0,0 @@\n-y\n",
    # a diff line for x and ---/+++ lines that move it to y
    "diff --git a/x b/x\n--- a/x\n+++ b/y\n@@ -1 +1 @@\n-a\n+b\n",
    # ... or a +++ line without its --- line
    "diff --git a/x b/x\n+++ b/y\n@@ -1 +1 @@\n-a\n+b\n",
    # a bare diff line for x (with its index line) and ---/+++ lines for y only
    "diff --git a/x b/x\nindex 1234567..89abcde 100644\n--- a/y\n+++ b/y\n@@ -1 +1 @@\n-a\n+b\n",
    "diff --git a/x b/x\n--- a/y\n+++ b/y\n@@ -1 +1 @@\n-a\n+b\n",
    "diff --git a/x b/x\nold mode 100644\nnew mode 100755\n--- a/y\n+++ b/y\n@@ -1 +1 @@\n-a\n"
    "+b\n",
])
def test_header_lines_that_disagree_about_the_file_are_refused(text: str) -> None:
    with pytest.raises(ParseError, match="disagree about which file it is") as err:
        parse_diff(text)
    assert err.value.hint


@pytest.mark.parametrize("text", [
    "diff --git a/a b/b\nsimilarity index 90%\ncopy from a\ncopy to b\n--- a/a\n+++ b/b\n"
    "@@ -1 +1 @@\n-x\n+y\n",
    "diff --git a/a b/b\nsimilarity index 100%\ncopy from a\ncopy to b\n",
])
def test_a_copy_is_refused_never_taken_for_a_rename(text: str) -> None:
    with pytest.raises(ParseError, match="copies a to b: copies are not applied"):
        parse_diff(text)


def test_agreeing_headers_and_the_next_file_after_a_bare_rename_still_parse() -> None:
    ops = parse_diff(
        "diff --git a/a b/b\nrename from a\nrename to b\n--- a/a\n+++ b/b\n@@ -1 +1 @@\n-x\n+y\n"
        "diff --git a/c b/d\nrename from c\nrename to d\n"
        "--- a/TODO.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-z\n"
        "--- a/x\n+++ b/y\n@@ -1 +1 @@\n-p\n+q\n")
    assert [type(op).__name__ for op in ops] == ["Rename", "Rename", "Delete", "Rename"]
    assert (ops[0].src, ops[0].dst, ops[1].src, ops[1].dst) == ("a", "b", "c", "d")
    assert ops[2] == Delete("TODO.txt", lines=["z"])
    assert (ops[3].src, ops[3].dst, ops[3].hunks[0].lines) == ("x", "y", ["-p", "+q"])


def test_a_deleted_file_with_an_added_line_is_refused() -> None:
    with pytest.raises(ParseError, match=r"deleted file x has an added \('\+'\) line"):
        parse_diff("--- a/x\n+++ /dev/null\n@@ -1 +1 @@\n-a\n+b\n")


def test_a_plus_line_without_its_minus_line_names_the_diff_lines_file() -> None:
    ops = parse_diff("diff --git a/x b/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n")
    assert ops == [Modify("x", [Hunk(1, 1, 1, 1, ["-a", "+b"])])]  # not a rename to b/x


def test_a_save_made_while_the_turn_is_synced_is_kept_and_nothing_is_written(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from spark_pair.edits import fsio

    real_sync = fsio.sync_files
    mine = TODO + "- USER WORK\n"

    def slow_disk(fds: list) -> None:  # the user saves while the new contents are synced
        (repo / "TODO.txt").write_text(mine)
        real_sync(fds)

    monkeypatch.setattr(fsio, "sync_files", slow_disk)
    hunk = Hunk(1, 2, 1, 2, ["-- validate the input lines", "+- check the input lines",
                             " - add a discount to the order total"])
    with pytest.raises(StaleError, match="changed on disk while the turn was being written"):
        _apply(repo, [Modify("TODO.txt", [hunk]), Modify("stock.csv", [Hunk(
            1, 1, 1, 1, ["-pen, 1.50, 4", "+pen, 1.75, 4"])])])
    assert (repo / "TODO.txt").read_text() == mine
    assert (repo / "stock.csv").read_text() == STOCK
    assert {p.name for p in repo.iterdir()} == {".git", "TODO.txt", "stock.csv", "README.md"}
    assert not list((repo.parent / "data").rglob("*.interrupted"))  # no entry left to recover


def test_a_turn_that_changes_no_byte_reports_no_changes_and_no_turn_to_undo(
        sim: SimProcess, repo: Path, home: Path) -> None:
    sim.configure(replies=[{"match": "SAME", "text": fenced(
        "--- a/stock.csv\n+++ b/stock.csv\n@@ -1,2 +1,2 @@\n pen, 1.50, 4\n-pad, 3.00, 1\n"
        "+pad, 3.00, 1\n")}])
    before = tree(repo)
    out = run(repo, home, sim, "SAME", "-f", "stock.csv", "--apply", "--json")
    assert out.returncode == ExitCode.OK, out.stderr
    lines = lines_of(out.stdout)
    check_schema(lines)
    (end,) = [ln for ln in lines if ln["type"] == "end"]
    assert (end["status"], end["turn_id"]) == ("no_changes", None)
    assert tree(repo) == before


def test_an_empty_reply_is_a_failure_said_as_such_and_a_reply_of_prose_is_quoted(
        sim: SimProcess, repo: Path, home: Path) -> None:
    """A model that wrote nothing (a local server's chat template can do that) did not propose
    'no change': `run --apply` fails and says so (it exited 0, silent). A reply with no diff
    says how it began: a script sees nothing else of it."""
    sim.configure(replies=[{"match": "EMPTY", "text": "\n\n"},
                           {"match": "PROSE", "text": "Instruction: do it.\nSure, I will."}])
    before = tree(repo)
    empty = run(repo, home, sim, "EMPTY please", "--apply", "--json")
    assert empty.returncode == ExitCode.MODEL, empty.stderr
    assert "the reply is empty: the model wrote only blank lines" in empty.stderr
    end = lines_of(empty.stdout)[-1]
    assert end["status"] == "failed" and end["exit_code"] == ExitCode.MODEL
    prose = run(repo, home, sim, "PROSE please", "--apply")
    assert prose.returncode == ExitCode.MODEL
    assert "no unified diff; it begins: 'Instruction: do it. Sure, I will.'" in prose.stderr
    assert tree(repo) == before
