"""The headless run: one session turn, machine output on stdout, diagnostics on stderr.

It owns no logic of its own: flags -> settings, client, workspace, PolicyApprover -> Session;
events -> JSON lines or the diff; the result's error -> exit code (exitcodes.exit_code_for).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from .. import __version__
from ..base.errors import Cancelled, CommitError, SparkPairError, UsageError
from ..base.exitcodes import ExitCode, exit_code_for
from ..base.gcpolicy import started as _started
from ..edits.parse_events import HunkStarted, LineAdded
from ..protocol.events import (
    Completed,
    Failed,
    Rewound,
    Started,
    TextDelta,
)
from ..session.events import (
    TurnFinished,
    TurnStarted,
    TurnStatus,
)
from .commit import check_repo, commit_result
from .deadline import within
from .diagnostics import Diagnostics, meter_line
from .options import RunOptions, repo_paths
from .stops import INTERRUPTED, STOPS, SignalHandler, stop_words

if TYPE_CHECKING:  # the JSON lines (and the cost table) load only for --json
    from ..base.config import Settings
    from ..protocol.client import ModelClient
    from ..session.events import TurnResult
    from ..session.runtime import Runtime
    from ..session.session import Session
    from ..workspace.checkrun import CheckResult
    from ..workspace.context import Workspace
    from ..workspace.watcher import Watcher
    from .jsonl import JsonLines
    from .sessions import RunStoredSession
    from .watchdog import Watchdog


CLOSE_GRACE_S = 3.0
# nothing is shown per token (the diff is printed whole, JSON lines name files and hunks): model
# text may reach the turn up to this late, so it wakes ~50 times a second, not once per token
TEXT_LATENCY_S = 0.02
class _Stop:
    """What Ctrl-C and SIGTERM do during a run: cancel its turn once the session is there
    (`session`), before that the run itself (`signal` says which stopped it)."""

    def __init__(self) -> None:
        self.task = asyncio.current_task()
        self.session: Session | None = None
        self.signal: int | None = None
        self.between: asyncio.Future[CheckResult] | None = None  # the check between two rounds

    def __call__(self, sig: int) -> None:
        if self.between is not None and not self.between.done():
            self.signal = sig
            self.between.cancel()
        elif self.session is not None:
            self.session.cancel(message=stop_words(sig))
        elif self.task is not None and self.signal is None:
            self.signal = sig
            self.task.cancel()


async def run(opts: RunOptions, out: TextIO, err: TextIO, *, watchdog: bool = False) -> int:
    """The run: its exit code. `watchdog`: the process is the run's own (the command): a stop
    the event loop does not get to in time ends it (headless.watchdog)."""
    t0 = time.monotonic() if opts.started is None else opts.started
    jl = _json_lines(out, t0) if opts.json else None
    diag = Diagnostics(err)
    reports: list[_Reporter] = []
    stop = _Stop()
    exc: SparkPairError
    dog = None
    if watchdog:
        from .watchdog import Watchdog

        dog = Watchdog(lambda reason: _hard_end(reason, reports, diag, jl, t0),
                       lambda: any(r.busy for r in reports))
    try:
        with dog or contextlib.nullcontext(), _signal(asyncio.get_running_loop(), stop, dog):
            if dog is not None and opts.timeout is not None:
                dog.ask(_timed_out(opts.timeout), at=t0 + opts.timeout)
            try:
                work = _run(opts, out, jl, diag, t0, reports, stop, dog)
                if opts.timeout is None:
                    return await work
                # the session stops itself at the deadline; the backstop for closing hangs
                left = opts.timeout + CLOSE_GRACE_S - (time.monotonic() - t0)
                return await within(work, max(left, CLOSE_GRACE_S),
                                    lambda: any(r.busy for r in reports))
            finally:
                STOPS.settle()  # the result is decided: a stop from now on changes nothing
    except asyncio.CancelledError:
        if stop.signal is None or stop.task is None:
            raise
        stop.task.uncancel()  # stopped before its turn began: said as a stopped turn says it
        exc = Cancelled(stop_words(stop.signal), hint="nothing was written")
    except TimeoutError:
        if reports and reports[0].code is not None:
            diag.say("closing the connection took too long; exiting")
            return reports[0].code
        assert opts.timeout is not None
        exc = _timed_out(opts.timeout)
    except SparkPairError as error:
        if reports and reports[0].code is not None:
            diag.say(f"while closing: {error}")
            return reports[0].code
        exc = error
    except BrokenPipeError:  # stdout's reader went away (`| head`): said once, on stderr
        diag.say("stdout was closed (its reader went away): the run stopped there")
        raise  # (the command line framework exits with 1, quietly)
    except Exception as error:  # a bug: say so plainly, never a traceback
        if reports and reports[0].code is not None:
            return reports[0].code
        exc = SparkPairError(f"internal error: {type(error).__name__}: {error}",
                             hint="please report it with the command you ran")
    code = int(exit_code_for(exc))
    diag.say(exc.describe())
    if jl is not None:
        from .jsonl import error_fields

        jl.write({"type": "error", **error_fields(exc)})
        jl.write(_end(code, "cancelled" if isinstance(exc, Cancelled) else "failed", None, t0,
                      exc.message, {"commit": None, "commit_note": exc.message}
                      if isinstance(exc, CommitError) else None))
    return code


def _timed_out(timeout: float) -> Cancelled:
    return Cancelled(f"the run did not finish within --timeout {timeout:g} s", timeout=True,
                     hint="nothing was written; raise --timeout or check the endpoint")


def _hard_end(reason: Cancelled, reports: list[_Reporter], diag: Diagnostics,
              jl: JsonLines | None, t0: float) -> None:
    """End the process now, for the watchdog: the stop's message and lines (unless the result
    is out already), then its exit code."""
    import os

    code = reports[0].code if reports else None
    try:
        if code is None:
            code = int(exit_code_for(reason))
            diag.say(reason.describe())
            if jl is not None:
                from .jsonl import error_fields

                jl.write({"type": "error", **error_fields(reason)})
                jl.write(_end(code, "cancelled", None, t0, reason.message))
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:  # noqa: BLE001 - (a write cut by the signal) the exit code still holds
        pass
    os._exit(int(exit_code_for(reason)) if code is None else code)


def _json_lines(out: TextIO, t0: float) -> JsonLines:
    from .jsonl import JsonLines

    return JsonLines(out, t0)


def _end(code: int, status: str, turn_id: str | None, t0: float, message: str | None = None,
         commit: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"type": "end", "status": status, "exit_code": code, "exit_name": ExitCode(code).name,
            "turn_id": turn_id, "duration_ms": round((time.monotonic() - t0) * 1000, 1),
            "message": message,
            **(commit or {"commit": None, "commit_note": None})}


async def _run(opts: RunOptions, out: TextIO, jl: JsonLines | None, diag: Diagnostics,
               t0: float, reports: list[_Reporter], stop: _Stop,
               dog: Watchdog | None = None) -> int:
    from ..base.dirs import home_override
    from ..workspace.files import find_root_soon, plain_top

    if not opts.prompt.strip():
        raise UsageError("the prompt read from stdin is empty" if opts.stdin else
                         "the prompt is empty",
                         hint="echo 'what to change' | spark-pair run - [-f FILE]" if opts.stdin
                         else "spark-pair run 'what to change' [-f FILE]")
    home_override()  # a SPARK_PAIR_HOME that is a file: said once, before anything opens
    cwd = opts.cwd or Path.cwd()
    top = plain_top(cwd)  # a plain look when it is certain, else git looks while the rest loads
    root_of = (lambda: top) if top is not None else find_root_soon(cwd)
    from ..session.approval import PolicyApprover
    from ..session.runtime import open_runtime

    root = root_of()
    files = repo_paths(root, cwd, opts.files)
    if opts.commit:  # refused before anything is written
        await check_repo(root)
    approver = PolicyApprover(opts.apply, opts.allow_delete, opts.allow_rename)
    stored = None
    if opts.keep:
        from .sessions import RunStoredSession

        stored = RunStoredSession(root, opts, diag.say)
        await stored.before()  # a continued session's model is the run's
    try:
        # no file watcher for the one turn: the last look before the write finds a file that
        # changed during the turn (Stale, then refused or decided again), and starting the
        # watcher (its imports, the OS watches) would hold up a short reply's events
        async with open_runtime(root, approver=approver, overrides=opts.overrides, env=opts.env,
                                cwd=cwd, warn=diag.say, prewarm=opts.prewarm,
                                watch=False) as rt:
            stop.session = rt.session  # a stop from here on cancels the turn
            if opts.leave is not None and not opts.check:  # the command exits after this
                rt.session.remember = False  # turn: nothing to keep
            _started()  # collections on again (with --check too: its rounds make garbage)
            report = _Reporter(opts, out, jl, diag, root, rt.settings, t0, dog)
            report.client = rt.client
            reports.append(report)
            if stored is not None:
                stored.attach(rt)
            start_lines(rt, opts, files, jl, diag, stored)
            if opts.check:
                from .fixrounds import RunFixRounds

                rounds = RunFixRounds(rt, opts, jl, diag, report, stop, stored)
                await rounds.run(lambda prompt, more: _drive(
                    rt.session, opts, [*files, *more], jl, diag, report, workspace=rt.workspace,
                    prompt=prompt))
            else:
                await _drive(rt.session, opts, files, jl, diag, report, watcher=rt.watcher,
                             workspace=rt.workspace)
            if opts.leave is not None and report.code is not None:
                rt.store.flush()  # the result is out and nothing else runs: no thread hop
                if stored is not None:
                    stored.flush()  # its turn is written, and the session let go with it
                if rt.telemetry is not None:  # the push and the last export (bounded)
                    rt.telemetry.end()
                opts.leave(report.code)
    except OSError as exc:
        if not reports or reports[0].code is None:
            raise
        diag.say(f"while closing: {exc}")  # the result is already out
    finally:
        if stored is not None:
            await stored.close()
    code = reports[0].code
    assert code is not None
    return code


def start_lines(rt: Runtime, opts: RunOptions, files: list[str], jl: JsonLines | None,
                diag: Diagnostics, stored: RunStoredSession | None = None) -> None:
    """The notes on stderr and the `session` JSON line before the first turn."""
    from ..base.dirs import own_dirs_inside

    settings = rt.settings
    for rel in files:
        if not (rt.root / rel).exists():
            diag.say(f"note: {rel} does not exist yet; the model is told so and may create it")
    for warning in settings.warnings:
        diag.say(f"config: {warning}")
    for warning in own_dirs_inside(rt.root):
        diag.say(f"warning: {warning}")
    options = rt.client.options
    if not options.api_key:
        diag.say(f"note: ${settings.key_env} is not set, so requests carry no API key (only "
                 "a local server accepts that)")
    if jl is not None:
        from .jsonl import SCHEMA_VERSION

        jl.write({"type": "session", "version": __version__, "schema": SCHEMA_VERSION,
                  "repo": str(rt.root), "model": options.model, "transport": options.transport,
                  "apply": opts.apply, "allow_delete": opts.allow_delete,
                  "allow_rename": opts.allow_rename, "files": list(opts.files),
                  "prompt_chars": len(opts.prompt), "timeout_s": opts.timeout,
                  "session_name": stored.name if stored is not None else None,
                  "earlier_turns": stored.earlier if stored is not None else 0})
    if stored is not None and stored.earlier:
        from ..session.history import carrying_on

        going = stored.current.going if stored.current is not None else stored.earlier
        diag.say(carrying_on(stored.name or "", stored.earlier, going))


SMALL_DIFF = 64  # operations and hunks a diff may have to be rendered on the event loop
STOPPED_DIFF_S = 0.2  # the time a stopped turn's diff (of what arrived) may take to render


class _Reporter:
    """Writes a finished turn's result at once (before connections and the watcher close)."""

    def __init__(self, opts: RunOptions, out: TextIO, jl: JsonLines | None, diag: Diagnostics,
                 root: Path, settings: Settings, t0: float, dog: Watchdog | None = None) -> None:
        self.opts, self.out, self.jl, self.diag = opts, out, jl, diag
        self.root, self.settings, self.t0, self.dog = root, settings, t0, dog
        self.code: int | None = None
        self.hunks: dict[int, int] = {}  # file index -> `hunk` lines seen
        self.failed: object = None  # the error a Failed event already wrote as a line
        self.busy = False  # the result is being written out
        self.result: TurnResult | None = None  # the last turn's result
        self.end: dict[str, Any] | None = None  # its `end` line (held back for the check)
        self.client: ModelClient | None = None  # the model client, for --commit's message

    async def __call__(self, result: TurnResult) -> None:
        self.busy = True
        try:
            await self._report(result)
        finally:
            self.busy = False

    def stopped(self) -> Cancelled | None:
        """The stop that has come (the deadline, a signal the watchdog heard), if any."""
        reason = self.dog.stopped() if self.dog is not None else None
        timeout = self.opts.timeout
        if reason is None and timeout is not None and time.monotonic() >= self.t0 + timeout:
            reason = _timed_out(timeout)
        return reason

    async def _report(self, result: TurnResult) -> None:
        opts, out, jl, diag = self.opts, self.out, self.jl, self.diag
        code = 0 if result.error is None else int(exit_code_for(result.error))
        if result.error is not None:
            diag.say(result.error.describe())
        committed, commit_error = await commit_result(self, result, code) if opts.commit \
            and not opts.check else (None, None)  # the turn as a commit (headless.commit)
        code = int(exit_code_for(commit_error)) if commit_error is not None else code
        if jl is None:
            try:
                diff = await self._diff(result)
            except Cancelled:  # the deadline or a signal came while the diff was rendered
                diff = ""
                reason = self.stopped() or Cancelled(INTERRUPTED, hint="nothing was written")
                if isinstance(result.error, Cancelled):  # (its stop was said just above)
                    diag.say("the diff of what arrived is not shown (it is too large to "
                             "render in time)")
                elif result.changed:  # written: that stands, only the diff is not shown
                    diag.say(f"the diff is not shown ({reason.message}); `git diff` shows it")
                else:
                    code = int(exit_code_for(reason))
                    diag.say(reason.describe())
            if diff:
                out.write(diff if diff.endswith("\n") else diff + "\n")
                out.flush()
            if opts.ask and result.text.strip():  # a question's answer
                out.write(result.text if result.text.endswith("\n") else result.text + "\n")
                out.flush()
            if opts.meter and result.metrics is not None:
                diag.say(meter_line(result))
            if result.status == TurnStatus.DRY_RUN:
                diag.say("dry run: nothing was written (use --apply)")
        else:
            from .jsonl import error_fields, result_lines

            if opts.ask:
                jl.write({"type": "answer", "text": result.text})
            for line in result_lines(result, getattr(self.settings, "prices", None),
                                     self.hunks):
                jl.write(line)
            if result.error is not None and result.error is not self.failed:
                jl.write({"type": "error", **error_fields(result.error)})
            if commit_error is not None:
                jl.write({"type": "error", **error_fields(commit_error)})
            failed = result.error or commit_error
            self.end = _end(code, result.status,
                            result.turn_id if result.status == TurnStatus.APPLIED else None,
                            self.t0, failed.message if failed else None, committed)
            if not opts.check:  # else the rounds end the run (headless.fixrounds)
                jl.write(self.end)
        self.result = result
        self.code = code

    async def _diff(self, result: TurnResult) -> str:
        """The printed diff; a large one is made in a worker thread. Raises Cancelled once a
        stop has come (checked before each file and hunk)."""
        ops = result.operations
        begun = time.monotonic()

        def stop() -> bool:
            if isinstance(result.error, Cancelled):  # stopped already: what arrived is shown
                return time.monotonic() - begun > STOPPED_DIFF_S  # if it is quick to show
            return self.stopped() is not None

        if len(ops) + sum(len(getattr(op, "hunks", ())) for op in ops) <= SMALL_DIFF:
            return _diff_text(self.root, result, stop)
        return await asyncio.to_thread(_diff_text, self.root, result, stop)


