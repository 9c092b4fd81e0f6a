"""The fix loop's rules: the instruction a failed check becomes, and which step comes next."""

from __future__ import annotations

from spark_pair.base.errors import add_secret
from spark_pair.session.fixloop import (
    CHECK_FENCE,
    Escalate,
    Loop,
    Step,
    clean_output,
    fix_instruction,
    round_model,
    tail_within,
)
from spark_pair.sim.replies import check_output
from spark_pair.workspace.checkrun import CheckResult


def failed(output: str, **kw) -> CheckResult:
    return CheckResult("pytest -q", kw.pop("exit_code", 1), 2.0, output, **kw)


def test_the_instruction_carries_the_tail_within_its_budget() -> None:
    output = "".join(f"line {i}\n" for i in range(5000)) + "E   AssertionError: 1 != 2\n"
    text = fix_instruction(failed(output), budget_tokens=200)
    assert "AssertionError: 1 != 2" in text and "line 4999" in text and "line 0\n" not in text
    assert "earlier lines left out" in text and "exit code 1" in text
    assert len(text) < 200 * 4 + 600
    assert check_output(text).endswith("E   AssertionError: 1 != 2")  # as the sim reads it
    assert f"```{CHECK_FENCE}\n" in text


def test_one_long_line_keeps_its_end() -> None:
    shown, left = tail_within("x" * 10_000 + "END", 10)
    assert shown.endswith("END") and len(shown) == 40 and left == 0


def test_the_key_escapes_and_fences_never_reach_the_model() -> None:
    add_secret("sk-fixloop-secret-0123")
    raw = ("token sk-fixloop-secret-0123\n\x1b[31mFAILED\x1b[0m test_a\n"
           "progress 10%\rprogress 100%\n```\n")
    text = clean_output(raw)
    assert "sk-fixloop-secret-0123" not in text and "FAILED test_a" in text
    assert "\x1b" not in text and "progress 100%" in text and "10%" not in text
    assert "```" not in text
    assert "sk-fixloop-secret-0123" not in fix_instruction(failed(raw))


def test_a_hang_and_a_start_failure_are_named() -> None:
    assert "did not finish in 300 s" in fix_instruction(
        CheckResult("pytest", None, 300.0, "", timed_out=True))
    assert "could not start" in fix_instruction(
        CheckResult("nope", None, 0.0, "", error="No such file"))


def test_headless_sends_only_the_last_round_to_the_stronger_model() -> None:
    models = [round_model(i, 2, "fast", "strong", True) for i in range(3)]
    assert models == ["fast", "fast", "strong"]
    assert round_model(2, 2, "fast", "strong", False) == "fast"
    assert round_model(2, 2, "fast", "", True) == "fast"


def test_rounds_then_escalation_as_configured() -> None:
    auto = Loop(2, Escalate.AUTO, "strong")
    assert auto.after_check(False) == Step.FIX and auto.next_round(Step.FIX) == 1
    assert auto.after_check(False) == Step.FIX and auto.next_round(Step.FIX) == 2
    assert auto.after_check(False) == Step.ESCALATE and auto.next_round(Step.ESCALATE) == 3
    assert auto.after_check(False) == Step.STOP  # escalated once per task
    assert auto.after_check(True) == Step.GREEN

    ask = Loop(1, Escalate.ASK, "strong")
    assert ask.after_check(False) == Step.FIX
    ask.next_round(Step.FIX)
    assert ask.after_check(False) == Step.ASK
    assert ask.after_check(False) == Step.STOP  # asked once
    assert Loop(0, Escalate.OFF, "strong").after_check(False) == Step.STOP
    assert Loop(0, Escalate.AUTO, "").after_check(False) == Step.STOP  # no stronger model


def test_two_rejections_with_a_reason_escalate() -> None:
    loop = Loop(2, Escalate.AUTO, "strong")
    assert loop.after_rejection(False) == Step.STOP
    assert loop.after_rejection(True) == Step.STOP
    assert loop.after_rejection(True) == Step.ESCALATE


def test_a_reply_cut_by_the_window_not_by_max_tokens_escalates() -> None:
    from spark_pair.base.errors import IncompleteReply
    from spark_pair.protocol.errors_map import incomplete
    from spark_pair.session.fixloop import window_full

    by_window = incomplete("u", "length", max_tokens=4096, output_tokens=75)
    at_limit = incomplete("u", "length", max_tokens=4096, output_tokens=4096)
    filtered = incomplete("u", "content_filter", max_tokens=4096, output_tokens=75)
    assert window_full(by_window)
    assert not window_full(at_limit) and not window_full(filtered)
    assert not window_full(IncompleteReply("cut mid-hunk")) and not window_full(None)
    loop = Loop(2, Escalate.AUTO, "strong")
    assert loop.after_cut() == Step.ESCALATE
    assert Loop(2, Escalate.OFF, "strong").after_cut() == Step.STOP
