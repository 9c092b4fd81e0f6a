"""`spark-pair watch`: a turn for each new `AI!` comment (an answer for each `AI?`), with run's
flags and JSON lines, until Ctrl-C.

The repository is opened once (runtime.open_runtime, WebSocket pre-warmed); comments already in
the files when it starts never trigger. Each turn prints (or writes as JSON lines) exactly what
`run` would: a `comment` line per comment first, then `turn` ... `end`. Ctrl-C while waiting
stops with exit code 0; during a turn it cancels the turn (nothing written) and stops with 130.
"""

from __future__ import annotations

import asyncio
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from ..base.errors import CommitError, SparkPairError
from ..base.exitcodes import ExitCode, exit_code_for
from .jsonl import JsonLines, error_fields
from .options import RunOptions
from .runner import Diagnostics, _drive, _end, _Reporter, _signal, start_lines
from .stops import stop_words

if TYPE_CHECKING:
    from ..workspace.aiturns import AITrigger, AITurn



async def watch(opts: RunOptions, out: TextIO, err: TextIO, *,
                ready: asyncio.Event | None = None) -> int:
    """Run until Ctrl-C; `ready` is set once new comments are watched."""
    t0 = time.monotonic()
    jl = JsonLines(out, t0) if opts.json else None
    diag = Diagnostics(err)
    try:
        return await _watch(opts, out, jl, diag, ready)
    except SparkPairError as exc:
        code = int(exit_code_for(exc))
        diag.say(exc.describe())
        if jl is not None:
            jl.write({"type": "error", **error_fields(exc)})
            jl.write(_end(code, "failed", None, t0, exc.message))
        return code


async def _watch(opts: RunOptions, out: TextIO, jl: JsonLines | None, diag: Diagnostics,
                 ready: asyncio.Event | None) -> int:
    from ..session.approval import PolicyApprover
    from ..session.runtime import open_runtime
    from ..workspace.aiturns import AITrigger
    from ..workspace.files import find_root, list_files

    root = find_root(opts.cwd)
    if opts.commit:  # refused before anything is written
        from .commit import check_repo

        await check_repo(root)
    approver = PolicyApprover(opts.apply, opts.allow_delete, opts.allow_rename)
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    interrupted = False
    async with open_runtime(root, approver=approver, overrides=opts.overrides, env=opts.env,
                            cwd=opts.cwd or Path.cwd(), warn=diag.say, prewarm=True) as rt:
        session, watcher = rt.session, rt.watcher
        assert watcher is not None
        start_lines(rt, opts, [], jl, diag)
        await watcher.start()
        # comments already in the files are not new: only those saved from now on trigger
        await asyncio.to_thread(lambda: watcher.scan_ai_comments(list_files(root)))
        trigger = AITrigger(root)
        unsubscribe = watcher.subscribe_ai(trigger.feed)

        def on_sigint(sig: int) -> None:
            nonlocal interrupted
            if session.running:
                interrupted = True
                session.cancel(message=stop_words(sig))
            stop.set()

        diag.say(f"watching {root} for AI! and AI? comments (Ctrl-C stops)")
        if ready is not None:
            ready.set()
        try:
            with _signal(loop, on_sigint):
                while not stop.is_set():
                    turn = await _next_turn(trigger, stop)
                    if turn is None:
                        break
                    for c in turn.comments:
                        marker = "AI?" if c.kind == "ask" else "AI!"
                        diag.say(f"{c.path}:{c.line}: {marker} {c.text}")
                        if jl is not None:
                            jl.write({"type": "comment", "path": c.path, "line": c.line,
                                      "kind": c.kind, "text": c.text})
                    if opts.commit and not turn.ask and not await _can_commit(root, jl, diag):
                        continue  # (a merge or rebase begun since start-up: no turn now)
                    one = replace(opts, prompt=turn.prompt, files=list(turn.files),
                                  ask=turn.ask)
                    report = _Reporter(one, out, jl, diag, root, rt.settings, time.monotonic())
                    report.client = rt.client
                    await _drive(session, one, list(turn.files), jl, diag, report,
                                 workspace=rt.workspace)
        finally:
            unsubscribe()
            trigger.close()
    return int(ExitCode.INTERRUPTED) if interrupted else 0


async def _can_commit(root: Path, jl: JsonLines | None, diag: Diagnostics) -> bool:
    """--commit: whether a commit can go here now; else the turn is refused before anything
    is written (said, with its `error` and `end` lines)."""
    from .commit import check_repo

    try:
        await check_repo(root)
    except CommitError as exc:
        diag.say(exc.describe())
        diag.say("note: the comment is not acted on; save it again once that is done")
        if jl is not None:
            code = int(exit_code_for(exc))
            jl.write({"type": "error", **error_fields(exc)})
            jl.write(_end(code, "failed", None, time.monotonic(), exc.message,
                          {"commit": None, "commit_note": exc.message}))
        return False
    return True


async def _next_turn(trigger: AITrigger, stop: asyncio.Event) -> AITurn | None:
    """The next AI turn, or None once `stop` is set."""
    waiting = asyncio.ensure_future(trigger.next())
    stopping = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({waiting, stopping}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopping.cancel()
        if not waiting.done():
            waiting.cancel()
    return waiting.result() if waiting.done() and not waiting.cancelled() else None


def main(opts: RunOptions) -> int:
    return asyncio.run(watch(opts, sys.stdout, sys.stderr))
