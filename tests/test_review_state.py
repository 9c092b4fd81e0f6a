"""The review model: what each key decides, and when a decision goes to the session."""

from __future__ import annotations

from spark_pair.approval import Action
from spark_pair.edits.ops import Create, Delete, Hunk, Modify, Rename
from spark_pair.ui.review_state import Item, Mark, Refusal, Review


def hunk(n: int) -> Hunk:
    return Hunk(n, 1, n, 1, [f"-old{n}", f"+new{n}"])


def review() -> Review:
    r = Review()
    r.propose(0, Modify("a.py", [hunk(1), hunk(5), hunk(9)]))
    r.propose(1, Create("new.py", "x\n"))
    r.propose(2, Delete("old.py"))
    r.propose(3, Rename("b.py", "c.py"))
    return r


def test_items_are_hunks_of_a_modify_and_whole_other_operations() -> None:
    assert review().items() == [Item(0, 0), Item(0, 1), Item(0, 2), Item(1), Item(2), Item(3)]


def test_a_modify_is_sent_once_every_hunk_is_decided_with_the_accepted_subset() -> None:
    r = review()
    assert r.accept() == ([], None)  # hunk 0: not sent yet
    assert r.cursor == Item(0, 1)  # moved to the next undecided item
    assert r.reject() == ([], None)
    sent, _ = r.accept()
    assert sent == [(0, sent[0][1])] and sent[0][1].action is Action.ACCEPT
    assert sent[0][1].hunks == (0, 2)


def test_every_hunk_rejected_is_a_reject_and_all_accepted_is_the_whole_operation() -> None:
    r = review()
    r.reject(), r.reject()
    sent, _ = r.reject()
    assert sent[0][1].action is Action.REJECT
    r = review()
    r.accept(), r.accept()
    sent, _ = r.accept()
    assert sent[0][1].action is Action.ACCEPT and sent[0][1].hunks is None


def test_a_never_accepts_a_delete_or_a_rename_but_confirm_does() -> None:
    r = review()
    r.cursor = Item(2)
    assert r.accept() == ([], Refusal.NEEDS_CONFIRM)
    assert r.entries[2].mark is Mark.UNDECIDED
    sent, _ = r.confirm()
    assert sent[0][0] == 2 and sent[0][1].action is Action.ACCEPT
    r.cursor = Item(1)
    assert r.confirm() == ([], Refusal.NOTHING)  # confirm is only for deletes and renames


def test_accept_all_skips_deletes_renames_and_blocked_operations() -> None:
    r = review()
    r.propose(4, Modify("d.py", [hunk(2)]))
    r.mark_stale(4)
    sent = dict(r.accept_all())
    assert set(sent) == {0, 1}
    assert {e.index for e in r.undecided()} == {2, 3, 4}
    assert r.cursor == Item(2)  # the first operation still undecided


def test_reject_all_keeps_accepted_hunks() -> None:
    r = review()
    r.accept()  # hunk 0 of the modify
    sent = dict(r.reject_all())
    assert sent[0].action is Action.ACCEPT and sent[0].hunks == (0,)
    assert {i: d.action for i, d in sent.items()} == {
        0: Action.ACCEPT, 1: Action.REJECT, 2: Action.REJECT, 3: Action.REJECT}
    assert r.undecided() == []


def test_a_stale_operation_is_blocked_until_the_session_asks_again() -> None:
    r = review()
    r.mark_stale(0)
    assert r.accept() == ([], Refusal.BLOCKED)
    r.propose(0, Modify("a.py", [hunk(1), hunk(5), hunk(9)]), stale=True)
    entry = r.entries[0]
    assert entry.stale and not entry.blocked
    assert r.accept() == ([], None)  # acceptable again (the session re-checks it on apply)


def test_a_refused_operation_needs_no_decision() -> None:
    r = review()
    r.refuse(2, "refused (stale): the file changed")
    assert 2 not in {e.index for e in r.undecided()}
    assert r.entries[2].problem.startswith("refused")


def test_decided_operations_are_not_decided_again() -> None:
    r = review()
    r.cursor = Item(1)
    sent, _ = r.accept()
    assert sent
    r.cursor = Item(1)
    assert r.reject() == ([], Refusal.DECIDED)
