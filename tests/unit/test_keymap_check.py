"""A [keys] table checked before the app takes it: a remap onto a key another binding acting at
the same time already has is refused (both named), the others are taken."""

from __future__ import annotations

from spark_pair.ui.bindings import Clash, check_keymap, clash_text, keys_in_effect


def test_a_remap_onto_an_app_key_is_refused() -> None:
    for key, other in (("ctrl+q", "app.quit"), ("f1", "app.help"),
                       ("ctrl+p", "the command palette")):
        check = check_keymap({"review.accept": key})
        assert check.accepted == {} and check.clashes == [Clash("review.accept", key, other)]


def test_an_app_key_remapped_onto_a_key_of_a_screen_or_pane_is_refused() -> None:
    assert check_keymap({"app.help": "alt+a"}).clashes == [
        Clash("app.help", "alt+a", "review.accept")]
    # under a question only the question's keys act with the app's
    assert check_keymap({"app.quit": "alt+y"}).clashes == [Clash("app.quit", "alt+y",
                                                                 "confirm.yes")]
    assert check_keymap({"review.down": "tab"}).clashes == [Clash("review.down", "tab",
                                                                  "app.next_pane")]


def test_two_remaps_onto_one_key_are_both_refused_and_said_once() -> None:
    keymap = {"review.accept": "f5", "review.reject": "F6, f5"}
    check = check_keymap(keymap)
    assert check.accepted == {}
    assert clash_text(check.clashes, keymap) == (
        "'review.accept' (accept) and 'review.reject' (reject) are both given 'f5'")


def test_keys_free_where_the_binding_acts_are_taken() -> None:
    keymap = {
        "review.accept": "alt+r", "review.reject": "alt+a",  # a swap
        "review.accept_all": "alt+y",  # the question's yes: never up with the review's keys
        "app.stop": "ctrl+x", "prompt.clear_queue": "ctrl+x",  # share escape by default
        "app.help": "f1",  # its own default, which the keys screen's close shares
        "files.toggle": "f5", "prompt.send": "enter",
    }
    check = check_keymap(keymap)
    assert check.clashes == [] and check.accepted == keymap


def test_a_refused_remap_keeps_its_default_which_another_remap_may_then_meet() -> None:
    keymap = {"review.accept": "ctrl+q", "review.reject": "alt+a"}
    check = check_keymap(keymap)
    assert check.clashes == [Clash("review.accept", "ctrl+q", "app.quit"),
                             Clash("review.reject", "alt+a", "review.accept")]
    assert keys_in_effect(keymap)["review.accept"] == "alt+a"
    assert keys_in_effect(keymap)["review.reject"] == "alt+r"


def test_a_key_named_two_ways_is_one_key() -> None:
    keymap = {"review.accept": "ctrl+i"}  # a terminal sends tab for it
    check = check_keymap(keymap)
    assert check.clashes == [Clash("review.accept", "tab", "app.next_pane")]
    assert "'ctrl+i' (the terminal's tab)" in clash_text(check.clashes, keymap)


def test_the_earlier_refusals_stay_and_come_first() -> None:
    check = check_keymap({"review.acept": "f5", "review.accept": "y", "review.reject": "f5"})
    assert check.unknown == ["review.acept"] and check.typed == ["review.accept"]
    assert check.clashes == [] and check.accepted == {"review.reject": "f5"}


def test_a_key_is_taken_as_the_terminal_names_it_however_it_is_spelled() -> None:
    """Textual names a chord one way (alt+shift+a); a binding spelled another way never ran."""
    check = check_keymap({"review.accept_all": "shift+alt+x", "review.reject_all": "alt+Z",
                          "review.pager": "Ctrl+F7", "review.amend": "control+f8",
                          "review.try": "Alt+Q", "review.next": "Alt+Shift+W"})
    assert check.clashes == [] and check.accepted == {
        "review.accept_all": "alt+shift+x", "review.reject_all": "alt+shift+z",
        "review.pager": "ctrl+f7", "review.amend": "ctrl+f8",
        "review.try": "alt+q", "review.next": "alt+shift+w"}  # title case: the style


def test_a_key_spelled_another_way_still_meets_the_binding_that_has_it() -> None:
    keymap = {"review.accept": "shift+alt+a"}  # accept all's alt+shift+a
    check = check_keymap(keymap)
    assert check.clashes == [Clash("review.accept", "alt+shift+a", "review.accept_all")]
    assert "'shift+alt+a' (the terminal's alt+shift+a)" in clash_text(check.clashes, keymap)


def test_ctrl_with_a_capital_is_the_key_a_terminal_sends_for_it() -> None:
    """A terminal sends ctrl+q for ctrl+Q: it is quit's key, refused (before: kept as a key
    no terminal sends, so reject could no longer be pressed at all)."""
    check = check_keymap({"review.reject": "ctrl+Q"})
    assert check.clashes == [Clash("review.reject", "ctrl+q", "app.quit")]
