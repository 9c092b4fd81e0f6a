"""Applying hunks and turns: location, conflicts, stale checks, encodings, all-or-nothing."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from support.disk import snapshot

from spark_pair.base.errors import ApplyError, ConflictError, PathRefused, StaleError
from spark_pair.edits.apply import apply_hunks, apply_turn, check_each, check_ops, flag_uncommitted
from spark_pair.edits.journal import Journal
from spark_pair.edits.ops import Create, Delete, Hunk, Modify, Rename, content_hash
from spark_pair.edits.place import reason

TEXT = "".join(f"line {i}\n" for i in range(1, 21))


def hunk(lines, old_start=None, **kw) -> Hunk:
    return Hunk(old_start, None, None, None, list(lines), **kw)


@pytest.fixture
def repo(tmp_path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    return root


@pytest.fixture
def journal(repo, tmp_path) -> Journal:
    return Journal(repo, tmp_path / "data")


# ---- apply_hunks -------------------------------------------------------------------------

def test_wrong_line_numbers_find_the_nearest_match():
    h = hunk([" line 10", "-line 11", "+eleven", " line 12"], old_start=3)
    assert apply_hunks(TEXT, [h]) == TEXT.replace("line 11\n", "eleven\n")


def test_missing_line_numbers_apply_when_the_context_is_unique():
    h = hunk([" line 4", "-line 5", "+five"])
    assert "five\nline 6" in apply_hunks(TEXT, [h])


def test_repeated_context_picks_the_match_nearest_the_stated_position():
    text = "x\nsame\ny\n" * 3
    h = hunk([" same", "-y", "+Y"], old_start=8)
    assert apply_hunks(text, [h]) == "x\nsame\ny\n" * 2 + "x\nsame\nY\n"


def test_equally_near_matches_are_a_conflict_naming_the_hunk():
    with pytest.raises(ConflictError) as err:
        apply_hunks(
            "same\ny\nmid\nmid2\nsame\ny\n", [hunk([" same", "-y", "+Y"], old_start=3)], "f.py"
        )
    assert "f.py" in err.value.message and "same" in err.value.message
    nearer = apply_hunks("same\ny\nmid\nsame\ny\n", [hunk([" same", "-y", "+Y"], old_start=3)])
    assert nearer == "same\ny\nmid\nsame\nY\n"


def test_ambiguous_without_position_is_a_conflict():
    with pytest.raises(ConflictError, match="2 places"):
        apply_hunks("a\nb\na\nb\n", [hunk([" a", "-b", "+c"])], "x.txt")


def test_no_match_is_a_conflict_never_a_guess():
    with pytest.raises(ConflictError, match="not in the file"):
        apply_hunks(TEXT, [hunk([" line 3", "-line 99", "+z"], old_start=3)], "t.txt")


def test_whitespace_only_differences_match_in_a_second_pass_keeping_file_context():
    text = "def f():\n    x = 1\n    return x\n"
    h = hunk([" def f():", "-  x = 1", "+    x = 2", "  return  x"])
    assert apply_hunks(text, [h]) == "def f():\n    x = 2\n    return x\n"


def test_hunks_apply_in_order_and_never_overlap():
    h1 = hunk([" line 1", "-line 2", "+two"], old_start=1)
    h2 = hunk([" line 1", "-line 2", "+again"], old_start=1)  # its text is consumed by h1
    with pytest.raises(ConflictError):
        apply_hunks(TEXT, [h1, h2])
    h3 = hunk([" line 18", "-line 19", "+nineteen"], old_start=18)
    out = apply_hunks(TEXT, [h1, h3])
    assert "two\n" in out and "nineteen\n" in out and out.count("\n") == 20


def test_crlf_file_keeps_crlf():
    text = "a\r\nb\r\nc\r\n"
    assert apply_hunks(text, [hunk([" a", "-b", "+B", "+B2", " c"])]) == "a\r\nB\r\nB2\r\nc\r\n"


def test_final_newline_follows_the_no_newline_flags():
    assert apply_hunks("a\nb", [hunk([" a", "-b", "+b"], no_newline_old=True)]) == "a\nb\n"
    assert apply_hunks("a\nb\n", [hunk([" a", "-b", "+b"], no_newline_new=True)]) == "a\nb"
    both = hunk([" a", "-b", "+c", "+d"], no_newline_old=True, no_newline_new=True)
    assert apply_hunks("a\nb", [both]) == "a\nc\nd"
    assert (
        apply_hunks("a\nb", [hunk(["-a", "+A", " b"])]) == "A\nb"
    )  # untouched end keeps its state


def test_pure_additions_need_a_position():
    assert apply_hunks("a\nb\n", [Hunk(1, 0, 2, 1, ["+x"])]) == "a\nx\nb\n"
    assert apply_hunks("", [Hunk(0, 0, 1, 2, ["+x", "+y"])]) == "x\ny\n"
    with pytest.raises(ConflictError, match="no position"):
        apply_hunks("a\n", [hunk(["+x"])])


def test_lines_without_a_marker_are_a_conflict():
    with pytest.raises(ConflictError, match="marker"):
        apply_hunks("a\n", [hunk(["a"])])


# ---- apply_turn ----------------------------------------------------------------------------

def test_turn_applies_modify_create_delete_rename(repo, journal):
    (repo / "m.py").write_text(TEXT)
    (repo / "d.txt").write_text("bye\n")
    (repo / "r.txt").write_text("move me\n")
    os.chmod(repo / "m.py", 0o755)
    ops = [
        Modify(
            "m.py", [hunk([" line 1", "-line 2", "+two"], old_start=1)], content_hash(TEXT.encode())
        ),
        Create("new/sub/c.txt", "hello\n"),
        Delete("d.txt", content_hash(b"bye\n")),
        Rename("r.txt", "moved/r.txt", [hunk(["-move me", "+moved"])]),
    ]
    done = apply_turn(repo, ops, journal=journal)
    assert sorted(done.changed) == ["d.txt", "m.py", "moved/r.txt", "new/sub/c.txt", "r.txt"]
    assert (repo / "m.py").read_text().startswith("line 1\ntwo\n")
    assert os.stat(repo / "m.py").st_mode & 0o777 == 0o755
    assert (repo / "new/sub/c.txt").read_text() == "hello\n"
    assert not (repo / "d.txt").exists() and not (repo / "r.txt").exists()
    assert (repo / "moved/r.txt").read_text() == "moved\n"
    assert [t.turn_id for t in journal.list_turns()] == [done.turn_id]


@pytest.mark.parametrize("step", ["write", "replace"])
def test_a_failure_midway_rolls_back_every_file(repo, journal, monkeypatch, step):
    """Writing b.txt's new content fails (nothing replaced yet), or replacing b.txt fails
    after a.txt and the new file were replaced: either way every file is as before."""
    (repo / "a.txt").write_text("a\n")
    (repo / "b.txt").write_text("b\n")
    before = snapshot(repo)
    from spark_pair.edits import fsio
    real_create, real_replace, replaced = fsio.create_file, os.replace, []

    def flaky_create(path, data, mode=None):
        if step == "write" and path.name.startswith(".b.txt.sp-tmp-"):
            raise OSError(28, "No space left on device")
        return real_create(path, data, mode)

    def flaky_replace(src, dst):
        if step == "replace" and str(dst).endswith("b.txt"):
            raise OSError(28, "No space left on device")
        real_replace(src, dst)
        replaced.append(Path(dst).name)

    monkeypatch.setattr(fsio, "create_file", flaky_create)
    monkeypatch.setattr(os, "replace", flaky_replace)
    ops = [Modify("a.txt", [hunk(["-a", "+A"])]), Create("dir/new.txt", "n\n"),
           Modify("b.txt", [hunk(["-b", "+B"])])]
    with pytest.raises(ApplyError, match="writing b.txt failed .*No space left") as err:
        apply_turn(repo, ops, journal=journal)
    assert "restored" in err.value.message
    if step == "replace":
        assert {"a.txt", "new.txt"} <= set(replaced)  # midway: these were in place
    assert snapshot(repo) == before
    assert journal.list_turns() == []


def test_conflict_in_one_file_writes_nothing(repo, journal):
    (repo / "a.txt").write_text("a\n")
    (repo / "b.txt").write_text("b\n")
    before = snapshot(repo)
    with pytest.raises(ConflictError, match="b.txt"):
        apply_turn(repo, [Modify("a.txt", [hunk(["-a", "+A"])]), Create("c.txt", "c"),
                          Modify("b.txt", [hunk(["-nope", "+B"])])], journal=journal)
    assert snapshot(repo) == before


def test_stale_file_whose_hunks_still_apply_goes_on_with_a_note(repo, journal):
    (repo / "f.txt").write_text(TEXT.replace("line 20", "changed"))
    op = Modify(
        "f.txt", [hunk([" line 1", "-line 2", "+two"], old_start=1)], content_hash(TEXT.encode())
    )
    done = apply_turn(repo, [op], journal=journal)
    assert any("changed since the request" in n for n in done.notes)
    assert (
        (repo / "f.txt")
        .read_text()
        .endswith("two\n" + "".join(f"line {i}\n" for i in range(3, 20)) + "changed\n")
    )


def test_stale_file_whose_hunks_no_longer_apply_is_refused(repo, journal):
    (repo / "f.txt").write_text(TEXT.replace("line 2\n", "line two\n"))
    op = Modify(
        "f.txt", [hunk([" line 1", "-line 2", "+two"], old_start=1)], content_hash(TEXT.encode())
    )
    with pytest.raises(StaleError, match="f.txt"):
        apply_turn(repo, [op], journal=journal)


def test_delete_of_a_changed_file_is_stale(repo, journal):
    (repo / "f.txt").write_text("new work\n")
    with pytest.raises(StaleError):
        apply_turn(repo, [Delete("f.txt", content_hash(b"old\n"))], journal=journal)
    assert (repo / "f.txt").read_text() == "new work\n"


def test_create_never_overwrites(repo, journal):
    (repo / "f.txt").write_text("keep\n")
    with pytest.raises(ConflictError, match="already exists"):
        apply_turn(repo, [Create("f.txt", "clobber\n")], journal=journal)
    assert (repo / "f.txt").read_text() == "keep\n"


def test_rename_never_overwrites_and_keeps_the_source(repo, journal):
    (repo / "a.txt").write_text("a\n")
    (repo / "b.txt").write_text("b\n")
    with pytest.raises(ConflictError, match="never overwrites"):
        apply_turn(repo, [Rename("a.txt", "b.txt")], journal=journal)
    assert (repo / "a.txt").read_text() == "a\n" and (repo / "b.txt").read_text() == "b\n"


def test_rename_keeps_mode_bits(repo, journal):
    (repo / "run.sh").write_text("echo\n")
    os.chmod(repo / "run.sh", 0o750)
    apply_turn(repo, [Rename("run.sh", "bin/run.sh")], journal=journal)
    assert os.stat(repo / "bin/run.sh").st_mode & 0o777 == 0o750


@pytest.mark.parametrize("raw,encoding", [
    ("héllo\nwörld\n".encode(), "utf-8"),
    (b"\xef\xbb\xbf" + "héllo\nwörld\n".encode(), "utf-8-sig"),
    ("héllo\r\nwörld\r\n".encode("latin-1"), "latin-1"),
])
def test_encoding_and_bom_are_kept(repo, journal, raw, encoding):
    (repo / "f.txt").write_bytes(raw)
    apply_turn(repo, [Modify("f.txt", [hunk([" héllo", "-wörld", "+wörld!"])])], journal=journal)
    out = (repo / "f.txt").read_bytes()
    nl = "\r\n" if b"\r\n" in raw else "\n"
    expected = f"héllo{nl}wörld!{nl}"
    assert out == (b"\xef\xbb\xbf" + expected.encode() if encoding == "utf-8-sig"
                   else expected.encode(encoding))


def test_binary_targets_are_refused(repo, journal):
    (repo / "img.bin").write_bytes(b"PNG\x00\x01\n")
    with pytest.raises(ApplyError, match="binary"):
        apply_turn(repo, [Modify("img.bin", [hunk(["-PNG", "+x"])])], journal=journal)


@pytest.mark.parametrize(
    "bad",
    [
        "/etc/passwd",
        "../x",
        "a/../../x",
        ".git/config",
        "sub/.GIT/hooks/x",
        "a\x00b",
        "CON",
        "dir/nul.txt",
        "",
        "C:/x",
        "a\\..\\b",
        "x/",
        "\x1b]0;PWNED\x07x.py",
        "safe\u202eyp.exe",
        "a\u200fb.py",
        ("d" * 250 + "/") * 20 + "f.py",
    ],
)
def test_hostile_paths_are_refused(repo, journal, bad):
    with pytest.raises(PathRefused) as info:
        apply_turn(repo, [Create(bad, "pwned\n")], journal=journal)
    assert info.value.message.isprintable()  # never raw control or bidi characters


def test_odd_paths_are_shown_escaped_in_summaries_and_diffs():
    from spark_pair.edits.render import render_op

    op = Rename("a\x1b[2J.py", "b\u202e.py", [])
    for text in (op.summary(), render_op(op), render_op(Create("\x07x", "y\n"))):
        assert "\x1b" not in text and "\u202e" not in text and "\x07" not in text
    assert "\\x1b[2J" in op.summary() and "\\u202e" in op.summary()


def test_symlink_leading_outside_is_refused(repo, journal, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (repo / "link").symlink_to(outside)
    (repo / "flink").symlink_to(outside / "f.txt")
    for path in ("link/f.txt", "flink"):
        with pytest.raises(PathRefused, match="symlink"):
            apply_turn(repo, [Create(path, "pwned\n")], journal=journal)
    assert list(outside.iterdir()) == []


def test_check_ops_lists_every_problem_without_writing(repo):
    (repo / "a.txt").write_text("a\n")
    problems = check_ops(repo, [Create("a.txt", "x"), Modify("missing.txt", [hunk(["-a"])]),
                                Create("../out", "x"), Modify("a.txt", [hunk(["-a", "+b"])])])
    assert len(problems) == 3
    assert (repo / "a.txt").read_text() == "a\n"


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"})


def test_flag_uncommitted_marks_modified_and_untracked_deletes(repo):
    git(repo, "init", "-q")
    for name in ("clean.txt", "dirty.txt"):
        (repo / name).write_text("x\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "init")
    (repo / "dirty.txt").write_text("changed\n")
    (repo / "new.txt").write_text("untracked\n")
    ops = [Delete("clean.txt"), Delete("dirty.txt"), Delete("new.txt")]
    flag_uncommitted(repo, ops)
    assert [op.uncommitted for op in ops] == [False, True, True]


def test_blank_context_lines_without_their_space_and_stray_cr_are_tolerated():
    text = "def f():\n\n    return 1\n"
    assert apply_hunks(text, [hunk([" def f():", "", "-    return 1\r", "+    return 2\r"])]) == \
        "def f():\n\n    return 2\n"


def test_two_operations_on_one_file_chain(repo, journal):
    (repo / "f.txt").write_text("a\nb\n")
    apply_turn(
        repo,
        [Modify("f.txt", [hunk(["-a", "+A"])]), Modify("./f.txt", [hunk(["-b", "+B"])])],
        journal=journal,
    )
    assert (repo / "f.txt").read_text() == "A\nB\n"
    journal.undo()
    assert (repo / "f.txt").read_text() == "a\nb\n"


def test_flag_uncommitted_keeps_a_leading_dot_when_the_root_is_a_subfolder(repo):
    git(repo, "init", "-q")
    (repo / "sub").mkdir()
    for name in ("sub/.env", "sub/env"):
        (repo / name).write_text("x\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "init")
    (repo / "sub" / ".env").write_text("SECRET=mine\n")
    ops = [Delete(".env"), Delete("./.env"), Delete("env")]
    flag_uncommitted(repo / "sub", ops)
    assert [op.uncommitted for op in ops] == [True, True, False]


def test_flag_uncommitted_reads_rename_entries_as_two_paths(repo):
    git(repo, "init", "-q")
    for name in ("ab x.txt", "x.txt"):
        (repo / name).write_text("x\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "init")
    git(repo, "mv", "ab x.txt", "n.txt")  # status -z: "R  n.txt\0ab x.txt\0"
    ops = [Delete("x.txt"), Delete("n.txt"), Delete("ab x.txt")]
    flag_uncommitted(repo, ops)
    assert [op.uncommitted for op in ops] == [False, True, False]


def test_a_conflict_names_the_hunk_once_and_shows_its_first_lines_indented():
    long = "x" * 150
    lines = [f" {long}", "-missing", "+new", " tail", " more"]
    with pytest.raises(ConflictError) as info:
        apply_hunks("a\nb\n", [Hunk(3, 4, 3, 4, lines)], "src/a.py")
    first, *rest = info.value.message.splitlines()
    assert first == "src/a.py hunk @@ -3,4 +3,4 @@: its lines are not in the file"
    # the line that is nowhere named, then its text on a line of its own (too long for one)
    assert rest[:2] == ["  line 1 of the hunk (line 3 by its @@ line) is nowhere in the file:",
                        f'  "{long[:75]}…"']
    assert rest[2:4] == ["     " + long[:70] + "…", "    -missing"] and rest[-1] == "    …"
    assert all(len(line) <= 80 for line in rest) and len(rest) == 6
    assert info.value.message.count("missing") == 1


def test_rename_onto_an_existing_file_has_a_hint_about_the_name(repo, journal):
    (repo / "a.txt").write_text("a\n")
    (repo / "b.txt").write_text("b\n")
    with pytest.raises(ConflictError) as info:
        apply_turn(repo, [Rename("a.txt", "b.txt")], journal=journal)
    assert "context" not in info.value.hint and "b.txt" in info.value.hint


def test_check_each_names_the_operation_of_each_problem(repo):
    from spark_pair.edits.apply import check_each

    (repo / "a.txt").write_text("a\n")
    found = check_each(repo, [Modify("a.txt", [hunk(["-a", "+b"])]), Create("a.txt", "x"),
                              Modify("a.txt", [hunk(["-zzz", "+y"])])])
    assert [(i, type(e).__name__) for i, e in found] == [(1, "ConflictError"),
                                                         (2, "ConflictError")]
    assert found[0][1].message == "a.txt already exists; a create never overwrites"
    assert (repo / "a.txt").read_text() == "a\n"


@pytest.mark.parametrize("order", [("x", "x/y"), ("x/y", "x")])
def test_a_file_and_a_folder_of_the_same_name_in_one_turn_is_a_conflict(repo, journal, order):
    before = snapshot(repo)
    ops = [Create(p, "data\n") for p in order]
    assert [i for i, _ in check_each(repo, ops)] == [1]
    with pytest.raises(ConflictError, match="both a file and the folder"):
        apply_turn(repo, ops, journal=journal)
    assert snapshot(repo) == before and not journal.list_turns()


# ---- encodings per line, rollback's temp files, locating in big files, stopping -------------

def test_one_invalid_byte_keeps_a_utf8_file_utf8(repo, journal):
    """New text is UTF-8 in a UTF-8 file with one stray byte; every other byte is untouched."""
    raw = "naïve = 1\n".encode() + b"legacy = '\xff'\n" + "tail = 'ü'\n".encode()
    (repo / "f.py").write_bytes(raw)
    apply_turn(repo, [Modify("f.py", [hunk([" naïve = 1", "+arrow = '→ café'"])])],
               journal=journal)
    out = (repo / "f.py").read_bytes()
    assert out == "naïve = 1\narrow = '→ café'\n".encode() + b"legacy = '\xff'\n" + \
        "tail = 'ü'\n".encode()
    journal.undo()
    assert (repo / "f.py").read_bytes() == raw


def test_a_line_with_an_undecodable_byte_matches_as_the_model_saw_it(repo, journal):
    """The model is shown U+FFFD for the byte; as context the line is kept byte for byte."""
    raw = "é = 1\n".encode() + b"x = '\xe9t\xe9'\n" + b"y = 2\n"
    (repo / "f.py").write_bytes(raw)
    shown = raw.decode("utf-8", "replace").splitlines()[1]
    apply_turn(repo, [Modify("f.py", [hunk([" " + shown, "-y = 2", "+y = 'ü'"])])],
               journal=journal)
    assert (repo / "f.py").read_bytes() == "é = 1\n".encode() + b"x = '\xe9t\xe9'\n" + \
        "y = 'ü'\n".encode()


def test_rollback_keeps_a_user_file_that_has_the_temp_name_shape(repo, journal, monkeypatch):
    (repo / "a.txt").write_text("a\n")
    (repo / "b.txt").write_text("b\n")
    (repo / ".a.txt.sp-tmp-0123abcd").write_text("the user's own file\n")
    before = snapshot(repo)
    real = os.replace

    def flaky(src, dst):
        if str(dst).endswith("b.txt"):
            raise OSError(28, "No space left on device")
        real(src, dst)

    monkeypatch.setattr(os, "replace", flaky)
    with pytest.raises(ApplyError, match="No space left"):
        apply_turn(repo, [Modify("a.txt", [hunk(["-a", "+A"])]),
                          Modify("b.txt", [hunk(["-b", "+B"])])], journal=journal)
    assert snapshot(repo) == before  # the look-alike is still there, a.txt is restored


def test_location_among_many_identical_lines_is_exact():
    """A file of identical lines: the nearest match wins, ties and no-matches are conflicts."""
    text = "x\n" * 5000 + "y\n" + "x\n" * 5000
    near = hunk([" x"] * 300 + ["-y", "+Y"], old_start=4702)
    assert apply_hunks(text, [near]) == "x\n" * 5000 + "Y\n" + "x\n" * 5000
    with pytest.raises(ConflictError, match="not in the file"):
        apply_hunks(text, [hunk([" x"] * 300 + ["-z"])])
    with pytest.raises(ConflictError, match=r"matches lines 5 and 7 equally well"):
        apply_hunks("p\nq\n" * 1000, [hunk([" p", " q"] * 100 + [" p", "-q"], old_start=6)])
    with pytest.raises(ConflictError, match=r"matches 5 or more places \(lines 1, 2, 3, 4, 5\)"):
        apply_hunks("x\n" * 3000, [hunk([" x"] * 300 + ["-x"])])
    two = "a\nb\nc\na\nb\nc\n"
    with pytest.raises(ConflictError, match=r"matches 2 places \(lines 1, 4\)"):
        apply_hunks(two, [hunk([" a", "-b"])])


@pytest.mark.parametrize("chars", [None, 2])
def test_location_agrees_with_a_plain_scan(chars, monkeypatch):
    """The indexed search finds what a scan of every start position finds, in both key modes,
    also when lines outnumber characters and share them (checked line by line then)."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from spark_pair.edits import locate
    from spark_pair.edits.locate import Locator, exact, normalised

    if chars is not None:
        monkeypatch.setattr(locate, "_CHARS", chars)

    def scan(lines, old, lo):
        for key in (exact, normalised):
            want = [key(x) for x in old]
            for i in range(lo, len(lines) - len(old) + 1):
                if [key(x) for x in lines[i:i + len(old)]] == want:
                    return i
        return None

    line = st.sampled_from(["a", "b", " a", "a ", "", "c  d", "c d"])

    @settings(max_examples=300, deadline=None)
    @given(st.lists(line, max_size=30), st.lists(line, min_size=1, max_size=4),
           st.integers(0, 30))
    def check(lines, old, lo):
        assert Locator(lines).first(old, lo) == scan(lines, old, lo)

    check()


