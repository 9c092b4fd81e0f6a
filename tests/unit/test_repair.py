"""The repair round's parts on real files: which hunks go back, the candidate place, the
request's text, how the answer is merged and checked, and the reply's form."""

from __future__ import annotations

import time
from pathlib import Path
from types import SimpleNamespace

from spark_pair.edits.ops import Create, Hunk, Modify, content_hash
from spark_pair.protocol.events import Message, TurnRequest
from spark_pair.session import repair
from spark_pair.store.forms import Form, form_of

FILE = "def greet(name):\n    return 'hello ' + name\n\n\ndef unused():\n    pass\n"
WRONG = Hunk(1, 2, 1, 2, [" def greet(name):", '-    return "hello " + name',
                          "+    return f'hello {name}'"])
RIGHT = Hunk(1, 2, 1, 2, [" def greet(name):", "-    return 'hello ' + name",
                          "+    return f'hello {name}'"])
FITS = Hunk(5, 2, 5, 2, [" def unused():", "-    pass", "+    return None"])


def _repo(tmp_path: Path, text: str = FILE) -> Path:
    (tmp_path / "a.py").write_text(text)
    return tmp_path


def test_a_hunk_that_matches_nowhere_is_a_miss_with_the_real_lines(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    found = repair.survey(root, [Modify("a.py", [FITS, WRONG])])
    assert not found.fits and not found.other_problem
    [miss] = found.misses
    assert (miss.op_index, miss.hunk_index, miss.path) == (0, 1, "a.py")
    assert miss.absent == ('    return "hello " + name',)
    assert miss.first == 1 and "    return 'hello ' + name" in miss.shown
    text = repair.ask_text(found.misses)
    assert repair.ASK_MARK in text and "Hunk 2 of a.py" in text
    assert "    return 'hello ' + name" in text  # what is there
    assert '-    return "hello " + name' in text  # what the model wrote


def test_what_fits_or_is_ambiguous_is_not_sent_back(tmp_path: Path) -> None:
    root = _repo(tmp_path, "x = 1\ny = 2\nx = 1\ny = 2\n")
    fine = repair.survey(root, [Modify("a.py", [Hunk(1, 2, 1, 2, [" x = 1", "-y = 2",
                                                                  "+y = 3"])])])
    assert fine.fits and not fine.loose
    twice = repair.survey(root, [Modify("a.py", [Hunk(None, 2, None, 2, [" x = 1", "-y = 2",
                                                                         "+y = 3"])])])
    assert not twice.misses and "matches 2 places" in twice.other_problem
    created = repair.survey(root, [Create("a.py", "new\n")])
    assert not created.misses and created.other_problem


def test_the_candidate_is_where_most_of_the_hunk_stands(tmp_path: Path) -> None:
    lines = [f"line {i}" for i in range(200)]
    old = ["line 120", "not here", "line 122", "line 123"]
    assert repair.candidate(lines, old, 10) == 120
    assert repair.candidate(lines, ["nothing", "alike"], 50) == 49  # the stated place
    assert repair.candidate([], ["a"], 7) == 0


def test_the_candidate_search_is_bounded_on_a_large_file() -> None:
    lines = [f"row {i}" for i in range(400_000)]
    old = ["row 300005", "an invented line", "row 300007"]
    t0 = time.perf_counter()
    at = repair.candidate(lines, old, 300_006)
    assert time.perf_counter() - t0 < 2.0
    assert at == 300_005


def test_the_follow_up_carries_the_conversation_and_the_reply() -> None:
    request = TurnRequest("be terse", [Message("user", "greet")],
                          history=[Message("user", "before"), Message("assistant", "ok")])
    ask = repair.follow_up(request, "the reply", "fix these")
    assert [m.content for m in ask.history] == ["before", "ok", "greet", "the reply"]
    assert ask.new_input == [Message("user", "fix these")] and ask.task == "repair"
    assert ask.instructions == "be terse" and request.task == "edit"


def test_a_right_answer_replaces_the_missed_hunk(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    base = content_hash(FILE.encode())
    ops = [Modify("a.py", [FITS, WRONG], base)]
    found = repair.survey(root, ops)
    answer = ("```diff\n--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n def greet(name):\n"
              "-    return 'hello ' + name\n+    return f'hello {name}'\n```\n")
    out = repair.merge(root, ops, found.misses, answer)
    assert out.fixed and out.verdict == "fixed" and out.lines() == ["a.py hunk 2: fixed"]
    op = out.ops[0]
    assert sorted(h.lines for h in op.hunks) == sorted([RIGHT.lines, FITS.lines])
    assert out.ops[0].base_hash == base
    assert repair.reply_form(found, out) == Form.REPAIRED


def test_an_answer_that_still_does_not_fit_or_holds_no_diff_is_refused(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    ops = [Modify("a.py", [WRONG])]
    found = repair.survey(root, ops)
    wrong = repair.merge(root, ops, found.misses, "--- a/a.py\n+++ b/a.py\n@@ -1,1 +1,1 @@\n"
                                                  "-def greet(person):\n+def hi(person):\n")
    assert not wrong.ops and wrong.verdict == "refused"
    assert wrong.mended[0].cause.startswith("still does not apply: ")
    assert "its lines are not in the file" in wrong.mended[0].cause
    prose = repair.merge(root, ops, found.misses, "Sorry, I cannot see the file.")
    assert not prose.ops and prose.mended[0].cause == "the answer held no diff of those hunks"
    other = repair.merge(root, ops, found.misses,
                         "--- a/b.py\n+++ b/b.py\n@@ -1,1 +1,1 @@\n-a\n+b\n")
    assert other.mended[0].cause == "the answer has no hunk for a.py"
    assert repair.reply_form(found, wrong) == Form.REFUSED
    assert repair.reply_form(found, None) == Form.REFUSED


def test_an_answer_with_more_hunks_takes_the_missed_ones_place(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    ops = [Modify("a.py", [WRONG, FITS])]
    found = repair.survey(root, ops)
    answer = ("--- a/a.py\n+++ b/a.py\n@@ -1,1 +1,1 @@\n-def greet(name):\n+def greet(who):\n"
              "@@ -2,1 +2,1 @@\n-    return 'hello ' + name\n+    return 'hello ' + who\n")
    out = repair.merge(root, ops, found.misses, answer)
    assert out.fixed
    assert [h.lines[0] for h in out.ops[0].hunks] == ["-def greet(name):",
                                                     "-    return 'hello ' + name",
                                                     " def unused():"]


def test_the_form_takes_the_engines_loose_placement() -> None:
    assert form_of(fits=True, placed_loosely=False, repaired=False) == Form.AS_SENT
    assert form_of(fits=True, placed_loosely=True, repaired=False) == Form.TOLERANCE
    assert form_of(fits=True, placed_loosely=True, repaired=True) == Form.REPAIRED
    assert form_of(fits=False, placed_loosely=False, repaired=True) == Form.REFUSED
    loose = SimpleNamespace(placement=SimpleNamespace(loose=True))
    assert repair.placed_loosely(loose) is True  # type: ignore[arg-type]
    assert repair.placed_loosely(SimpleNamespace(placement=None)) is False  # type: ignore[arg-type]
    assert repair.placed_loosely(RIGHT) is False


def test_a_fifo_the_reply_names_is_never_read(tmp_path: Path) -> None:
    import os

    os.mkfifo(tmp_path / "pipe")  # opening it for reading would block for ever
    found = repair.survey(tmp_path, [Modify("pipe", [Hunk(1, 1, 1, 1, ["-a", "+b"])])])
    assert not found.misses and "not a regular file" in found.other_problem


# ---- answers that hold more (or other) hunks than were missed --------------------------------

TWICE = "a = 0\nfoo()\nbar()\nb = 1\nfoo()\nbar()\nc = 2\nd = 3\ne = 4\n"
ADD_BAZ = Hunk(2, 2, 2, 3, [" foo()", " bar()", "+baz()"])  # fits (at its @@ line)
E_WRONG = Hunk(8, 2, 9, 2, [" d = 3", "-e = 5 NOT THERE", "+e = 5"])
E_RIGHT = "@@ -8,2 +9,2 @@\n d = 3\n-e = 4\n+e = 5\n"


def _written(root: Path, op: Modify) -> str:
    from spark_pair.edits.apply import apply_hunks

    return apply_hunks((root / op.path).read_text(), op.hunks, op.path)


def test_a_whole_diff_resent_writes_the_fitting_hunk_once(tmp_path: Path) -> None:
    (tmp_path / "r.txt").write_text(TWICE)
    ops = [Modify("r.txt", [ADD_BAZ, E_WRONG])]
    found = repair.survey(tmp_path, ops)
    assert [m.hunk_index for m in found.misses] == [1]
    answer = ("Here is the corrected diff:\n```diff\n--- a/r.txt\n+++ b/r.txt\n"
              "@@ -2,2 +2,3 @@\n foo()\n bar()\n+baz()\n" + E_RIGHT + "```\n")
    out = repair.merge(tmp_path, ops, found.misses, answer)
    assert out.verdict == "fixed"
    assert len(out.ops[0].hunks) == 2
    assert _written(tmp_path, out.ops[0]) == TWICE.replace("bar()\n", "bar()\nbaz()\n", 1
                                                           ).replace("e = 4", "e = 5")
    assert out.lines() == ["r.txt hunk 2: fixed", "r.txt answer hunk 1 (at line 2) repeats "
                           "hunk 1, which was not asked about: not written"]


def test_an_extra_hunk_or_file_in_the_answer_is_never_written(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    (root / "b.txt").write_text("keep me\n")
    ops = [Modify("a.py", [WRONG])]
    found = repair.survey(root, ops)
    answer = ("--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n def greet(name):\n"
              "-    return 'hello ' + name\n+    return f'hello {name}'\n"
              "@@ -5,2 +5,2 @@\n def unused():\n-    pass\n+    print('EXTRA')\n"
              "--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-keep me\n+SNEAKY\n")
    out = repair.merge(root, ops, found.misses, answer)
    assert out.verdict == "fixed" and list(out.ops) == [0]
    assert [h.lines for h in out.ops[0].hunks] == [RIGHT.lines]
    assert "EXTRA" not in _written(root, out.ops[0])
    assert out.ignored == ["b.txt: not asked about, not written",
                           "a.py answer hunk 2 (at line 5) replaces no hunk that was asked "
                           "about: not written"]


def test_a_resent_fitting_hunk_changed_is_not_taken_for_the_missed_one(tmp_path: Path) -> None:
    (tmp_path / "r.txt").write_text(TWICE)
    ops = [Modify("r.txt", [ADD_BAZ, E_WRONG])]
    found = repair.survey(tmp_path, ops)
    answer = ("--- a/r.txt\n+++ b/r.txt\n@@ -2,2 +2,3 @@\n foo()\n bar()\n+qux()\n"
              + E_RIGHT)
    out = repair.merge(tmp_path, ops, found.misses, answer)
    assert out.verdict == "fixed"
    assert "qux" not in _written(tmp_path, out.ops[0])
    assert out.ignored == ["r.txt answer hunk 1 (at line 2) changes hunk 1, which was not "
                           "asked about: not written"]


def test_an_answer_with_no_hunk_near_the_missed_one_mends_nothing(tmp_path: Path) -> None:
    (tmp_path / "r.txt").write_text(TWICE)
    ops = [Modify("r.txt", [E_WRONG])]
    found = repair.survey(tmp_path, ops)
    out = repair.merge(tmp_path, ops, found.misses,
                       "--- a/r.txt\n+++ b/r.txt\n@@ -1,1 +1,1 @@\n-a = 0\n+a = 1\n")
    assert not out.ops and out.verdict == "refused"
    assert out.mended[0].cause == "the answer has no hunk in its place"
    assert out.ignored[0].endswith("replaces no hunk that was asked about: not written")
