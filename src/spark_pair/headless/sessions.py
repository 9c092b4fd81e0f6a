"""The stored session of a headless run: a new one, the newest (`--continue`) or a named one
(`--session NAME`, created when there is none by that name). Each run's turn is kept, so the
next `run --continue` carries the conversation on."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from .options import RunOptions

if TYPE_CHECKING:
    from ..session.keeper import Keeper
    from ..session.runtime import Runtime


def start(root: Path, opts: RunOptions, warn: Callable[[str], None]) -> asyncio.Task[Keeper]:
    """Open the run's session in a thread (while the runtime opens)."""
    def open_it() -> Keeper:
        from ..session.keeper import Keeper, Pick

        pick = Pick(newest=opts.continue_, name=opts.session, create=opts.session is not None)
        return Keeper.open(root, pick, model=opts.overrides.get("model.name", ""), warn=warn)

    return asyncio.ensure_future(asyncio.to_thread(open_it))


async def ready(keeping: asyncio.Task[Keeper], warn: Callable[[str], None]) -> Keeper | None:
    """The new session of a plain run; a store that cannot be opened fails no run."""
    from ..base.errors import SparkPairError

    try:
        return await keeping
    except SparkPairError as exc:
        warn(f"the session is not stored: {exc.message}")
        return None


def model_override(keeper: Keeper, opts: RunOptions) -> None:
    """A continued session keeps its model, unless --model names another."""
    if keeper.info.model and "model.name" not in opts.overrides:
        opts.overrides["model.name"] = keeper.info.model


def attach(keeper: Keeper, rt: Runtime) -> None:
    session = getattr(rt.settings, "session", None)
    keeper.attach(rt.session, rt.context,
                  max_turns=int(getattr(session, "history_turns", 6)),
                  budget_tokens=int(getattr(session, "history_tokens", 8000)))
