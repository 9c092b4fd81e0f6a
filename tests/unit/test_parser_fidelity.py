"""What is parsed is exactly what the model finished writing, or an error that says why.

A reply cut short (inside a hunk, a header, an envelope) is an IncompleteReply; a diff whose
operation could differ from its text (lines past a hunk's counts, an unmarked line inside a
hunk, a binary patch, a bare line in an added file, a lone surrogate) is a ParseError.
"""

from __future__ import annotations

import pytest

from spark_pair.base.errors import IncompleteReply, ParseError
from spark_pair.base.exitcodes import ExitCode, exit_code_for
from spark_pair.base.printable import shown_text
from spark_pair.edits.apply import apply_hunks
from spark_pair.edits.ops import Create, Delete, Hunk, HunkHeader, Modify, Rename
from spark_pair.edits.parse_events import FileFinished, FileStarted, HunkStarted, LineAdded
from spark_pair.edits.parser import DiffParser, parse_diff
from spark_pair.edits.placement import Loose
from spark_pair.edits.render import render_ops

HEAD = "--- a/f.py\n+++ b/f.py\n"


# ---- a reply cut short -----------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    HEAD + "@@ -1,5 +1,5 @@\n a\n-b\n+B\n c\n",  # 4 of 5 lines
    HEAD + "@@ -1,3 +1,3 @@\n a\n-b\n",  # the replacement never came
    "--- /dev/null\n+++ b/n.py\n@@ -0,0 +1,10 @@\n+1\n+2\n+3\n",  # a create cut after 3 of 10
    "```diff\n" + HEAD + "@@ -1,2 +1,2 @@\n-a\n",
])
def test_a_hunk_cut_before_its_counts_is_incomplete(text: str) -> None:
    with pytest.raises(IncompleteReply, match="the reply ends inside the hunk") as info:
        parse_diff(text)
    assert "max_tokens" in info.value.hint
    assert exit_code_for(info.value) == ExitCode.MODEL


@pytest.mark.parametrize("text, what", [
    ("*** Begin Patch\n*** Update File: f.py\n@@\n-a\n+b\n", "envelope"),
    ("*** Begin Patch\n*** Add File: n.py\n+one\n+two\n", "envelope"),
    (HEAD + "@@ -1 +1 @@\n-a\n+b\n--- a/g.py\n", "file header line"),
    (HEAD + "@@ -1 +1 @@\n-a\n+b\n--- a/g.py\n+++ b/g.py\n", "after the header of g.py"),
    (HEAD + "@@ -1 +1 @@\n-a\n+b\ndiff --git a/g.py b/g.py\n", "header of g.py"),
    (HEAD + "@@ -1 +1 @@\n-a\n+b\n--- a/g.py\n+++ b/g.py\n@@ -1,2 +1,2 @@\n", "hunk .* of g.py"),
    ("--- /dev/null\n+++ b/n.py\n", "after the header of n.py"),
])
def test_a_reply_that_stops_in_a_header_or_envelope_is_incomplete(text: str, what: str) -> None:
    with pytest.raises(IncompleteReply, match=what):
        parse_diff(text)


def test_complete_replies_keep_their_tolerance() -> None:
    # a closing fence ends an overcounted hunk: the model finished its block
    [op] = parse_diff("```diff\n" + HEAD + "@@ -1,9 +1,9 @@\n-a\n+b\n```\n")
    assert op.hunks[0].lines == ["-a", "+b"]
    # an overcounted hunk followed by another file, and a missing/bare @@
    ops = parse_diff(HEAD + "@@ -1,7 +1,7 @@\n-a\n+b\n--- a/g.py\n+++ b/g.py\n@@\n-c\n+d\n")
    assert [op.path for op in ops] == ["f.py", "g.py"]
    assert parse_diff(HEAD + " a\n-b\n+c\n")[0].hunks[0].lines == [" a", "-b", "+c"]
    # the last line needs no newline when it is complete
    assert parse_diff("*** Begin Patch\n*** Update File: f.py\n@@\n-a\n+b\n*** End Patch") == [
        Modify("f.py", [Hunk(None, None, None, None, ["-a", "+b"])])]
    assert parse_diff(HEAD + "@@ -1 +1 @@\n-a\n+b")[0].hunks[0].lines == ["-a", "+b"]
    assert len(parse_diff(HEAD + "@@ -1 +1 @@\n-a\n+b\n```\nrename it if you like")) == 1
    # an empty new file, a delete and a pure rename need no content
    assert parse_diff("diff --git a/e b/e\nnew file mode 100644\n") == [Create("e", "")]
    assert parse_diff("diff --git a/d b/d\ndeleted file mode 100644\n") == [Delete("d")]
    assert parse_diff("diff --git a/x b/y\nsimilarity index 100%\nrename from x\n"
                      "rename to y\n") == [Rename("x", "y", [])]


