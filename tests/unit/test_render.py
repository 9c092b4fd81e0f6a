"""Rendering operations as unified diffs, and diff_texts."""

from __future__ import annotations

import unidiff

from spark_pair.edits.apply import apply_hunks
from spark_pair.edits.ops import Create, Delete, Hunk, Modify, Rename
from spark_pair.edits.parser import parse_diff
from spark_pair.edits.render import diff_texts, render_op, render_ops

BASE = "".join(f"line {i}\n" for i in range(1, 31))


def test_render_with_base_fixes_wrong_numbers() -> None:
    op = Modify("m.txt", [Hunk(99, 1, 99, 1, [" line 20", "-line 21", "+LINE 21"]),
                          Hunk(None, None, None, None, ["-line 25", "+a", "+b"])])
    text = render_op(op, BASE)
    patch = unidiff.PatchSet(text)
    hunks = list(patch[0])
    assert [(h.source_start, h.source_length, h.target_start, h.target_length) for h in hunks] == [
        (20, 2, 20, 2), (25, 1, 25, 2)]
    assert apply_hunks(BASE, parse_diff(text)[0].hunks) == apply_hunks(BASE, op.hunks)


def test_render_every_kind_parses_back() -> None:
    ops = [Create("new.txt", "one\ntwo"), Delete("old.txt"),
           Rename("a.py", "b.py", [Hunk(1, 1, 1, 1, ["-x", "+y"])]), Rename("c", "d"),
           diff_texts("m.txt", BASE, BASE.replace("line 7\n", "seven\n"))]
    text = render_ops(ops)
    assert parse_diff(text) == [Create("new.txt", "one\ntwo"), Delete("old.txt"),
                                Rename("a.py", "b.py", [Hunk(1, 1, 1, 1, ["-x", "+y"])]),
                                Rename("c", "d"), ops[4]]
    assert "new file mode" in text and "deleted file mode" in text and "rename to b.py" in text


def test_delete_with_base_shows_content() -> None:
    text = render_op(Delete("g.txt"), "a\nb")
    assert text.endswith("-a\n-b\n\\ No newline at end of file\n")
    assert unidiff.PatchSet(text)[0].is_removed_file


def test_a_binary_delete_shows_its_binary_line_never_a_hunk() -> None:
    (op,) = parse_diff("diff --git a/b.bin b/b.bin\ndeleted file mode 100644\n"
                       "index 1234567..0000000\nBinary files a/b.bin and /dev/null differ\n")
    assert op == Delete("b.bin", binary=True)
    text = render_op(op, "\x00\x01 whatever the disk holds\n")
    assert text == ("diff --git a/b.bin b/b.bin\ndeleted file mode 100644\n"
                    "Binary files a/b.bin and /dev/null differ\n")
    assert parse_diff(text) == [op]


def test_diff_texts_numbers_match_difflib_and_apply() -> None:
    new = BASE.replace("line 3\n", "") + "tail"
    op = diff_texts("x", BASE, new)
    assert apply_hunks(BASE, op.hunks) == new
    ref = list(unidiff.PatchSet(render_op(op))[0])
    assert [(h.source_start, h.source_length) for h in ref] == [
        (h.old_start, h.old_len) for h in op.hunks]
    assert op.hunks[-1].no_newline_new and not op.hunks[-1].no_newline_old
    assert diff_texts("x", BASE, BASE).hunks == []
