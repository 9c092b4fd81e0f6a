"""The streaming diff parser: shapes models emit, streaming events, the Codex envelope."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import unidiff

from spark_pair.base.errors import ParseError
from spark_pair.edits.apply import apply_hunks
from spark_pair.edits.ops import Create, Delete, Hunk, HunkHeader, Modify, Rename, op_paths
from spark_pair.edits.parse_events import FileFinished, FileStarted, HunkStarted, LineAdded
from spark_pair.edits.parser import DiffParser, parse_diff

GIT = """diff --git a/src/app.py b/src/app.py
index 3b18e51..a9c2f1e 100644
--- a/src/app.py
+++ b/src/app.py
@@ -1,4 +1,4 @@ def main():
 import os
-x = 1
+x = 2
 y = 3
 z = 4
@@ -10,3 +10,4 @@
 a
 b
+c
 d
"""


def stream(text: str, size: int = 1) -> tuple[list, DiffParser]:
    p = DiffParser()
    events = []
    for i in range(0, len(text), size):
        events += p.feed(text[i:i + size])
    events += p.close()
    return events, p


def test_git_diff_matches_unidiff() -> None:
    ops = parse_diff(GIT)
    assert len(ops) == 1 and isinstance(ops[0], Modify) and ops[0].path == "src/app.py"
    ref = unidiff.PatchSet(GIT)[0]
    assert len(ops[0].hunks) == len(ref)
    for mine, theirs in zip(ops[0].hunks, ref, strict=False):
        assert (mine.old_start, mine.old_len, mine.new_start, mine.new_len) == (
            theirs.source_start, theirs.source_length, theirs.target_start, theirs.target_length)
        assert mine.lines == [str(ln).rstrip("\n") for ln in theirs]
    assert ops[0].hunks[0].section == "def main():"


def test_events_arrive_as_lines_complete() -> None:
    p = DiffParser()
    assert p.feed("--- a/f.txt\n+++ b/f.txt\n") == []  # header complete only once '@@' is known
    assert p.feed("@@ -1,2 +1,2 @@\n") == []  # a file and a hunk are announced with a line
    assert p.feed("-old") == [] and p.partial_line == "-old"
    ev = p.feed("\n+new\n")
    assert [type(e) for e in ev] == [FileStarted, HunkStarted, LineAdded, LineAdded]
    assert ev[0].path == "f.txt" and ev[0].op_kind == "modify"
    assert ev[1].header == HunkHeader(1, 2, 1, 2, "")
    assert [e.line for e in ev if isinstance(e, LineAdded)] == ["-old", "+new"]
    ev = p.feed(" ctx\n") + p.close()
    assert isinstance(ev[-1], FileFinished) and ev[-1].op.hunks[0].lines == ["-old", "+new", " ctx"]


def test_one_char_chunks_equal_whole() -> None:
    whole, _ = stream(GIT, len(GIT))
    for size in (1, 3, 7):
        events, p = stream(GIT, size)
        assert events == whole
        assert p.operations() == parse_diff(GIT)


def test_prose_and_fences_and_two_blocks() -> None:
    reply = (
        "Sure! Here is the change:\n\n```diff\n--- a/a.txt\n+++ b/a.txt\n@@ ... @@\n-1\n+one\n```\n"
        "And another one:\n```diff\n--- b.txt\n+++ b.txt\n@@\n two\n-2\n+deux\n\n```\n"
        "Hope that helps.\n"
    )
    ops = parse_diff(reply)
    assert [op.path for op in ops] == ["a.txt", "b.txt"]
    assert ops[0].hunks[0].lines == ["-1", "+one"]
    assert ops[1].hunks[0].lines == [" two", "-2", "+deux"]  # the trailing blank is not context
    assert ops[0].hunks[0].old_start is None


def test_prose_only_gives_no_operations() -> None:
    assert parse_diff("I could not find that function.\n--- \nThanks!\n@@ nothing\n") == []
    assert parse_diff("") == []


def test_create_delete_rename() -> None:
    text = ("diff --git a/new.txt b/new.txt\nnew file mode 100644\n--- /dev/null\n+++ b/new.txt\n"
            "@@ -0,0 +1,2 @@\n+hello\n+world\n\\ No newline at end of file\n"
            "diff --git a/old.txt b/old.txt\ndeleted file mode 100644\nindex 1..0\n"
            "diff --git a/x.py b/y.py\nsimilarity index 90%\nrename from x.py\nrename to y.py\n"
            "--- a/x.py\n+++ b/y.py\n@@ -1 +1 @@\n-a\n+b\n"
            "diff --git a/p.py b/q.py\nsimilarity index 100%\nrename from p.py\nrename to q.py\n")
    ops = parse_diff(text)
    assert ops == [Create("new.txt", "hello\nworld"), Delete("old.txt"),
                   Rename("x.py", "y.py", ops[2].hunks), Rename("p.py", "q.py", [])]
    assert ops[2].hunks[0].lines == ["-a", "+b"]


def test_a_bare_delete_header_followed_by_another_file_is_kept() -> None:
    for gap in ("", "\n"):
        text = f"--- a/b.txt\n+++ /dev/null\n{gap}--- a/a.txt\n+++ b/a.txt\n@@\n-A0\n+A1\n"
        ops = parse_diff(text)
        assert [type(op) for op in ops] == [Delete, Modify], gap
        assert ops[0].path == "b.txt" and ops[1].path == "a.txt"
    ops = parse_diff("--- /dev/null\n+++ b/n.txt\n--- a/a.txt\n+++ b/a.txt\n@@\n-A0\n+A1\n")
    assert [type(op) for op in ops] == [Create, Modify]


def test_an_overcounted_hunk_does_not_swallow_the_next_file_header() -> None:
    text = ("--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n-a = 1\n+a = 9\n"
            "--- a/ro/k.py\n+++ b/ro/k.py\n@@ -1 +1 @@\n-k = 1\n+k = 2\n")
    ops = parse_diff(text)
    assert [op.path for op in ops] == ["x.py", "ro/k.py"]
    assert ops[0].hunks[0].lines == ["-a = 1", "+a = 9"]


def test_dev_null_headers_and_timestamps() -> None:
    text = ("--- /dev/null\t2024-01-01 10:00:00.000000000 +0000\n+++ b/n.py 2024-01-01 10:00:00\n"
            "@@ -0,0 +1 @@\n+x\n--- a/gone.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-y\n")
    assert parse_diff(text) == [Create("n.py", "x\n"), Delete("gone.py", lines=["y"])]


def test_removed_double_dash_and_added_double_plus_lines() -> None:
    # counts say these are lines, not a new file header
    text = "--- a/c.sql\n+++ b/c.sql\n@@ -1,2 +1,2 @@\n--- comment\n+++ counter\n x\n"
    [op] = parse_diff(text)
    assert op.hunks[0].lines == ["--- comment", "+++ counter", " x"]
    assert apply_hunks("-- comment\nx\n", op.hunks) == "++ counter\nx\n"


def test_wrong_counts_do_not_swallow_next_file() -> None:
    text = ("--- a/a.txt\n+++ b/a.txt\n@@ -1,9 +1,9 @@\n-a\n+b\n"
            "--- a/b.txt\n+++ b/b.txt\n@@ -1,1 +1,1 @@\n-c\n+d\n")
    ops = parse_diff(text)
    assert [op.path for op in ops] == ["a.txt", "b.txt"]
    assert ops[0].hunks[0].lines == ["-a", "+b"]


def test_undercounted_hunk_keeps_its_lines_when_a_new_hunk_or_file_follows() -> None:
    for after in ("@@ -9 +9 @@\n-q\n+Q\n", "--- a/b\n+++ b/b\n@@ -1 +1 @@\n-q\n+Q\n"):
        text = "--- a/a\n+++ b/a\n@@ -1 +1 @@\n x\n-y\n+z\n w\n" + after
        op = parse_diff(text)[0]
        assert op.hunks[0].lines == [" x", "-y", "+z", " w"]


def test_crlf_reply_and_blank_context() -> None:
    text = "--- a/w.txt\r\n+++ b/w.txt\r\n@@ -1,3 +1,3 @@\r\n a\r\n\r\n-b\r\n+c\r\n"
    [op] = parse_diff(text)
    assert op.path == "w.txt" and op.hunks[0].lines == [" a", " ", "-b", "+c"]


def test_no_newline_markers() -> None:
    text = "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+a\n"
    [op] = parse_diff(text)
    assert op.hunks[0].no_newline_old and not op.hunks[0].no_newline_new
    assert apply_hunks("a", op.hunks) == "a\n"


def test_codex_envelope() -> None:
    text = (
        "I'll apply this patch.\n*** Begin Patch\n*** Add File: docs/new.md\n+# Title\n+\n+body\n"
        "*** Update File: src/m.py\n*** Move to: src/n.py\n@@ class A:\n     def f(self):\n"
        "-        return 1\n+        return 2\n*** Update File: README\n@@\n-old\n+new\n"
        "*** End of File\n*** Delete File: junk.txt\n*** End Patch\nDone.\n"
    )
    events, p = stream(text)
    ops = p.operations()
    assert ops[0] == Create("docs/new.md", "# Title\n\nbody\n")
    assert isinstance(ops[1], Rename) and (ops[1].src, ops[1].dst) == ("src/m.py", "src/n.py")
    assert ops[1].hunks[0].section == "class A:"
    assert ops[1].hunks[0].lines == ["     def f(self):", "-        return 1", "+        return 2"]
    assert isinstance(ops[2], Modify) and ops[2].hunks[0].lines == ["-old", "+new"]
    assert ops[3] == Delete("junk.txt")
    kinds = [(e.op_kind, e.path) for e in events if isinstance(e, FileStarted)]
    assert kinds == [("create", "docs/new.md"), ("rename", "src/m.py"), ("modify", "README"),
                     ("delete", "junk.txt")]


def test_feed_after_close_is_a_parse_error() -> None:
    import pytest


    p = DiffParser()
    p.close()
    with pytest.raises(ParseError):
        p.feed("x")


def test_codex_stacked_anchors_make_one_hunk() -> None:
    text = ("*** Begin Patch\n*** Update File: b.py\n@@ class Base\n@@     def method():\n"
            "         x = 1\n-        return x\n+        return x + 1\n*** End Patch\n")
    [op] = parse_diff(text)
    assert len(op.hunks) == 1 and op.hunks[0].section == "class Base def method():"
    assert op.hunks[0].lines == ["         x = 1", "-        return x", "+        return x + 1"]


def test_empty_hunks_are_dropped() -> None:
    [op] = parse_diff("--- a/f\n+++ b/f\n@@ -1 +1 @@\n@@ -3 +3 @@\n-a\n+b\n")
    assert len(op.hunks) == 1 and op.hunks[0].lines == ["-a", "+b"]


def test_missing_hunk_header_line() -> None:
    [op] = parse_diff("```diff\n--- a/k.txt\n+++ b/k.txt\n k1\n-k2\n+K2\n```\n")
    assert op.path == "k.txt" and op.hunks[0].lines == [" k1", "-k2", "+K2"]
    assert op.hunks[0].old_start is None


def _git_diff(tmp_path: Path, before: dict[str, str], after: dict[str, str | None],
              moves: dict[str, str] | None = None) -> str:
    """What `git diff` writes (paths quoted its way) for `before` -> `after` (None: deleted)."""
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false",
           "-c", "core.quotePath=true"]
    repo = tmp_path / "quoted"
    repo.mkdir()

    def sh(*args: str) -> str:
        return subprocess.run(git + list(args), cwd=repo, check=True, capture_output=True,
                              text=True, timeout=30).stdout

    sh("init", "-q")
    for rel, text in before.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    sh("add", "-A")
    sh("commit", "-q", "-m", "base")
    for src, dst in (moves or {}).items():
        sh("mv", src, dst)
    for rel, text in after.items():
        if text is None:
            (repo / rel).unlink()
        else:
            (repo / rel).parent.mkdir(parents=True, exist_ok=True)
            (repo / rel).write_text(text)
    sh("add", "-A")
    return sh("diff", "--cached", "-M")


def test_git_quoted_paths_are_decoded_for_every_operation(tmp_path: Path) -> None:
    """git quotes a path holding non-ASCII or special bytes ("a/\\303\\251.py"): the operation
    names the real file, whichever header lines carry it."""
    text = _git_diff(tmp_path,
                     {"é.py": "x = 1\n", "dir one/ü.txt": "u\n", 'say "hi".py': "h\n",
                      "old.txt": "o\n" * 5, "plain.py": "p\n"},
                     {"é.py": "x = 2\n", "dir one/ü.txt": None, 'say "hi".py': "H\n",
                      "new ñ.txt": "n\n", "back\\slash.py": "b\n"},
                     moves={"old.txt": "dir one/ölder.txt", "plain.py": "ß.py"})
    assert '"a/\\303\\251.py"' in text and '"b/say \\"hi\\".py"' in text  # git's own quoting
    expected = [Modify("é.py", [Hunk(1, 1, 1, 1, ["-x = 1", "+x = 2"])]),
                Create("back\\slash.py", "b\n"), Delete("dir one/ü.txt", lines=["u"]),
                Create("new ñ.txt", "n\n"), Rename("old.txt", "dir one/ölder.txt", []),
                Rename("plain.py", "ß.py", []),
                Modify('say "hi".py', [Hunk(1, 1, 1, 1, ["-h", "+H"])])]
    expected.sort(key=op_paths)
    assert sorted(parse_diff(text), key=op_paths) == expected
    assert sorted(stream(text, 3)[1].operations(), key=op_paths) == expected


@pytest.mark.parametrize(("text", "paths"), [
    # a model's own quoting: spaces, a C escape, one side quoted, `rename from/to` quoted
    ('--- "a/my file.py"\n+++ "b/my file.py"\n@@ -1 +1 @@\n-x\n+y\n', ["my file.py"]),
    ('diff --git "a/tab\\there" "b/tab\\there"\n--- "a/tab\\there"\n+++ "b/tab\\there"\n'
     "@@ -1 +1 @@\n-x\n+y\n", ["tab\there"]),
    ('diff --git a/x.py "b/\\303\\251.py"\nsimilarity index 100%\nrename from x.py\n'
     'rename to "\\303\\251.py"\n', ["x.py", "é.py"]),
    ('diff --git "a/\\303\\251.py" b/x.py\nrename from "\\303\\251.py"\nrename to x.py\n',
     ["é.py", "x.py"]),
    # not valid UTF-8, a NUL byte, a way out: decoded, then refused when confined
    ('--- "a/\\377.py"\n+++ "b/\\377.py"\n@@ -1 +1 @@\n-x\n+y\n', ["\udcff.py"]),
    ('--- "a/\\000x"\n+++ "b/\\000x"\n@@ -1 +1 @@\n-x\n+y\n', ["\x00x"]),
    ('--- "a/..\\057up.py"\n+++ "b/..\\057up.py"\n@@ -1 +1 @@\n-x\n+y\n', ["../up.py"]),
])
def test_quoted_header_paths(text: str, paths: list[str]) -> None:
    (op,) = parse_diff(text)
    assert op_paths(op) == paths


def test_a_blank_line_before_the_next_files_header_is_not_taken_into_a_finished_hunk() -> None:
    text = ("--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+hello\n\n"
            "--- a/n.txt\n+++ b/n.txt\n@@ -1,3 +1,3 @@\n 1\n-2\n+two\n 3\n\n"
            "--- a/x.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n")
    for ops in (parse_diff(text), stream(text, 3)[1].operations()):
        create, modify, delete = ops
        assert create.content == "hello\n"
        assert modify.hunks[0].lines == [" 1", "-2", "+two", " 3"]
        assert delete.lines == ["x"]
    # a blank the counts still need is a context line that lost its space
    (modify, _) = parse_diff("--- a/n.txt\n+++ b/n.txt\n@@ -1,3 +1,3 @@\n 1\n-2\n+two\n\n"
                             "--- a/y\n+++ b/y\n@@ -1 +1 @@\n-a\n+b\n")
    assert modify.hunks[0].lines == [" 1", "-2", "+two", " "]


def test_a_hunk_without_a_file_header_after_earlier_files_is_refused_not_dropped() -> None:
    reply = ("```diff\n--- a/n.txt\n+++ b/n.txt\n@@ -1,3 +1,3 @@\n 1\n-2\n+two\n 3\n```\n"
             "And then in the lower part:\n```diff\n@@ -7,3 +7,3 @@\n 7\n-8\n+eight\n 9\n```\n")
    with pytest.raises(ParseError, match="without a file header") as err:
        parse_diff(reply)
    assert "@@ -7,3 +7,3 @@" in err.value.message and err.value.hint
    with pytest.raises(ParseError, match="without a file header"):
        stream(reply, 3)
    # prose that merely mentions '@@' before any file is not a hunk
    assert [op.path for op in parse_diff("The @@ lines mark hunks.\n" + reply.split("And")[0])
            ] == ["n.txt"]