def _diff_text(root: Path, result: TurnResult, stop: Callable[[], bool]) -> str:
    """The diff of a result's operations, with exact line numbers when nothing was written
    (blocking: it reads the files)."""
    from ..edits.render import render_ops  # loaded once the request is out (_drive)

    bases = None if result.changed else _bases(root, result, stop)
    return render_ops(result.operations, bases, stop=stop)


async def _drive(session: Session, opts: RunOptions, files: list[str], jl: JsonLines | None,
                 diag: Diagnostics, report: _Reporter, *, watcher: Watcher | None = None,
                 workspace: Workspace | None = None, prompt: str | None = None) -> None:
    """One turn: events to stderr and JSON lines, the result to the reporter (the caller's
    handler of Ctrl-C and SIGTERM cancels it). `watcher`: the run's only turn, so the watcher
    winds down once the stream ends. `workspace`: the session's, to say which of
    `files` were left out of the request, and why."""
    loop = asyncio.get_running_loop()
    timer = None
    if opts.timeout is not None:
        left = max(0.0, opts.timeout - (time.monotonic() - report.t0))
        timer = loop.call_later(left, lambda: session.cancel(
            timeout=True, message=f"the run did not finish within --timeout {opts.timeout:g} s"))
    deltas = jl is not None and opts.deltas  # a line per delta: text is handed over as it comes
    if jl is not None:
        from .jsonl import event_to_dict
    turn = session.turn(opts.prompt if prompt is None else prompt, files, ask=opts.ask,
                        latency=0.0 if deltas else TEXT_LATENCY_S, choose=opts.auto_context)
    try:
        # closed here whatever ends the loop (a write to a closed stdout, a bug): the turn's
        # own ending (its proposals, the request log) runs while the run is still open
        async with contextlib.aclosing(turn) as events:
            async for event in events:
                kind = type(event)
                if kind is LineAdded or (kind is TextDelta and not deltas):
                    continue  # the most common events: nothing to say about them
                match event:
                    case TurnFinished():
                        await report(event.result)
                        continue
                    case TurnStarted() if workspace is not None:
                        _say_left_out(diag, workspace, files)
                    case Started() if jl is None:  # the request is out: what prints the diff
                        loop.run_in_executor(None, _load_render)  # loads meanwhile
                    case HunkStarted():
                        report.hunks[event.op_index] = report.hunks.get(event.op_index, 0) + 1
                    case Rewound():
                        report.hunks.clear()
                    case Completed() | Failed() if watcher is not None:
                        # one turn only: the apply step checks the files itself, so the
                        # watcher winds down while it runs rather than after
                        watcher.stop_soon()
                if isinstance(event, Failed):
                    report.failed = event.error  # its `error` line is written here, once
                diag.event(event)
                if jl is not None:
                    obj = event_to_dict(event, deltas=opts.deltas)
                    if obj is not None:
                        jl.write(obj)
    finally:
        if timer is not None:
            timer.cancel()