def test_stop_ends_planning_before_anything_is_written(repo, journal):
    from spark_pair.base.errors import Cancelled

    (repo / "a.txt").write_text("a\n")
    before = snapshot(repo)
    with pytest.raises(Cancelled):
        apply_hunks("a\n", [hunk(["-a", "+b"])], stop=lambda: True)
    with pytest.raises(Cancelled):
        check_each(repo, [Modify("a.txt", [hunk(["-a", "+A"])])], stop=lambda: True)
    with pytest.raises(Cancelled):
        apply_turn(repo, [Modify("a.txt", [hunk(["-a", "+A"])])], journal=journal,
                   stop=lambda: True)
    assert snapshot(repo) == before and journal.list_turns() == []


def test_a_lone_surrogate_in_the_reply_is_refused_never_written_as_a_byte(repo, journal):
    (repo / "f.txt").write_text("a\n")
    before = snapshot(repo)
    for op in (Create("new.txt", "x = '\udcff'\n"), Modify("f.txt", [hunk(["-a", "+\udc80"])])):
        with pytest.raises(ApplyError, match="lone surrogate"):
            apply_turn(repo, [op], journal=journal)
    assert snapshot(repo) == before


def test_a_conflict_names_the_first_line_of_the_hunk_that_is_nowhere_in_the_file():
    text = "".join(f"line {i}\n" for i in range(1, 21))
    lines = [" line 4", " line 5", " line 6", " line 7", " line 7.5 NOT THERE", "-line 8",
             "+LINE 8", " line 9", " line 10"]
    for exact in (False, True):
        with pytest.raises(ConflictError) as info:
            apply_hunks(text, [Hunk(4, 8, 4, 8, lines)], "a.txt", exact=exact)
        first, named, quoted = info.value.message.splitlines()[:3]
        assert first.endswith(": its lines are not in the file"), first
        assert named == "  line 5 of the hunk (line 8 by its @@ line) is nowhere in the file:"
        assert quoted == '  "line 7.5 NOT THERE"'
        assert reason(info.value) == f"{first}; {named.strip()} {quoted.strip()}"  # (one line)
    # without a position, only its number in the hunk; every line there, just not together
    with pytest.raises(ConflictError) as info:
        apply_hunks(text, [Hunk(None, None, None, None, [" line 2", "-line 9", "+x"])], "a.txt",
                    exact=True)
    assert "\n  each of its lines is in the file, but not in this order\n" in info.value.message
    with pytest.raises(ConflictError) as info:
        apply_hunks(text, [Hunk(None, None, None, None, [" line 2", "-gone", "+x"])], "a.txt")
    assert '\n  line 2 of the hunk is nowhere in the file: "gone"\n' in info.value.message
