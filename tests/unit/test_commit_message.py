"""The commit message: the model's reply tidied (no fences or trailers, a subject of at most 72
characters), the plain template when the model cannot be reached, a trailer only when set."""

from __future__ import annotations

import asyncio
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from spark_pair.base.errors import ConnectionFailed
from spark_pair.base.gitcommit import FileState
from spark_pair.session.commit import (
    SUBJECT_MAX,
    CommitPlan,
    diff_text,
    template_message,
    tidy_message,
    with_trailer,
    write_message,
)


def plan(*paths: str, summaries: tuple[str, ...] = ("make greet use an f-string",)
         ) -> CommitPlan:
    p = CommitPlan(Path("."), ["t1"], summaries=list(summaries))
    for path in paths:
        p.files.append(FileState(path, b"new\n", 0o644))
        p.befores[path] = b"old\n"
    return p


def test_fences_trailers_and_a_subject_label_go() -> None:
    reply = ("```text\nSubject: Use an f-string in greet.\n\nReads better.\n"
             "Co-authored-by: Model <m@x.invalid>\nSigned-off-by: Someone <s@x.invalid>\n```")
    assert tidy_message(reply) == "Use an f-string in greet\n\nReads better."


def test_a_long_subject_is_cut_at_a_word() -> None:
    subject = tidy_message("Make " + "the greeting function considerably friendlier " * 3)
    assert len(subject) <= SUBJECT_MAX and subject.endswith("...")
    assert subject.startswith("Make the greeting function considerably friendlier the")
    assert not subject[:-3].endswith(" ")


@given(st.text(max_size=400))
def test_any_reply_gives_a_subject_within_the_limit(reply: str) -> None:
    message = tidy_message(reply)
    assert len(message.split("\n", 1)[0]) <= SUBJECT_MAX
    assert "```" not in message.split("\n", 1)[0]


def test_an_empty_reply_gives_no_message() -> None:
    assert tidy_message("```\n\n```") == ""


def test_the_template_names_the_files_and_what_was_asked() -> None:
    assert template_message(plan("a.py")) == (
        "Update a.py\n\nAsked: make greet use an f-string")
    many = template_message(plan("a.py", "b.py", "c.py", "d.py", "e.py", summaries=()))
    assert many == "Update a.py, b.py, c.py and 2 more"


def test_a_trailer_only_when_configured_and_once() -> None:
    assert with_trailer("Fix it", "") == "Fix it"
    assert with_trailer("Fix it\n", "Assisted-by: spark-pair") == (
        "Fix it\n\nAssisted-by: spark-pair")
    twice = with_trailer(with_trailer("Fix it", "Assisted-by: x"), "Assisted-by: x")
    assert twice.count("Assisted-by") == 1


def test_the_diff_shows_the_change_and_is_cut() -> None:
    text = diff_text(plan("a.py"))
    assert "--- a/a.py\n+++ b/a.py\n" in text and "-old\n+new\n" in text
    assert diff_text(plan("a.py"), limit=10).endswith("[... the rest of the diff is cut]\n")


class _Down:
    """A model client that cannot be reached."""

    def __init__(self) -> None:
        self.asked: list = []

    async def complete_aside(self, request):
        self.asked.append(request)
        raise ConnectionFailed("connection refused (127.0.0.1:9)")


def test_the_template_when_the_model_cannot_be_reached_and_the_request_says_what_it_asks() -> None:
    client = _Down()
    message, why = asyncio.run(write_message(client, plan("a.py"), prompt="fstring please"))
    assert message == template_message(plan("a.py"))
    assert why == "connection refused (127.0.0.1:9)"
    request = client.asked[0]
    assert request.task == "commit-message" and "commit message" in request.instructions
    assert "What was asked: fstring please" in request.new_input[0].content
    assert "+new" in request.new_input[0].content


def test_message_template_asks_the_model_nothing_and_the_trailer_goes_on() -> None:
    from spark_pair.base.config import GitSettings, Settings

    settings = Settings(git=GitSettings(message="template", trailer="Assisted-by: spark-pair"))
    client = _Down()
    message, why = asyncio.run(write_message(client, plan("a.py"), settings=settings))
    assert not client.asked and why is None
    assert message == template_message(plan("a.py")) + "\n\nAssisted-by: spark-pair"


def test_a_preamble_before_the_message_is_dropped() -> None:
    for preamble in ("Here is the commit message:", "Sure! Here's a commit message for the "
                     "change:", "Commit message:", "Below is the proposed message:"):
        reply = f"{preamble}\n\nUse an f-string in greet\n\nReads better."
        assert tidy_message(reply) == "Use an f-string in greet\n\nReads better.", preamble


def test_a_subject_of_one_long_word_is_cut_inside_the_word() -> None:
    subject = tidy_message("feat: " + "a_very_long_identifier" * 5)
    assert len(subject) == SUBJECT_MAX and subject.startswith("feat: a_very_long_identifiera")
    assert subject.endswith("...")


def test_the_templates_body_lines_wrap_at_72() -> None:
    asked = "make greet use an f-string and also " + "rename the helper functions " * 6
    body = template_message(plan("a.py", summaries=(asked,))).split("\n\n", 1)[1]
    assert all(len(line) <= 72 for line in body.splitlines())
    assert len(body.splitlines()) > 1 and body.startswith("Asked: make greet")
    assert " ".join(body.split()) == "Asked: " + " ".join(asked.split())