def _load_render() -> None:
    import spark_pair.edits.render  # noqa: F401 - loaded ahead of the result


def _say_left_out(diag: Diagnostics, workspace: Workspace, files: list[str]) -> None:
    """A note for each file given for the context that the request does not show (binary,
    too large, over the token budget): the model never saw it."""
    from ..base.printable import shown

    omitted = workspace.last_context.omitted if workspace.last_context is not None else {}
    for rel in files:
        if rel in omitted:
            diag.say(f"note: {shown(rel)} is not sent to the model ({omitted[rel]})")


def _bases(root: Path, result: TurnResult, stop: Callable[[], bool]) -> dict[str, str]:
    """The current text of the files the operations edit (for exact @@ line numbers); none
    for a binary file (never shown as lines). Raises Cancelled once stop() is true."""
    from ..edits.paths import looks_binary, read_regular

    out = {}
    for op in result.operations:
        if stop():
            raise Cancelled("stopped")
        data = read_regular(root, op.path)
        try:
            if data is not None and not looks_binary(data):
                out[op.path] = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
    return out


class _signal:
    """Ctrl-C and SIGTERM stop the turn as a cancel (the handler gets the signal): a write
    that has begun runs to its end, and --json still ends with its `end` line. The handlers
    in place before come back after (headless.stops' for SIGTERM)."""
    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self, loop: asyncio.AbstractEventLoop, handler: Callable[[int], None],
                 dog: Watchdog | None = None) -> None:
        self.loop, self.handler, self.installed, self.dog = loop, handler, False, dog
        self.before: dict[int, SignalHandler] = {}

    def __enter__(self) -> None:
        try:
            for sig in self.SIGNALS:
                self.before[sig] = signal.getsignal(sig)
                self.loop.add_signal_handler(sig, self.handler, sig)
                if self.dog is not None and self.dog.on:  # (the loop still hears it: the
                    signal.signal(sig, self.dog.signalled)  # wake-up fd stays as it was)
            self.installed = True
        except (NotImplementedError, RuntimeError, ValueError):
            pass

    def __exit__(self, *exc: object) -> None:
        if self.installed:
            for sig in self.SIGNALS:
                self.loop.remove_signal_handler(sig)
                if self.before.get(sig) is not None:
                    signal.signal(sig, self.before[sig])


