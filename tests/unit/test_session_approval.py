"""PolicyApprover: the headless flags as decisions."""

from __future__ import annotations

from spark_pair.edits.ops import Create, Delete, Hunk, Modify, Rename
from spark_pair.session.approval import Action, Decision, PolicyApprover, Proposal, select_hunks

MOD = Modify("a.py", [Hunk(1, 1, 1, 1, ["-x", "+y"]), Hunk(5, 1, 5, 1, ["-p", "+q"])])
def ask(op) -> Proposal:
    return Proposal("t1", 0, op)


OPS = [MOD, Create("n.py", "x\n"), Delete("old.py"), Rename("a.py", "b.py")]


async def test_dry_run_skips_everything() -> None:
    approver = PolicyApprover()
    assert [(await approver.decide(ask(op))).action for op in OPS] == [Action.SKIP] * 4


async def test_apply_refuses_delete_and_rename_without_their_flags() -> None:
    approver = PolicyApprover(apply=True)
    decisions = [await approver.decide(ask(op)) for op in OPS]
    assert [d.action for d in decisions] == [
        Action.ACCEPT,
        Action.ACCEPT,
        Action.REFUSE,
        Action.REFUSE,
    ]
    assert "--allow-delete" in decisions[2].reason
    assert "--allow-rename" in decisions[3].reason


async def test_all_flags_accept_everything() -> None:
    approver = PolicyApprover(apply=True, allow_delete=True, allow_rename=True)
    assert all([(await approver.decide(ask(op))).accepted for op in OPS])


async def test_uncommitted_delete_is_named_in_the_reason() -> None:
    d = await PolicyApprover(apply=True).decide(ask(Delete("x.py", uncommitted=True)))
    assert d.action == Action.REFUSE and "uncommitted" in d.reason


def test_select_hunks_keeps_only_the_accepted_ones() -> None:
    kept = select_hunks(MOD, Decision(Action.ACCEPT, hunks=(1,)))
    assert isinstance(kept, Modify) and [h.lines for h in kept.hunks] == [["-p", "+q"]]
    assert select_hunks(MOD, Decision(Action.ACCEPT)) is MOD
