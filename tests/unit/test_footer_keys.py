"""Which keys the footer keeps when the line is short: the most important first, ? always."""

from __future__ import annotations

from textual.binding import Binding

from spark_pair.ui.bindings import APP, REVIEW, key_label
from spark_pair.ui.footer_keys import Shown, fit, grouped, keys_shown
from spark_pair.ui.screens.main import MainScreen
from spark_pair.ui.widgets.prompt import Prompt
from spark_pair.ui.widgets.review import ReviewPane


def display(binding: Binding) -> str:
    return {"ctrl+r": "^r", "ctrl+e": "^e", "ctrl+q": "^q", "ctrl+p": "^p", "question_mark": "?",
            "escape": "esc", "enter": "⏎"}.get(binding.key, key_label(binding.key))


NO_REVIEW = tuple(b.id for b in REVIEW if isinstance(b, Binding) and b.id)  # no turn: hidden


PALETTE = Binding("ctrl+p", "command_palette", "palette")
QUIT, HELP = APP  # the app's keys: quit, and f1 for the keys screen (it works anywhere)


def active(*owners: list[Binding], hidden: tuple[str, ...] = ()
           ) -> list[tuple[Binding, bool, str]]:
    """The screen's active bindings: those whose check_action says False are not there."""
    return [(b, True, "") for bs in owners for b in bs if b.id not in hidden]


def labels(keys: list[Shown]) -> list[str]:
    return [f"{k.lead}{k.display} {k.label}" for k in keys]


def test_the_review_pane_keys_come_first_in_the_order_that_matters() -> None:
    left, right = keys_shown(active(ReviewPane.BINDINGS, MainScreen.BINDINGS, [QUIT, HELP],
                                    hidden=("app.stop", "prompt.send")),
                             display, PALETTE)
    assert labels(left)[:10] == ["alt+a accept", "alt+r reject", "alt+A all", "alt+R reject rest",
                                 "alt+d del/rename", "alt+c reject+why", "alt+e edit", "alt+t try",
                                 "alt+j/alt+k hunk", "alt+n/alt+p file"]  # deciding before moving
    assert labels(right) == ["f1 keys", "^p palette"]
    shown, gap = fit(left, right, 80)  # short labels, one column, alt+ said once
    assert labels(shown) == ["alt+ a yes", "r no", "A all", "R rest", "d del/ren", "c why",
                             "e edit", "t try"]  # every deciding key at 80 columns
    width = sum(k.width for k in shown) + gap * (len(shown) - 1) + sum(k.width for k in right)
    assert width <= 80 - 3
    wide, gap = fit(left, right, 300)
    assert labels(wide) == labels(left) and gap == 2


def test_while_streaming_escape_comes_first_and_f1_opens_the_help(
        ) -> None:
    # (the prompt's tab queues only while a turn runs, its escape clears a queue only while
    # nothing streams: here neither)
    left, right = keys_shown(active(Prompt.BINDINGS, MainScreen.BINDINGS, [QUIT, HELP],
                                    hidden=("prompt.queue", "prompt.clear_queue",
                                            *NO_REVIEW)),
                             display, PALETTE)
    assert labels(left)[:3] == ["esc stop", "⏎ send", "tab pane"]  # the prompt: no review keys
    assert labels(right) == ["f1 keys", "^p palette"]


def test_with_text_typed_while_a_turn_runs_tab_queues_instead_of_moving_on() -> None:
    left, _ = keys_shown(active(Prompt.BINDINGS, MainScreen.BINDINGS, [QUIT, HELP],
                                hidden=("prompt.clear_queue", *NO_REVIEW)), display,
                         PALETTE)
    assert labels(left).index("tab queue") == labels(left).index("⏎ send") + 1
    assert labels(left).index("tab queue") < labels(left).index("tab pane")  # (one key: the
    # prompt's binding is the one in effect while it says so; the screen's stands behind it)


def test_keys_that_do_not_fit_are_left_out_whole_from_the_least_important() -> None:
    left = [Shown("a", "a", "x" * 30, True, ""), Shown("b", "b", "short", True, "")]
    right = [Shown("?", "?", "keys", True, "")]
    assert fit(left, right, 30) == ([], 2)  # the most important does not fit: none after it
    assert fit(list(reversed(left)), right, 30)[0] == [left[1]]


def test_a_run_of_chords_says_its_modifier_once_and_other_keys_break_the_run() -> None:
    keys = [Shown("alt+a", "alt+a", "yes", True, ""), Shown("alt+j", "alt+j/alt+k", "hunk", True,
                                                           ""),
            Shown("escape", "esc", "stop", True, ""), Shown("alt+t", "alt+t", "try", True, "")]
    assert [(k.lead, k.display) for k in grouped(keys)] == [
        ("alt+ ", "a"), ("", "j/k"), ("", "esc"), ("alt+ ", "t")]
    assert grouped(keys)[0].width == len("alt+ a yes")
