"""Review of a huge reply: 2,000 hunks over 200 files (~4 MiB of diff) in the app.

    .venv/bin/python benchmarks/bench_review.py [--runs 3] [--files 200] [--hunks 10]

Each run is its own process: the app's main screen (header, files, live diff, review pane,
prompt, meter, footer) headless at 160x45 (--size), opened on a scratch git repository. The
reply is parsed beforehand (the parser's own speed is bench_parse's business) and handed to
the screen as the driver does: one `Driver.FrameArrived` per frame (30 a second), each holding the
parse events of --chunk bytes of the reply, with an `OperationProposed` after each finished
file, so the ~4 MiB stream lasts a couple of seconds and 200 proposals arrive while it runs.
Printed per run, then min / median / max over the runs:
- loop lag max / p99 while streaming: the worst lateness of a 1 ms ticker (target <= 50 ms),
  and the CPU time of the longest loop steps (what the lag would be on an idle machine);
- key -> painted for `j`, `k`, `a`, `r` (median and max of --presses each, the cursor walking
  the 2,000 hunks) and `A` (once, at the end): from the key event to the end of the first
  screen update after the screen handled the review's change (target: a frame, <= 33 ms),
  and the loop's CPU time in that span;
- word marks: a screen of changed pairs scrolled into view: how long its paint takes on the
  loop, and until every word mark on it is painted (they are computed off the loop);
- RSS max of the process (target <= 300 MB).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import logging
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

SIZE = (160, 45)
FPS = 30
KEYS = ("j", "k", "a", "r")
CHORDS = {"j": "alt+j", "k": "alt+k", "a": "alt+a", "r": "alt+r", "A": "alt+shift+a"}  # the keys


def make_reply(files: int, hunks: int, line_bytes: int = 60) -> str:
    out = []
    pad = "x" * max(0, line_bytes - 40)
    for f in range(files):
        out.append(f"--- a/src/mod_{f}.py\n+++ b/src/mod_{f}.py\n")
        for h in range(hunks):
            start = 1 + h * 40
            out.append(f"@@ -{start},7 +{start},7 @@ def f_{h}():\n")
            for c in range(3):
                out.append(f"     ctx_{f}_{h}_{c} = compute({c}, '{pad}')\n")
            out.append(f"-    total = price * count_{h}  # {pad}\n")
            out.append(f"+    total = price * quantity_{h}  # {pad}\n")
            for c in range(3, 6):
                out.append(f"     ctx_{f}_{h}_{c} = compute({c}, '{pad}')\n")
    return "".join(out)


def make_repo(root: Path) -> None:
    root.mkdir()
    (root / "README.md").write_text("scratch\n")
    git = ["git", "-c", "user.name=b", "-c", "user.email=b@localhost", "-c",
           "commit.gpgsign=false"]
    for args in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "start"]):
        subprocess.run(git + args, cwd=root, check=True, capture_output=True)


def frames_of(reply: str, chunk: int) -> Iterator[Any]:
    """The Driver.FrameArrived messages of the reply, made as they are sent (as the session parses
    while the reply arrives: nothing of a frame outlives it but what the screen keeps)."""
    from spark_pair.edits.parser import DiffParser, FileFinished
    from spark_pair.protocol.events import TextDelta
    from spark_pair.session.approval import Proposal
    from spark_pair.session.events import OperationProposed
    from spark_pair.ui.driver import Driver

    parser = DiffParser()
    for i in range(0, len(reply), chunk):
        text = reply[i:i + chunk]
        events: list[Any] = [TextDelta(text)]
        last = i + chunk >= len(reply)
        for ev in [*parser.feed(text), *(parser.close() if last else [])]:
            events.append(ev)
            if isinstance(ev, FileFinished):
                events.append(OperationProposed(Proposal("bench", ev.index, ev.op)))
        yield Driver.FrameArrived(events, text, "" if last else parser.partial_line)


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def record_steps() -> tuple[list[float], list[bool]]:
    """The CPU time of each loop step (callback or task step) while recording[0] is set: the
    work that delays the loop, apart from the time the machine gives other processes."""
    steps: list[float] = []
    recording = [False]
    run = asyncio.events.Handle._run

    def timed(handle: asyncio.events.Handle) -> None:
        if not recording[0]:
            run(handle)
            return
        t = time.thread_time()
        run(handle)
        steps.append(time.thread_time() - t)

    asyncio.events.Handle._run = timed  # type: ignore[method-assign]
    return steps, recording


def record_full_collections(recording: list[bool]) -> list[float]:
    """The CPU time of each full (generation 2) collection while recording[0] is set."""
    full: list[float] = []
    began = [0.0]

    def seen(phase: str, info: dict[str, int]) -> None:
        if info["generation"] == 2 and recording[0]:
            if phase == "start":
                began[0] = time.thread_time()
            else:
                full.append(time.thread_time() - began[0])

    gc.callbacks.append(seen)
    return full


async def one_run(args: argparse.Namespace) -> dict[str, Any]:
    from spark_pair.ui.app import SparkPairApp
    from spark_pair.ui.screens.main import Launch
    from spark_pair.ui.widgets.diff_view import DiffView, Kind
    from spark_pair.ui.widgets.review import ReviewPane

    reply = make_reply(args.files, args.hunks, args.line_bytes)
    n_files, n_hunks = args.files, args.files * args.hunks
    steps, recording = record_steps()
    full = record_full_collections(recording)
    out: dict[str, Any] = {"files": n_files, "hunks": n_hunks, "mib": len(reply) / 2**20,
                           "frames": -(-len(reply) // args.chunk)}
    with tempfile.TemporaryDirectory(prefix="bench-review-") as tmp:
        os.environ["SPARK_PAIR_HOME"] = str(Path(tmp) / "home")
        root = Path(tmp) / "repo"
        make_repo(root)
        launch = Launch(root=root, prewarm=False, overrides={
            "model.base_url": "http://127.0.0.1:9", "model.name": "bench",
            "session.transport": "chat"}, env={"SPARK_PAIR_API_KEY": "bench"})
        app = SparkPairApp(launch)
        async with app.run_test(size=tuple(args.size)) as pilot:
            screen = app.main
            while screen.driver.session is None and screen.open_error is None:
                await pilot.pause(0.01)
            view, pane = screen.query_one(DiffView), screen.query_one(ReviewPane)
            paints: list[tuple[float, float, float]] = []  # screen updates: start, end, CPU
            handled: list[float] = []  # the screen finished handling a review change
            refresh, scroll = screen._compositor_refresh, view.scroll_to_hunk

            def timed_refresh() -> None:
                t = time.perf_counter()
                refresh()
                paints.append((t, time.perf_counter(), time.thread_time()))

            def timed_scroll(*a: Any, **k: Any) -> bool:
                done = scroll(*a, **k)
                handled.append(time.perf_counter())
                return done

            screen._compositor_refresh = timed_refresh  # type: ignore[method-assign]
            view.scroll_to_hunk = timed_scroll  # type: ignore[method-assign]
            await pilot.pause()

            lags: list[float] = []
            stop = False

            async def ticker() -> None:
                while not stop:
                    t = time.perf_counter()
                    await asyncio.sleep(0.001)
                    lags.append(time.perf_counter() - t - 0.001)

            tick = asyncio.create_task(ticker())
            steps.clear()
            recording[0] = True
            start = time.perf_counter()
            for k, frame in enumerate(frames_of(reply, args.chunk)):
                screen.post_message(frame)
                await asyncio.sleep(max(0.0, start + (k + 1) / FPS - time.perf_counter()))
            while len(pane.review.entries) < n_files:
                await asyncio.sleep(0.01)
            await pilot.pause()
            stop = True
            recording[0] = False
            await tick
            out["stream_s"] = time.perf_counter() - start
            steps.sort()
            out["step_cpu_max_ms"] = 1000 * steps[-1]
            out["step_cpu_p99_ms"] = 1000 * steps[int(0.99 * (len(steps) - 1))]
            out["full_gc_n"] = len(full)
            out["full_gc_max_ms"] = 1000 * max(full, default=0.0)
            lags.sort()
            out["lag_max_ms"] = 1000 * lags[-1]
            out["lag_p99_ms"] = 1000 * lags[int(0.99 * (len(lags) - 1))]

            async def press(key: str) -> tuple[float, float]:
                """Key event sent -> the end of the first screen update after the screen
                handled the review's change: wall time, and the loop's CPU time in it."""
                n = len(handled)
                t0, cpu0 = time.perf_counter(), time.thread_time()
                await pilot.press(CHORDS[key])
                for _ in range(2000):
                    if len(handled) > n and any(p[0] >= handled[n] for p in paints[-5:]):
                        break
                    await asyncio.sleep(0.0005)
                end, cpu = next((e, c) for s, e, c in paints if s >= handled[n])
                return 1000 * (end - t0), 1000 * (cpu - cpu0)

            pane.focus()
            await pilot.pause()
            keys: dict[str, list[tuple[float, float]]] = {key: [] for key in KEYS}
            for _ in range(args.presses):
                for key in KEYS:
                    keys[key].append(await press(key))
            for key, times in keys.items():
                out[f"{key}_median_ms"] = statistics.median(t for t, _ in times)
                out[f"{key}_max_ms"] = max(t for t, _ in times)
                out[f"{key}_cpu_median_ms"] = statistics.median(c for _, c in times)
            out["A_ms"], out["A_cpu_ms"] = await press("A")
            undecided = len(pane.review.undecided())

            # word marks: a screen of changed pairs the person has not looked at yet
            row = next(i for i in range(len(view.rows) * 3 // 4, len(view.rows))
                       if view.rows[i].kind == Kind.HUNK)
            n = len(paints)
            t0 = time.perf_counter()
            view.scroll_to(y=row, animate=False, immediate=True)
            for _ in range(4000):  # (older builds worked the marks out while painting)
                if len(paints) > n and not getattr(view, "words_pending", False):
                    break
                await asyncio.sleep(0.001)
            out["marks_ready_ms"] = 1000 * (time.perf_counter() - t0)
            out["marks_paint_ms"] = 1000 * (paints[n][1] - paints[n][0])
        out["undecided_after_A"] = undecided
    out["rss_mb"] = rss_mb()
    return out


ROWS = [
    ("lag_max_ms", "loop lag max while streaming (ms, target <= 50)"),
    ("lag_p99_ms", "loop lag p99 while streaming (ms)"),
    ("step_cpu_max_ms", "longest loop step while streaming, CPU (ms)"),
    ("step_cpu_p99_ms", "loop step p99 while streaming, CPU (ms)"),
    ("full_gc_n", "full collections while streaming"),
    ("full_gc_max_ms", "longest full collection while streaming, CPU (ms)"),
    *[(f"{k}_median_ms", f"`alt+{k}` key -> painted, median (ms)") for k in KEYS],
    *[(f"{k}_max_ms", f"`alt+{k}` key -> painted, max (ms)") for k in KEYS],
    *[(f"{k}_cpu_median_ms", f"`alt+{k}` key -> painted, loop CPU, median (ms)") for k in KEYS],
    ("A_ms", "`alt+A` key -> painted (ms)"),
    ("A_cpu_ms", "`alt+A` key -> painted, loop CPU (ms)"),
    ("marks_paint_ms", "word marks: the screen update on the loop (ms)"),
    ("marks_ready_ms", "word marks: until all on screen are painted (ms)"),
    ("rss_mb", "RSS max (MB, target <= 300)"),
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--files", type=int, default=200)
    ap.add_argument("--hunks", type=int, default=10)
    ap.add_argument("--line-bytes", type=int, default=260)
    ap.add_argument("--chunk", type=int, default=16384,
                    help="reply bytes a frame (16 KiB at 30 frames a second: ~120k tok/s)")
    ap.add_argument("--presses", type=int, default=30,
                    help="presses of each of alt+j alt+k alt+a alt+r")
    ap.add_argument("--size", type=int, nargs=2, default=list(SIZE))
    ap.add_argument("--slow-ms", type=float, default=0,
                    help="with --one: log every loop step slower than this (asyncio debug)")
    ap.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        if args.slow_ms:  # name each loop step slower than this on stderr (asyncio's debug)
            logging.basicConfig(level=logging.WARNING)
            asyncio.get_event_loop_policy().set_event_loop(loop := asyncio.new_event_loop())
            loop.set_debug(True)
            loop.slow_callback_duration = args.slow_ms / 1000
            print(json.dumps(loop.run_until_complete(one_run(args))))
            return
        print(json.dumps(asyncio.run(one_run(args))))
        return
    runs = []
    for n in range(args.runs):
        cmd = [sys.executable, __file__, "--one", *sys.argv[1:]]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            sys.exit(f"run {n + 1} failed:\n{done.stderr[-3000:]}")
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
        print(f"run {n + 1}: " + ", ".join(f"{k} {runs[-1][k]:.1f}" for k, _ in ROWS),
              flush=True)
    first = runs[0]
    print(f"\nreply: {first['mib']:.1f} MiB, {first['files']} files, {first['hunks']} hunks, "
          f"{first['frames']} frames at {FPS}/s, {args.size[0]}x{args.size[1]}; load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}; {len(runs)} runs")
    print(f"{'':52} {'min':>8} {'median':>8} {'max':>8}")
    for key, label in ROWS:
        values = [r[key] for r in runs]
        print(f"{label:52} {min(values):8.1f} {statistics.median(values):8.1f} "
              f"{max(values):8.1f}")


if __name__ == "__main__":
    main()
