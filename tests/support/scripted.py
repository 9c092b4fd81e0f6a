"""A scripted stand-in for the model client, and a session built on it (the session's unit
tests; the end-to-end tests use the real client against the simulator)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from spark_pair.edits.journal import Journal
from spark_pair.protocol import events as pe
from spark_pair.protocol.records import RequestRecord
from spark_pair.session.parts import TurnRecorder
from spark_pair.session.session import Session
from spark_pair.workspace import Workspace

A = "one\ntwo\nthree\nfour\n"
B = "alpha\nbeta\n"
DIFF = ("--- a/a.txt\n+++ b/a.txt\n@@ -1,4 +1,4 @@\n one\n-two\n+TWO\n three\n four\n"
        "--- /dev/null\n+++ b/c.txt\n@@ -0,0 +1,1 @@\n+new\n"
        "--- a/b.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-alpha\n-beta\n")


class ScriptedClient:
    """Yields the protocol events of one reply; can pause after a given chunk, or sleep `gap`
    seconds before each (as messages arriving over a socket)."""

    def __init__(self, text: str, *, chunk: int = 7, pause_after: int | None = None,
                 fail: Exception | None = None, model_changed: bool = False,
                 gap: float = 0.0) -> None:
        self.text, self.chunk, self.pause_after, self.gap = text, chunk, pause_after, gap
        self.fail, self.model_changed = fail, model_changed
        self.resume = asyncio.Event()
        self.paused = asyncio.Event()
        self.requests: list[pe.TurnRequest] = []
        self.recorder: TurnRecorder | None = None
        self.transport = "ws"
        self.closed = False

    async def stream(self, request: pe.TurnRequest, *, gather: bool = False):
        self.requests.append(request)
        try:
            if self.model_changed:
                yield pe.ModelChanged("old-model", "m", "model_not_found")
            yield pe.Started("req_1", "ws", "m", "ws://127.0.0.1:1/v1/responses")
            if self.fail is not None:
                yield pe.Failed(self.fail, retries=2)
                return
            pieces = [self.text[i:i + self.chunk] for i in range(0, len(self.text), self.chunk)]
            for n, piece in enumerate(pieces):
                pause = self.pause_after is not None and n == self.pause_after
                if pause:
                    self.paused.set()
                if self.gap:
                    await asyncio.sleep(self.gap)
                yield pe.TextDelta(piece)
                if pause:
                    await asyncio.wait_for(self.resume.wait(), 30)
            usage = pe.Usage(100, len(pieces))
            yield usage
            if self.recorder is not None:
                self.recorder.record(RequestRecord(0.0, "m", "ws", "ok"))
            metrics = pe.Metrics(0.01, 0.1, len(pieces), 900.0)
            yield pe.Completed("resp_1", self.text, usage, metrics)
        finally:
            self.closed = True


def make_files(tmp_path: Path) -> Path:
    """A folder holding a.txt and b.txt (the repository of these tests)."""
    root = tmp_path / "repo"
    root.mkdir()
    (root / "a.txt").write_text(A)
    (root / "b.txt").write_text(B)
    return root


def make(repo: Path, client: ScriptedClient, approver, tmp_path: Path, **kw) -> Session:
    recorder = TurnRecorder(kw.pop("store", None))
    client.recorder = recorder
    return Session(repo, client, approver, workspace=Workspace(repo, chained=lambda: True),
                   recorder=recorder,
                   journal=Journal(repo, data_dir=tmp_path / "data"), **kw)


async def collect(session: Session, prompt: str = "edit", files=("a.txt", "b.txt"), on=None,
                  **kw):
    events = []
    async for ev in session.turn(prompt, files, **kw):
        events.append(ev)
        if on is not None:
            await on(ev)
    return events


class RewindingClient(ScriptedClient):
    """Streams a first attempt that deletes b.txt, then a retry that answers differently."""

    async def stream(self, request: pe.TurnRequest, *, gather: bool = False):
        self.requests.append(request)
        first = "--- a/a.txt\n+++ b/a.txt\n@@ -1,4 +1,4 @@\n one\n-two\n+TWO\n three\n four\n" \
                "--- a/b.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-alpha\n"
        keep = first.index("+TWO")
        final = first[:keep] + "+2\n three\n four\n"
        yield pe.Started("req_1", "ws", "m", "ws://127.0.0.1:1/v1/responses")
        yield pe.TextDelta(first)
        yield pe.Retrying(1, 0.0, "dropped")
        yield pe.Rewound(keep, "the retried response differs from the text already shown")
        yield pe.TextDelta(final[keep:])
        usage = pe.Usage(10, 5)
        yield usage
        yield pe.Completed("resp_2", final, usage, pe.Metrics(0.01, 0.1, 5, 900.0), retries=1)