# ---- the operation would differ from the text ------------------------------------------------

@pytest.mark.parametrize("tail", ["", "That is all.\n", "\n+also\n"])
def test_lines_after_a_finished_hunk_are_refused(tail: str) -> None:
    text = HEAD + "@@ -1,2 +1,2 @@\n a\n-b\n+B\n+curl evil | sh\n" + tail
    with pytest.raises(ParseError, match="after its @@ line counts were met"):
        parse_diff(text)


def test_lines_after_a_finished_hunk_before_the_closing_fence_are_recounted() -> None:
    # the fence says where the diff ends: the lines before it are the hunk's (marked recounted)
    hunk = parse_diff("```diff\n" + HEAD + "@@ -1,2 +1,2 @@\n a\n-b\n+B\n+also\n```\n")[0].hunks[0]
    assert hunk.lines == [" a", "-b", "+B", "+also"]
    assert hunk.loose == (Loose.RECOUNTED,)


def test_a_context_line_that_lost_its_space_is_refused_not_cut() -> None:
    text = HEAD + "@@ -1,5 +1,5 @@\n a\n-b\n+B\nc\n d\n e\n"
    with pytest.raises(ParseError, match="without a ' ', '-' or '\\+' marker") as info:
        parse_diff(text)
    assert "nothing was written" in info.value.hint


@pytest.mark.parametrize("section", [
    "diff --git a/img.png b/img.png\nnew file mode 100644\nindex 0000000..3f2a1b4\n"
    "Binary files /dev/null and b/img.png differ\n",
    "diff --git a/img.png b/img.png\nindex 1111111..3f2a1b4 100644\nGIT binary patch\n"
    "literal 5\nMcmZQzWMXCl0000a\n\nliteral 0\nHcmV?d00001\n\n",
    "diff --git a/a.bin b/b.bin\nsimilarity index 90%\nrename from a.bin\nrename to b.bin\n"
    "Binary files a/a.bin and b/b.bin differ\n",
])
def test_binary_creates_and_changes_are_refused(section: str) -> None:
    text = HEAD + "@@ -1 +1 @@\n-a\n+b\n" + section
    with pytest.raises(ParseError, match="binary patches are not supported"):
        parse_diff(text)


def test_a_binary_delete_and_a_pure_rename_still_parse() -> None:
    text = ("diff --git a/old.png b/old.png\ndeleted file mode 100644\nindex 3f2a1b4..0000000\n"
            "Binary files a/old.png and /dev/null differ\n"
            "diff --git a/x.png b/y.png\nsimilarity index 100%\nrename from x.png\n"
            "rename to y.png\n" + HEAD + "@@ -1 +1 @@\n-a\n+b\n")
    assert [type(op) for op in parse_diff(text)] == [Delete, Rename, Modify]


def test_a_bare_line_in_an_added_file_is_refused() -> None:
    for body in ("+one\ntwo\n+three\n", "+one\n\n+three\n"):
        with pytest.raises(ParseError, match="without '\\+' in an added file"):
            parse_diff(f"*** Begin Patch\n*** Add File: n.py\n{body}*** End Patch\n")
    # an empty line before the next section only separates it
    ops = parse_diff("*** Begin Patch\n*** Add File: n.py\n+one\n\n*** End Patch\n")
    assert ops == [Create("n.py", "one\n")]


def test_an_unmarked_line_in_an_envelope_update_is_refused() -> None:
    text = "*** Begin Patch\n*** Update File: f.py\n@@ def f():\n a\n-b\n+c\nd\n*** End Patch\n"
    with pytest.raises(ParseError, match="lost its leading space"):
        parse_diff(text)


# ---- surrogates and control characters --------------------------------------------------------

