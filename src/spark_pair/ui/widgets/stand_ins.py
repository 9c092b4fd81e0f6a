"""Simple live diff and meter, used until the Line API diff view and the sparkline meter land.

Same API: `feed(events, partial_line)` / `reset()`; `Meter.feed(events)` / `reset()`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from textual.widgets import Log, Static

from ...edits.parser import FileStarted, HunkStarted, LineAdded
from ...edits.paths import shown
from ...protocol.events import Completed, Retrying, Started, TextDelta, Usage
from ...protocol.metrics import estimate_tokens


class DiffView(Log):
    DEFAULT_CSS = """
    DiffView {
        height: 1fr;
        border: round $secondary;
        border-title-align: left;
    }
    """

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.border_title = "Live diff"

    def feed(self, events: Sequence[object], partial_line: str) -> None:
        lines: list[str] = []
        for event in events:
            match event:
                case FileStarted(op_kind=kind, path=path, new_path=new):
                    target = f"{shown(path)} → {shown(new)}" if new else shown(path)
                    lines.append(f"━━ {target}  {kind}")
                case HunkStarted(hunk=h):
                    lines.append(f"@@ -{h.old_start},{h.old_len} +{h.new_start},{h.new_len} @@"
                                 f" {h.section}".rstrip())
                case LineAdded(line=line):
                    lines.append(shown(line))
        if lines:
            self.write_lines(lines)

    def reset(self) -> None:
        self.clear()


class Meter(Static):
    DEFAULT_CSS = """
    Meter {
        height: 1;
        background: $panel;
    }
    """

    def __init__(self, **kwargs: object) -> None:
        super().__init__("", **kwargs)  # type: ignore[arg-type]
        self.reset()

    def reset(self) -> None:
        self.t0: float | None = None
        self.first: float | None = None
        self.chars = 0
        self.text = "TTFT - │ - tok/s │ 0 tok"
        self.retries = 0
        self.usage: Usage | None = None
        self.update(self.text)

    def set_price(self, *args: object) -> None:
        pass

    def feed(self, events: Sequence[object]) -> None:
        now = time.monotonic()
        done: Completed | None = None
        for event in events:
            match event:
                case Started():
                    self.t0 = self.t0 or now
                case TextDelta(text=text):
                    self.first = self.first or now
                    self.chars += len(text)
                case Retrying():
                    self.retries += 1
                case Usage():
                    self.usage = event
                case Completed():
                    done = event
        if done is not None:
            m = done.metrics
            ttft = f"{m.ttft_s * 1000:.0f} ms" if m.ttft_s is not None else "-"
            rate = f"{m.tokens_per_s:,.0f}" if m.tokens_per_s else "-"
            self.update(f"TTFT {ttft} │ {rate} tok/s │ {m.output_tokens:,} tok │ "
                        f"{self.retries} retries")
            return
        tokens = estimate_tokens("x" * self.chars)
        ttft = f"{(self.first - self.t0) * 1000:.0f} ms" if self.first and self.t0 else "-"
        rate = "-"
        if self.first and now > self.first:
            rate = f"{tokens / (now - self.first):,.0f}"
        self.update(f"TTFT {ttft} │ {rate} tok/s │ {tokens:,} tok │ {self.retries} retries")
