"""Word-level spans within a changed line pair."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from spark_pair.edits.words import hunk_word_spans, line_pairs, word_spans


def marked(line: str, spans) -> str:
    out, at = [], 0
    for s, e in spans:
        out += [line[at:s], "[", line[s:e], "]"]
        at = e
    return "".join(out + [line[at:]])


def test_a_renamed_word_is_marked_on_both_sides():
    old, new = word_spans("    total = price * count", "    total = price * quantity")
    assert marked("    total = price * count", old) == "    total = price * [count]"
    assert marked("    total = price * quantity", new) == "    total = price * [quantity]"


def test_an_inserted_argument_is_marked_only_where_it_was_added():
    old, new = word_spans("call(a, b)", "call(a, x, b)")
    assert old == []
    assert marked("call(a, x, b)", new) == "call(a, [x, ]b)"


def test_touching_changes_merge_into_one_span():
    old, new = word_spans("x = foo.bar(1)", "x = baz.qux(1)")
    assert marked("x = foo.bar(1)", old) == "x = [foo.bar](1)"
    assert marked("x = baz.qux(1)", new) == "x = [baz.qux](1)"


def test_equal_or_unrelated_or_huge_lines_get_no_word_marks():
    assert word_spans("same", "same") is None
    assert word_spans("import os", "class Widget(Base):") is None
    assert word_spans("a" * 3000, "b" + "a" * 2999) is None


def test_lines_are_paired_within_each_removed_then_added_run():
    lines = [" ctx", "-a", "-b", "+A", " ctx", "-c", "+C", "+D", "+only added", " end", "-gone"]
    assert line_pairs(lines) == [(1, 3), (5, 6)]


@given(st.text(alphabet="ab c_.(", max_size=30), st.text(alphabet="ab c_.(", max_size=30))
def test_unmarked_parts_are_equal_on_both_sides(old, new):
    found = word_spans(old, new)
    if found is None:
        return
    def rest(line, spans):
        out, at = [], 0
        for s, e in spans:
            assert at <= s < e <= len(line)
            out.append(line[at:s])
            at = e
        return "".join(out + [line[at:]])
    assert rest(old, found[0]) == rest(new, found[1])


def test_a_long_line_with_one_change_is_marked_and_a_long_reordered_one_is_not():
    words = [f"w{i}" for i in range(400)]
    old, new = " ".join(words), " ".join(words[:200] + ["CHANGED"] + words[201:])
    spans = word_spans(old, new)
    assert spans is not None
    assert [old[s:e] for s, e in spans[0]] == ["w200"]
    assert [new[s:e] for s, e in spans[1]] == ["CHANGED"]
    # the same words in another order: far too many differing tokens to compare word by word
    assert word_spans(" ".join(words[:300]), " ".join(reversed(words[:300]))) is None


def test_a_hunk_gets_the_spans_of_each_paired_line_offset_by_its_marker():
    lines = [" def total(items):", "-    return price * count", "+    return price * quantity",
             " ", "-import os", "+class Widget(Base):", "+extra"]
    spans = hunk_word_spans(lines)
    assert set(spans) == {1, 2, 4, 5}
    assert [lines[1][s:e] for s, e in spans[1]] == ["count"]
    assert [lines[2][s:e] for s, e in spans[2]] == ["quantity"]
    assert spans[4] == spans[5] == []  # nothing in common: a whole-line change