def test_a_lone_surrogate_is_a_clear_error_and_a_split_pair_is_joined() -> None:
    with pytest.raises(ParseError, match="lone UTF-16 surrogate \\(U\\+D83D\\)"):
        parse_diff(HEAD + "@@ -1 +1 @@\n-a\n+smile \ud83d\n")
    p = DiffParser()
    for piece in (HEAD, "@@ -1 +1 @@\n-a\n+smile \ud83d", "\ude00!\n"):  # one pair, two chunks
        p.feed(piece)
    p.close()
    assert p.operations()[0].hunks[0].lines == ["-a", "+smile \U0001F600!"]


def test_control_characters_are_written_exactly_and_shown_escaped() -> None:
    hidden = "curl x | sh\x1b[2K\r# a comment"
    [op] = parse_diff(HEAD + f"@@ -1 +1 @@\n-a\n+{hidden}\n")
    assert apply_hunks("a\n", op.hunks) == hidden + "\n"  # the bytes are the model's
    shown = render_ops([op])
    assert "\x1b" not in shown and "\r" not in shown
    assert "+curl x | sh\\x1b[2K\\r# a comment" in shown
    assert shown_text("\tx = '\u202e'") == "\tx = '\\u202e'"  # tabs stay, bidi escaped


# ---- one index space, immutable events ----------------------------------------------------------

INDEXED = """Some prose first.

diff --git a/prose.py b/prose.py
Only words here, no change for this file.

--- a/one.py
+++ b/one.py
@@ -1,1 +1,1 @@
@@ -5,2 +5,2 @@
 five
-six
+SIX
@@ -9 +9 @@
-nine
+NINE
--- a/two.py
+++ b/two.py
@@
-t
+T
diff --git a/three.py b/three.py
deleted file mode 100644
"""


def test_every_event_names_the_final_operation_and_hunk() -> None:
    p = DiffParser()
    events = []
    for i in range(0, len(INDEXED), 5):
        events += p.feed(INDEXED[i:i + 5])
    events += p.close()
    ops = p.operations()
    assert [type(op) for op in ops] == [Modify, Modify, Delete]
    assert [(e.index, e.path) for e in events if isinstance(e, FileStarted)] == [
        (0, "one.py"), (1, "two.py"), (2, "three.py")]
    assert [(e.index, e.op) for e in events if isinstance(e, FileFinished)] == list(enumerate(ops))
    for e in events:
        if isinstance(e, HunkStarted):
            assert ops[e.op_index].hunks[e.hunk_index].header == e.header
        if isinstance(e, LineAdded):
            assert e.line in ops[e.op_index].hunks[e.hunk_index].lines
    starts = [(e.op_index, e.hunk_index, e.header.old_start) for e in events
              if isinstance(e, HunkStarted)]
    assert starts == [(0, 0, 5), (0, 1, 9), (1, 0, None)]


def test_events_are_frozen_snapshots() -> None:
    p = DiffParser()
    events = p.feed(HEAD + "@@ -1 +1 @@ def f():\n-a\n")
    started = next(e for e in events if isinstance(e, HunkStarted))
    assert started.header == HunkHeader(1, 1, 1, 1, "def f():")
    p.feed("+b\n")
    p.close()
    assert started.header == HunkHeader(1, 1, 1, 1, "def f():")  # no list that grows later
    with pytest.raises(AttributeError):  # (a NamedTuple's; a frozen dataclass's is one too)
        started.hunk_index = 3  # type: ignore[misc]


def test_a_header_only_file_ending_the_reply_without_a_newline_is_whole() -> None:
    """A pure rename (or a delete) is often the reply's last line, with no newline after it:
    whole when the name is the one the `diff --git` line gave (or the mode has its 6 digits)."""
    rename = "diff --git a/x.py b/pkg/y.py\nsimilarity index 100%\nrename from x.py\nrename to "
    assert parse_diff(rename + "pkg/y.py") == [Rename("x.py", "pkg/y.py", [])]
    assert parse_diff("diff --git a/d b/d\ndeleted file mode 100644") == [Delete("d")]
    for cut in (rename + "pkg/y", rename + "pkg/", "diff --git a/d b/d\ndeleted file mode 1006"):
        with pytest.raises(IncompleteReply, match="ends in the middle of a line"):
            parse_diff(cut)
