"""A hostile error page never outlasts --timeout, Ctrl-C or SIGTERM: its excerpt is linear and
cut, its body is read only so far, and a step that holds the event loop anyway is ended by the
run's watchdog. The server is a real process on 127.0.0.1 (tests/support/error_page_server.py)."""

from __future__ import annotations

import re
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.runs import A_PY, check_schema, cli, env_for, lines_of, make_repo, tree

from spark_pair.base.errors import MAX_EXCERPT_INPUT, ServerError, excerpt, strip_tags
from spark_pair.base.exitcodes import ExitCode
from spark_pair.protocol import errors_map

SERVER = Path(__file__).parents[1] / "support" / "error_page_server.py"
# the tag regex excerpts used: unclosed `<!--` (or `<script`) made it quadratic
OLD_TAGS = re.compile(r"<(script|style)\b.*?</\1\s*>|<!--.*?-->|<[^>]*>", re.I | re.S)
PIECES = ["<", ">", "<!--", "-->", "<script", "</script>", "</SCRIPT \n>", "<style", "</style>",
          "<STYLE", "<scripts", "a", " ", "-", "s", "_", "é", "x>", "&amp;"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=16))
def test_tags_are_stripped_as_the_regex_did(pieces: list[str]) -> None:
    text = "".join(pieces)
    assert strip_tags(text) == OLD_TAGS.sub(" ", text)


def test_a_page_of_unclosed_comments_is_an_excerpt_of_its_start() -> None:
    page = "<html><body><h1>Bad gateway</h1><p>try later" + "<!--" * 300_000
    shown = excerpt(page, 60, text_only=True)
    assert shown.startswith("Bad gateway try later<!--<!--") and shown.endswith(" …")


def test_a_cut_body_never_shows_part_of_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the start of a body is looked at; a key cut there is left out whole (the part
    would no longer be found to redact)."""
    key = "zz9-odd-shaped-secret-value"  # not key-like: only the known key finds it
    monkeypatch.setenv("SPARK_PAIR_API_KEY", key)
    tags = "<i>" * ((MAX_EXCERPT_INPUT - 10) // 3)  # text nowhere before the key
    shown = excerpt(tags + " " + key + " and the rest", 300, text_only=True)
    assert not any(key[:n] in shown for n in range(4, len(key) + 1)), shown


def test_a_huge_character_reference_or_nesting_is_no_internal_error() -> None:
    assert "x" in excerpt("&#" + "9" * 5000 + "; <b>x</b>", text_only=True)
    err = errors_map.error_from_response(502, "[" * 100_000, "http://h/v1/responses")
    assert isinstance(err, ServerError) and "[[[" in err.message


@pytest.fixture
def page(request: pytest.FixtureRequest) -> Iterator[str]:
    """The base URL of a server answering every request with a 502 page of 800 KB of
    unclosed comments (param: the piece, the count)."""
    piece, count = getattr(request, "param", ("<!--", 200_000))
    proc = subprocess.Popen([sys.executable, str(SERVER), "502", str(count), piece, "120"],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        yield f"http://127.0.0.1:{proc.stdout.readline().strip()}"
    finally:
        proc.kill()
        proc.wait(timeout=10)
        assert proc.stdout is not None
        proc.stdout.close()


def wire_env(home: Path, base_url: str) -> dict[str, str]:
    return env_for(home, SimpleNamespace(base_url=base_url))  # type: ignore[arg-type]


def _sigint_default() -> None:  # as from a terminal (a suite in the background ignores it)
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize("transport", ["responses", "chat", "auto"])
def test_a_hostile_error_page_ends_at_the_timeout(tmp_path: Path, page: str,
                                                  transport: str) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": A_PY})
    t0 = time.monotonic()
    res = subprocess.run(cli() + ["run", "edit", "--json", "--timeout", "2", "--transport",
                                   transport], cwd=repo, env=wire_env(tmp_path / "home", page),
                         capture_output=True, text=True, timeout=60)
    took = time.monotonic() - t0
    assert res.returncode == ExitCode.TIMEOUT, res.stderr
    assert took < 2 + 1.5, took  # (before: minutes, past Ctrl-C and SIGTERM too)
    lines = lines_of(res.stdout)
    check_schema(lines)
    assert lines[-1]["status"] == "cancelled" and "Traceback" not in res.stderr


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_ends_a_run_against_a_hostile_page(tmp_path: Path, page: str, sig: int
                                                    ) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": A_PY})
    proc = subprocess.Popen(cli() + ["run", "edit", "--json", "--transport", "responses"],
                            cwd=repo, env=wire_env(tmp_path / "home", page), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=_sigint_default)
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 30)  # the run began (its first
        first = proc.stdout.readline() if ready else ""  # line), however slow the start-up
        time.sleep(1.0)  # the first answers are in: the page is being read, cut or retried
        proc.send_signal(sig)
        t0 = time.monotonic()
        out, err = proc.communicate(timeout=30)
        out = first + out
    finally:
        proc.kill()
    took = time.monotonic() - t0
    assert proc.returncode == ExitCode.INTERRUPTED, err
    assert took < 1.5, took
    lines = lines_of(out)
    check_schema(lines)
    assert lines[-1]["status"] == "cancelled" and "Traceback" not in err


HOG = """
import sys
from spark_pair.protocol import errors_map
def body_excerpt(body, limit=200):  # a step that never gives the event loop back
    print("hogging", file=sys.stderr, flush=True)
    while True:
        pass
errors_map.body_excerpt = body_excerpt
from spark_pair.cli.main import main
main()
"""


def _hog(repo: Path, home: Path, page: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", HOG, "run", "edit", "--json", "--apply",
                             "--transport", "responses", *args], cwd=repo, env=wire_env(home, page),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=_sigint_default)


def _hogging(proc: subprocess.Popen[str]) -> None:
    assert proc.stderr is not None
    deadline = time.monotonic() + 30
    for line in proc.stderr:
        if "hogging" in line or time.monotonic() > deadline:
            return


def test_the_deadline_ends_a_run_whose_loop_is_held(tmp_path: Path, page: str) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": A_PY})
    t0 = time.monotonic()
    proc = _hog(repo, tmp_path / "home", page, "--timeout", "2")
    try:
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    took = time.monotonic() - t0
    assert proc.returncode == ExitCode.TIMEOUT, err
    assert took < 2 + 1.5, took
    lines = lines_of(out)
    check_schema(lines)
    assert lines[-1]["status"] == "cancelled" and "within --timeout 2 s" in err
    assert tree(repo) == {"a.py": A_PY.encode()}


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_ends_a_run_whose_loop_is_held(tmp_path: Path, page: str, sig: int) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": A_PY})
    proc = _hog(repo, tmp_path / "home", page)
    try:
        _hogging(proc)
        time.sleep(0.2)
        t0 = time.monotonic()
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=30)
        took = time.monotonic() - t0
    finally:
        proc.kill()
    assert proc.returncode == ExitCode.INTERRUPTED, err
    assert took < 1.5, took
    lines = lines_of(out)
    check_schema(lines)
    word = "terminated (SIGTERM)" if sig == signal.SIGTERM else "interrupted (Ctrl-C)"
    assert lines[-1]["status"] == "cancelled" and lines[-1]["message"] == word
