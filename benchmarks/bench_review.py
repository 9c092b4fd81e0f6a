"""Review of a huge reply: 2,000 hunks over 200 files (~4 MiB of diff) in the app's panes.

    .venv/bin/python benchmarks/bench_review.py [--files 200] [--hunks 10] [--chunk 65536]

A headless Textual app at 160x45 holds the live DiffView and the ReviewPane. The reply is
parsed beforehand (the parser's own speed is bench_parse's business) and fed one batch per
frame (30 a second), each batch the parse events of --chunk bytes of the reply, so the ~4 MiB
stream lasts a few seconds; each finished file is proposed to the review pane as the session
would. Printed:
- loop lag max / p99 while streaming: the worst lateness of a 1 ms ticker (target <= 50 ms);
- RSS max of this process (target <= 300 MB);
- review key answer: `a` pressed on a hunk until the screen has handled it, median and max of
  40 presses (target: within a frame, ~16 ms at 60 Hz);
- word marks: painting a full screen of changed pairs once the files are complete.
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import statistics
import time

from textual.app import App, ComposeResult

from spark_pair.edits.parser import DiffParser, FileFinished
from spark_pair.protocol.events import TextDelta
from spark_pair.ui.themes import diff_variable_defaults
from spark_pair.ui.widgets.diff_view import DiffView
from spark_pair.ui.widgets.review import ReviewPane

SIZE = (160, 45)
FPS = 30


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


class ReviewApp(App[None]):
    def get_theme_variable_defaults(self) -> dict[str, str]:
        return diff_variable_defaults(self.current_theme)

    def compose(self) -> ComposeResult:
        yield DiffView()
        yield ReviewPane()


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def main(args: argparse.Namespace) -> None:
    reply = make_reply(args.files, args.hunks, args.line_bytes)
    parser = DiffParser()
    batches = []
    for i in range(0, len(reply), args.chunk):
        chunk = reply[i:i + args.chunk]
        batches.append([TextDelta(chunk), *parser.feed(chunk)])
    batches[-1] += parser.close()
    n_hunks = sum(len(getattr(op, "hunks", [])) for op in parser.operations())
    print(f"reply: {len(reply) / 2**20:.1f} MiB, {len(parser.operations())} files, "
          f"{n_hunks} hunks, {len(batches)} frames")
    app = ReviewApp()
    async with app.run_test(size=SIZE) as pilot:
        view, pane = app.query_one(DiffView), app.query_one(ReviewPane)
        lags: list[float] = []
        stop = False

        async def ticker() -> None:
            while not stop:
                t = time.perf_counter()
                await asyncio.sleep(0.001)
                lags.append(time.perf_counter() - t - 0.001)

        tick = asyncio.create_task(ticker())
        start = time.perf_counter()
        for k, events in enumerate(batches):
            view.feed(events, parser.partial_line if k < len(batches) - 1 else "")
            for ev in events if args.pane else ():
                if isinstance(ev, FileFinished):
                    pane.propose(ev.index, ev.op)
            await asyncio.sleep(max(0.0, start + (k + 1) / FPS - time.perf_counter()))
        await pilot.pause()
        stop = True
        await tick
        stream_s = time.perf_counter() - start
        lags.sort()
        print(f"stream: {stream_s:.1f} s; loop lag max {1000 * lags[-1]:.0f} ms, "
              f"p99 {1000 * lags[int(0.99 * (len(lags) - 1))]:.1f} ms "
              f"(target <= 50 ms)")
        pane.focus()
        await pilot.pause()
        answers = []
        for _ in range(40):
            t = time.perf_counter()
            await pilot.press("a")
            await pilot.pause()
            answers.append(time.perf_counter() - t)
        print(f"review key `a`: median {1000 * statistics.median(answers):.1f} ms, "
              f"max {1000 * max(answers):.1f} ms (target: within a frame)")
        view.scroll_to(y=len(view.rows) // 2, animate=False)
        await pilot.pause()
        view._cache.clear()
        t = time.perf_counter()
        for y in range(SIZE[1]):
            view.render_line(y)
        print(f"word marks: a full screen painted in {1000 * (time.perf_counter() - t):.1f} ms")
    print(f"RSS max: {rss_mb():.0f} MB (target <= 300 MB)")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--files", type=int, default=200)
    ap.add_argument("--hunks", type=int, default=10)
    ap.add_argument("--line-bytes", type=int, default=260)
    ap.add_argument("--chunk", type=int, default=65536)
    ap.add_argument("--no-pane", dest="pane", action="store_false",
                    help="leave the review pane out of the stream (the diff view's own share)")
    asyncio.run(main(ap.parse_args()))
