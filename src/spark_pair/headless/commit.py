"""`run --apply --commit` and `watch --apply --commit`: the applied turn as a git commit of
exactly its files, its message from the model (or a template), said on stderr; the `end`
line's `commit` and `commit_note`."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..base.errors import CommitError, UsageError

if TYPE_CHECKING:
    from ..base.config import Settings
    from ..protocol.client import ModelClient
    from ..session.events import TurnResult
    from .diagnostics import Diagnostics
    from .options import RunOptions


class Reported(Protocol):
    """What --commit reads of the run's reporter (runner's, which imports this module)."""

    opts: RunOptions
    root: Path
    settings: Settings
    client: ModelClient | None
    diag: Diagnostics
    t0: float


def check_flags(commit: bool, apply_: bool) -> UsageError | None:
    """What is wrong with --commit beside the other flags (None: nothing)."""
    if commit and not apply_:
        return UsageError("--commit needs --apply (a dry run writes nothing to commit)",
                          hint="add --apply; the commit holds exactly the applied turn")
    return None


async def check_repo(root: Path) -> str | None:
    """Refuse (CommitError) before anything is written when no commit can go here; the note
    to say (a detached HEAD), if any."""
    from ..base.gitcommit import check_state

    return await asyncio.to_thread(check_state, root)


async def commit_result(report: Reported, result: TurnResult, code: int
                        ) -> tuple[dict[str, Any], CommitError | None]:
    """--commit after a turn's result (`report`: the run's reporter): the end line's fields and
    the error that kept the turn from a commit."""
    from ..session.events import TurnStatus

    if code != 0 or result.status != TurnStatus.APPLIED or not result.changed:
        return {"commit": None, "commit_note": "no turn was applied"}, None
    timeout = report.opts.timeout
    return await commit_turns(report.root, [result.turn_id], report.client, report.opts.prompt,
                              report.settings, report.diag.say,
                              None if timeout is None else report.t0 + timeout)


async def commit_turns(root: Path, turn_ids: list[str], client: ModelClient | None,
                       prompt: str, settings: Settings, say: Callable[[str], None],
                       deadline: float | None = None) -> tuple[dict[str, Any], CommitError | None]:
    """Commit the applied turns `turn_ids` (oldest first) as one commit: the end line's fields
    and the error that kept them from being committed (None: committed). `deadline` (a
    time.monotonic(), --timeout's): the message request ends by then (the template is used
    after it); the commit itself is never cut (the turn is written: what happens is said)."""
    from ..session.commit import (
        MESSAGE_TIMEOUT_S,
        make_commit,
        plan_commit,
        template_message,
        with_trailer,
        write_message,
    )

    try:
        plan = await asyncio.to_thread(plan_commit, root, turn_ids)
        if plan.mixed or not plan.files:  # refused before a message is asked for
            await asyncio.to_thread(make_commit, plan, "")
        left = MESSAGE_TIMEOUT_S if deadline is None else min(
            MESSAGE_TIMEOUT_S, deadline - time.monotonic())
        if left > 0:
            message, why = await write_message(client, plan, prompt=prompt, timeout=left,
                                               settings=settings)
        else:  # the run's --timeout has passed: no request, the turn is committed as it is
            git = getattr(settings, "git", None)
            message = with_trailer(template_message(plan), git.trailer if git else "")
            why = "--timeout had passed when the message was to be asked for"
        if why is not None:
            say(f"note: the commit message is the plain template ({why})")
        commit = await asyncio.to_thread(make_commit, plan, message)
    except CommitError as exc:
        say(exc.describe())
        return {"commit": None, "commit_note": exc.message}, exc
    subject = message.splitlines()[0]
    say(f"committed {commit[:12]}: {subject}")
    if plan.note:
        say(f"note: {plan.note}")
    return {"commit": commit, "commit_note": plan.note}, None
