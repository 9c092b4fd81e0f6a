"""Property tests: chunking never changes the parse, render/parse/apply round-trips, garbage is
safe."""

from __future__ import annotations

import os

import unidiff
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spark_pair.base.errors import SparkPairError
from spark_pair.edits.apply import apply_hunks
from spark_pair.edits.parser import DiffParser, parse_diff
from spark_pair.edits.render import diff_texts, render_ops

FAST = settings(
    max_examples=int(os.environ.get("SPARK_PAIR_HYPOTHESIS_EXAMPLES", "150")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)

LINE = st.sampled_from(["", "a", "b", "x = 1", "--- a/x", "+++ b/x", "-- c", "++ d", "@@ e",
                        "\\ f", " g", "  ", "diff --git a/x b/x", "```", "*** End Patch"])
TEXT = st.builds(lambda lines, nl: "\n".join(lines) + ("\n" if nl and lines else ""),
                 st.lists(LINE, max_size=14), st.booleans())


def _outcome(text: str, cuts: list[int]):
    """The events and operations, or the error's class and message."""
    try:
        return _chunked(text, cuts)
    except SparkPairError as exc:
        return type(exc), exc.message


def _chunked(text: str, cuts: list[int]):
    p = DiffParser()
    events = []
    pos = 0
    for c in sorted(set(cuts)):
        events += p.feed(text[pos:c])
        pos = c
    events += p.feed(text[pos:])
    events += p.close()
    return events, p.operations()


@FAST
@given(old=TEXT, new=TEXT, data=st.data())
def test_round_trip_and_chunking(old: str, new: str, data) -> None:
    if old == new:
        assert diff_texts("f.txt", old, new).hunks == []
        return
    diff = render_ops([diff_texts("f.txt", old, new)])
    ops = parse_diff(diff)
    assert len(ops) == 1 and ops[0].path == "f.txt"
    assert apply_hunks(old, ops[0].hunks) == new
    ref = unidiff.PatchSet(diff)[0]  # cross-check with an independent parser
    assert [
        [ln.line_type + ln.value.rstrip("\n") for ln in h if ln.line_type in " +-"] for h in ref
    ] == [h.lines for h in ops[0].hunks]
    assert [(h.source_start, h.source_length, h.target_start, h.target_length) for h in ref] == [
        (h.old_start, h.old_len, h.new_start, h.new_len) for h in ops[0].hunks]
    cuts = data.draw(st.lists(st.integers(0, len(diff)), max_size=30))
    events, chunk_ops = _chunked(diff, cuts)
    whole, _ = _chunked(diff, [])
    assert events == whole and chunk_ops == ops


@FAST
@given(text=st.text(alphabet=st.sampled_from(list("-+ @\\\n\r*abd/`:")) , max_size=300),
       cuts=st.lists(st.integers(0, 300), max_size=20))
def test_garbage_never_raises_foreign_errors(text: str, cuts: list[int]) -> None:
    try:
        _chunked(text, [c for c in cuts if c <= len(text)])
        from spark_pair.edits.render import render_ops as r
        r(parse_diff(text))
    except SparkPairError:
        pass


@FAST
@given(lines=st.lists(LINE, max_size=40), cuts=st.lists(st.integers(0, 400), max_size=40))
def test_chunkings_of_line_soup_parse_identically(lines: list[str], cuts: list[int]) -> None:
    text = "\n".join(["--- a/f", "+++ b/f", "@@ -1,3 +1,3 @@"] + lines)
    whole = _outcome(text, [])
    assert _outcome(text, [c for c in cuts if c <= len(text)]) == whole


@FAST
@given(old=TEXT, new=TEXT, data=st.data())
def test_a_rendered_diff_cut_anywhere_is_refused_or_holds_only_what_arrived(old, new, data):
    from support.diffstream import holds_only_complete_text, newline_marks, tokens

    from spark_pair.base.errors import IncompleteReply, ParseError

    if old == new:
        return
    second = render_ops([diff_texts("g.txt", new, old)])
    diff = "Here:\n```diff\n" + render_ops([diff_texts("f.txt", old, new)]) + second + "```\n"
    full_ops = parse_diff(diff)
    full, full_marks = tokens(full_ops), newline_marks(full_ops)
    for end in data.draw(st.lists(st.integers(0, len(diff)), min_size=1, max_size=25)):
        try:
            ops = parse_diff(diff[:end])
        except (IncompleteReply, ParseError):
            continue
        assert holds_only_complete_text(tokens(ops), full), (end, diff[:end])
        assert all(a <= b and c <= d for (a, c), (b, d)
                   in zip(newline_marks(ops), full_marks, strict=False)), end
