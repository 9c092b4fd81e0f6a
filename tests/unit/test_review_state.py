"""The review model: what each key decides, and when a decision goes to the session."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from spark_pair.edits.ops import Create, Delete, Hunk, Modify, Rename
from spark_pair.session.approval import Action
from spark_pair.ui.review_state import Item, Mark, Refusal, Review, Undone


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
    # deletes and renames first: each needs a decision of its own
    assert review().items() == [Item(2), Item(3), Item(0, 0), Item(0, 1), Item(0, 2), Item(1)]


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
    assert entry.stale and entry.again and not entry.blocked
    assert r.accept() == ([], None)  # acceptable again (the session re-checks it on apply)
    r.mark_stale(0)  # changed once more before every hunk was decided
    assert entry.blocked and r.accept() == ([], Refusal.BLOCKED)


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


def test_a_refused_operation_is_skipped_by_the_cursor() -> None:
    r = review()
    assert r.cursor == Item(0, 0)
    r.refuse(0, "refused (conflict): the hunk does not match")
    assert r.cursor == Item(1)  # not the refused modify's next hunk: nothing to decide there
    r.accept()
    assert r.cursor == Item(2)


def naive_open(r: Review) -> list[Item]:
    """The items still to decide, by walking everything (what the indexes must agree with)."""
    return [it for it in r.items() if not r.entries[it.op].sent and r.item_undecided(it)]


def naive_items(r: Review) -> list[Item]:
    out: list[Item] = []
    for index in sorted(r.entries, key=lambda i: (not r.entries[i].needs_confirm, i)):
        entry = r.entries[index]
        out += [Item(index, h) for h in range(len(entry.hunks))] if entry.hunks else [Item(index)]
    return out


OPS = st.one_of(
    st.tuples(st.just("propose"), st.integers(0, 7), st.integers(0, 4)),
    st.tuples(st.sampled_from(["accept", "reject", "confirm", "accept_all", "reject_all"])),
    st.tuples(st.sampled_from(["move", "move_file"]), st.sampled_from([-2, -1, 1, 3])),
    st.tuples(st.sampled_from(["refuse", "stale"]), st.integers(0, 7)),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(OPS, max_size=40))
def test_the_indexed_review_agrees_with_a_walk_over_every_item(steps: list[tuple]) -> None:
    r = Review()
    for step in steps:
        match step:
            case ("propose", index, n):
                op = (Modify(f"m{index}.py", [hunk(k) for k in range(n)]) if n else
                      [Create(f"c{index}.py", "x\n"), Delete(f"d{index}.py"),
                       Rename(f"r{index}.py", f"s{index}.py")][index % 3])
                r.propose(index, op)
            case ("accept" | "reject" | "confirm" as name,):
                before = r.cursor
                open_before = naive_open(r)
                getattr(r, name)()
                after_open = naive_open(r)
                if before is not None and len(after_open) < len(open_before):
                    # decided: the cursor goes to the next open item after it, wrapping
                    order = naive_items(r)
                    at = order.index(before)
                    expected = next((it for it in order[at + 1:] + order[:at + 1]
                                     if it in after_open), before)
                    assert r.cursor == expected
            case ("accept_all" | "reject_all" as name,):
                getattr(r, name)()
            case ("move", step_):
                before = r.cursor
                r.move(step_)
                order = naive_items(r)
                if before in order:
                    assert r.cursor == order[max(0, min(len(order) - 1,
                                                        order.index(before) + step_))]
            case ("move_file", step_):
                before = r.cursor
                r.move_file(step_)
                order = naive_items(r)
                ops = list(dict.fromkeys(it.op for it in order))  # as listed
                if order:
                    current = before.op if before in order else order[0].op
                    target = ops[max(0, min(len(ops) - 1, ops.index(current) + step_))]
                    assert r.cursor == next(it for it in order if it.op == target)
            case ("refuse", index):
                r.refuse(index, "refused")
            case ("stale", index):
                r.mark_stale(index)
        assert r.items() == naive_items(r)
        assert [r.is_open(it) for it in r.items()] == [it in naive_open(r) for it in r.items()]
        assert [e.index for e in r.undecided()] == sorted(
            i for i, e in r.entries.items() if not e.sent)
        assert r.undecided_count == len(r.undecided())
        if r.entries:
            assert r.cursor in naive_items(r)


def test_only_the_applied_turn_of_this_review_can_be_marked_undone() -> None:
    r = review()
    assert not r.set_undone("t1", Undone.UNDONE)  # nothing written yet
    r.set_applied([0, 1], "t1")
    assert not r.set_undone("t0", Undone.UNDONE) and r.undone is None  # another turn
    assert r.set_undone("t1", Undone.ROLLED_BACK) and r.undone is Undone.ROLLED_BACK
    assert r.set_undone("t1", None) and r.undone is None  # written again
    r.clear()
    assert r.turn_id is None and not r.set_undone("t1", Undone.UNDONE)
