"""Automatic context for an instruction that names nothing ("fix the crash when ..."): the
lexical ranking over the words the index keeps (comments, messages, strings, parts of names),
the lines it sends from a large file, the words kept in the cache, and the default budget.
Real files in real git repositories."""

from __future__ import annotations

from pathlib import Path

from support.context import found, make_repo

from spark_pair.base.config import Settings
from spark_pair.workspace.autocontext import AutoContext
from spark_pair.workspace.context import Workspace
from spark_pair.workspace.index import RepoIndex
from spark_pair.workspace.lexical import lexical, terms
from spark_pair.workspace.wordcount import words_of

PAGER = ("import subprocess\n\n\ndef run(cmd):\n"
         "    # the pager may be closed before all output is written\n"
         "    proc = subprocess.Popen(cmd)\n"
         "    raise RuntimeError('pager closed early: output truncated')\n")


def files() -> dict[str, str | bytes]:
    out: dict[str, str | bytes] = {f"src/mod{i}.py": f"def work{i}(output):\n    return output\n"
                                   for i in range(8)}
    out["src/spawn.py"] = PAGER
    out["docs/guide.md"] = "# Guide\n\nThe output goes to the terminal.\n"
    return out


def test_words_of_splits_names_and_keeps_longer_words() -> None:
    got = words_of("def parseHeader(line): # the_raw_header is read\n")
    assert got["header"] == 2 and got["parse"] == 1 and got["read"] == 1
    assert "def" not in got and "the" not in got  # three letters: too short
    assert set(terms("Fix the crash when the pager is closed")) == {"pager", "closed"}


def test_an_instruction_naming_nothing_finds_the_file_by_its_comments_and_messages(
        tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", files())
    got = found(root, "fix the crash when the pager is closed early")
    assert got == {"src/spawn.py": "words: closed early pager"}


def test_a_common_word_alone_chooses_no_file(tmp_path: Path) -> None:
    # "output" is in nine files; "nonsense" in none: one word of two is not enough
    root = make_repo(tmp_path / "r", files())
    assert found(root, "make the output nonsense go away") == {}


def test_the_ranking_prefers_rare_words_and_gives_the_lines_holding_most_of_them(
        tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", files())
    index = RepoIndex(root)
    index.refresh()
    ranked = lexical(root, index, "the pager output is truncated")
    assert ranked[0][0] == "src/spawn.py"
    assert ranked[0][2] == ("output", "pager", "truncated")
    assert ranked[0][3][0] == 7  # the message holding all three words comes first
    assert {rel for rel, *_ in ranked} > {"src/mod0.py", "docs/guide.md"}  # "output" alone
    index.close()


def test_the_words_are_kept_in_the_cache_and_follow_an_edit(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", files())
    cache = tmp_path / "index.sqlite3"
    index = RepoIndex(root, cache)
    index.refresh()
    index.close()
    again = RepoIndex(root, cache)  # a new process: read back, nothing read from disk
    again.refresh()
    assert again.read_count == 0
    assert {p for p, *_ in again.word_counts(["pager"])} == {"src/spawn.py"}
    (root / "src/mod3.py").write_text("# the pager again\n")
    again.update(["src/mod3.py"])
    assert {p for p, *_ in again.word_counts(["pager"])} == {"src/spawn.py", "src/mod3.py"}
    assert again.word_counts(["work"]) and "src/mod3.py" not in {
        p for p, *_ in again.word_counts(["work"])}
    again.close()


def test_a_large_file_goes_as_the_region_of_the_lines_holding_the_words(tmp_path: Path) -> None:
    body = "".join(f"def filler{i}(x):\n    return x + {i}\n\n\n" for i in range(1500))
    big = body + PAGER.split("\n\n\n", 1)[1] + body.replace("filler", "later")
    root = make_repo(tmp_path / "r", {**files(), "src/spawn.py": big})
    settings = Settings()
    assert settings.context.budget_tokens == 7500
    auto = AutoContext(root, map_tokens=settings.context.map_tokens)
    ws = Workspace(root, auto=auto, budget_tokens=settings.context.budget_tokens)
    text = "fix the crash when the pager is closed early"
    plan = ws.plan(text)
    assert plan is not None and plan.found.paths() == ["src/spawn.py"]
    ws.build(text, plan.found.paths(), followup=False)
    ctx = ws.last_context
    assert ctx is not None and "src/spawn.py" in ctx.partial
    message = 6004  # the line of the message in `big` (after 6,000 lines of fillers)
    assert any(a <= message <= b for a, b in ctx.partial["src/spawn.py"])
    assert ctx.tokens <= 7500
    auto.index.close()
