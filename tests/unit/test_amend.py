"""Amending a hunk or a created file by hand: exactly what was saved is what gets applied."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spark_pair.base.errors import EditError
from spark_pair.edits.amend import amend_content, amend_hunk, hunk_result
from spark_pair.edits.apply import apply_hunks
from spark_pair.edits.ops import Hunk

FILE = "".join(f"line {i}\n" for i in range(1, 21))


def proposed() -> Hunk:
    return Hunk(4, 4, 4, 4, [" line 4", " line 5", "-line 6", "+line six", " line 7"])


def test_the_editor_opens_the_hunks_resulting_text():
    assert hunk_result(proposed()) == "line 4\nline 5\nline six\nline 7\n"


def test_a_changed_line_lands_exactly_and_nothing_else_moves():
    saved = "line 4\nline 5\nline SIX, by hand\nline 7\n"
    amended = amend_hunk(proposed(), saved)
    assert amended is not None
    assert amended.old_lines == proposed().old_lines  # located exactly as proposed
    out = apply_hunks(FILE, [amended])
    assert out == FILE.replace("line 6\n", "line SIX, by hand\n")


def test_unchanged_text_is_no_amendment():
    assert amend_hunk(proposed(), hunk_result(proposed())) is None
    assert amend_content("a\n", "a\n") is None


def test_a_person_may_also_change_context_lines_and_add_lines():
    saved = "line 4 edited\nline 5\nline six\nextra\nline 7\n"
    out = apply_hunks(FILE, [amend_hunk(proposed(), saved)])
    assert out == FILE.replace("line 4\n", "line 4 edited\n").replace(
        "line 6\n", "line six\nextra\n")


def test_saving_an_empty_region_removes_it():
    out = apply_hunks(FILE, [amend_hunk(proposed(), "")])
    assert "line 4\n" not in out and "line 7\n" not in out and "line 8\n" in out


def test_crlf_from_the_editor_keeps_the_files_own_endings():
    crlf = FILE.replace("\n", "\r\n")
    out = apply_hunks(crlf, [amend_hunk(proposed(), "line 4\r\nline 5\r\nsix\r\nline 7\r\n")])
    assert out == crlf.replace("line 6\r\n", "six\r\n")


def test_a_missing_final_newline_counts_only_at_the_end_of_a_file_without_one():
    mid = amend_hunk(proposed(), "line 4\nline 5\nsix\nline 7")  # editor dropped the newline
    assert not mid.no_newline_new
    assert apply_hunks(FILE, [mid]) == FILE.replace("line 6\n", "six\n")
    tail = Hunk(2, 1, 2, 1, [" b", "-c", "+C"], no_newline_old=True, no_newline_new=True)
    assert hunk_result(tail) == "b\nC"
    out = apply_hunks("a\nb\nc", [amend_hunk(tail, "b\nCC")])
    assert out == "a\nb\nCC"


def test_binary_or_broken_text_is_refused_with_a_hint():
    with pytest.raises(EditError) as err:
        amend_hunk(proposed(), "line\x00")
    assert err.value.hint
    with pytest.raises(EditError):
        amend_content("a\n", "\udcff\n")


def test_a_created_file_is_amended_whole():
    assert amend_content("print(1)\n", "print(2)\r\n") == "print(2)\n"
    assert amend_content("a\r\n", "b\r\n") == "b\r\n"


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 15), st.integers(1, 5),
       st.lists(st.text(alphabet="xyz ", max_size=6), max_size=6),
       st.lists(st.text(alphabet="xyz ", max_size=6), max_size=6))
def test_whatever_is_saved_is_what_the_region_holds_after_applying(start, size, proposal, saved):
    lines = FILE.splitlines()
    old = lines[start:start + size]
    hunk = Hunk(start + 1, len(old), start + 1, len(proposal),
                [" " + ln for ln in old[:1]] + ["-" + ln for ln in old[1:]]
                + ["+" + ln for ln in proposal])
    text = "".join(ln + "\n" for ln in saved)
    amended = amend_hunk(hunk, text)
    if amended is None:
        assert saved == hunk.new_lines
        return
    out = apply_hunks(FILE, [amended])
    assert out.splitlines() == lines[:start] + saved + lines[start + size:]