def main(opts: RunOptions) -> int:
    return asyncio.run(run(opts, sys.stdout, sys.stderr, watchdog=True))



def write_usage_error(out: TextIO, error: SparkPairError) -> None:
    """The `error` and `end` lines of a --json run stopped by bad command-line input."""
    from .jsonl import error_fields

    t0 = time.monotonic()
    jl = _json_lines(out, t0)
    jl.write({"type": "error", **error_fields(error)})
    jl.write(_end(int(ExitCode.USAGE), "failed", None, t0, error.message))


def write_interrupted(opts: RunOptions, out: TextIO, err: TextIO,
                      sig: int = signal.SIGINT) -> int:
    """Say that Ctrl-C (or SIGTERM: `sig`) stopped the run before its turn could (the same
    words and, with --json, the same `error` and `end` lines as a turn cancelled by it); the
    exit code."""
    exc = Cancelled(stop_words(sig), hint="nothing was written")
    code = int(exit_code_for(exc))
    Diagnostics(err).say(exc.describe())
    if opts.json:
        from .jsonl import error_fields

        t0 = time.monotonic() if opts.started is None else opts.started
        jl = _json_lines(out, t0)
        jl.write({"type": "error", **error_fields(exc)})
        jl.write(_end(code, "cancelled", None, t0, exc.message))
    return code
