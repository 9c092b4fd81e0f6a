"""AI! comments start turns: the trigger (debounced, once per comment), the question turn that
edits nothing, and `spark-pair watch` as a real process against the simulator, stopped by SIGINT."""

from __future__ import annotations

import asyncio
import json
import os
import selectors
import signal
import subprocess
import time
from pathlib import Path

import pytest
from support.runs import check_schema, cli, env_for, make_repo
from support.scripted import A, ScriptedClient, collect, make, make_files

from spark_pair.base.exitcodes import ExitCode
from spark_pair.session.approval import PolicyApprover
from spark_pair.session.events import Refused, TurnStatus
from spark_pair.sim.process import SimProcess
from spark_pair.workspace.aicomments import find_ai_comments
from spark_pair.workspace.aiturns import AITrigger, turn_for

pytestmark = pytest.mark.timeout(90)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_files(tmp_path)


async def test_a_comment_typed_over_several_saves_starts_one_turn(tmp_path: Path) -> None:
    trigger = AITrigger(tmp_path, debounce_s=0.05)
    f = tmp_path / "a.py"
    for text in ("# add a do", "# add a docstring", "# add a docstring AI!"):
        f.write_text(f"x = 1\n{text}\n")
        trigger.feed(find_ai_comments("a.py", f.read_text()))
        await asyncio.sleep(0.01)  # quicker than the debounce: still one burst
    turn = await asyncio.wait_for(trigger.next(), 5)
    assert [c.text for c in turn.comments] == ["add a docstring"] and turn.files == ("a.py",)
    assert not turn.ask and "remove each AI! comment" in turn.prompt
    assert "a.py line 2: add a docstring" in turn.prompt
    # the same comment reported again (another save) never starts a second turn
    trigger.feed(find_ai_comments("a.py", f.read_text()))
    await asyncio.sleep(0.2)
    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(trigger.next(), 0.2)
    trigger.close()


async def test_a_comment_gone_before_the_quiet_time_ends_starts_nothing(tmp_path: Path) -> None:
    trigger = AITrigger(tmp_path, debounce_s=0.05)
    f = tmp_path / "a.py"
    f.write_text("# rename x AI!\nx = 1\n")
    trigger.feed(find_ai_comments("a.py", f.read_text()))
    f.write_text("x = 1\n")  # deleted again before the quiet time ended
    await asyncio.sleep(0.2)
    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(trigger.next(), 0.2)


def test_questions_and_edits_are_separate_turns() -> None:
    [do] = find_ai_comments("a.py", "# add types AI!\n")
    [ask] = find_ai_comments("a.py", "# why is this slow? AI?\n")
    assert turn_for([ask]).ask and "output no diff" in turn_for([ask]).prompt
    assert not turn_for([do]).ask


async def test_a_question_turn_answers_in_prose(repo: Path, tmp_path: Path) -> None:
    answer = "It is slow because it reads the file twice."
    session = make(repo, ScriptedClient(answer), PolicyApprover(True, True, True), tmp_path)
    result = (await collect(session, files=("a.txt",), ask=True))[-1].result
    assert result.status == TurnStatus.NO_CHANGES and result.ok and result.text == answer


async def test_a_question_turn_never_writes_a_diff_it_got(repo: Path, tmp_path: Path) -> None:
    diff = "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n"
    session = make(repo, ScriptedClient(diff), PolicyApprover(True, True, True), tmp_path)
    events = await collect(session, files=("a.txt",), ask=True)
    assert [e.kind for e in events if isinstance(e, Refused)] == ["policy"]
    assert events[-1].result.status == TurnStatus.REFUSED
    assert (repo / "a.txt").read_text() == A


# ---- spark-pair watch, a real process -------------------------------------------------------

SRC = "def area(w, h):\n    return w * h\n"
DO = "def area(w, h):\n    # return 0 for negative sizes AI!\n    return w * h\n"
DONE = "def area(w, h):\n    if w < 0 or h < 0:\n        return 0\n    return w * h\n"
REPLY = ("--- a/geo.py\n+++ b/geo.py\n@@ -1,3 +1,4 @@\n def area(w, h):\n"
         "-    # return 0 for negative sizes AI!\n+    if w < 0 or h < 0:\n+        return 0\n"
         "     return w * h\n")


class Proc:
    """A `spark-pair watch` process whose stdout and stderr are read with a deadline."""

    def __init__(self, repo: Path, home: Path, sim: SimProcess, *args: str) -> None:
        self.p = subprocess.Popen(cli() + ["watch", *args], cwd=repo, env=env_for(home, sim),
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines: list[dict] = []
        self.out = b""
        self.err = ""
        self.sel = selectors.DefaultSelector()
        assert self.p.stdout is not None and self.p.stderr is not None
        self.sel.register(self.p.stdout, selectors.EVENT_READ, "out")
        self.sel.register(self.p.stderr, selectors.EVENT_READ, "err")

    def until(self, done, what: str, timeout: float = 30) -> None:  # noqa: ANN001
        deadline = time.monotonic() + timeout
        while not done():
            if time.monotonic() > deadline or self.p.poll() is not None and not self._read(0):
                raise AssertionError(f"no {what}; stderr: {self.err[-2000:]}")
            self._read(0.5)

    def _read(self, timeout: float) -> bool:
        """Read what is there (raw reads: a buffered readline would hide lines from select)."""
        got = False
        for key, _ in self.sel.select(timeout):
            chunk = os.read(key.fileobj.fileno(), 65536)  # type: ignore[union-attr]
            if not chunk:
                self.sel.unregister(key.fileobj)
                continue
            got = True
            if key.data == "err":
                self.err += chunk.decode()
                continue
            self.out += chunk
            *whole, self.out = self.out.split(b"\n")
            self.lines += [json.loads(line) for line in whole if line.strip()]
        return got

    def stop(self) -> int:
        self.p.send_signal(signal.SIGINT)
        code = self.p.wait(timeout=20)
        while self._read(0.1):
            pass
        return code

    def kill(self) -> None:
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()
        self.sel.close()
        self.p.stdout.close()  # type: ignore[union-attr]
        self.p.stderr.close()  # type: ignore[union-attr]


@pytest.fixture
def geo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", {"geo.py": SRC, "old.py": "# keep this AI!\n"})


def test_watch_runs_a_turn_for_a_saved_ai_comment_and_stops_on_ctrl_c(
        sim: SimProcess, geo: Path, tmp_path: Path) -> None:
    sim.configure(replies=[{"match": "negative sizes", "text": REPLY}])
    proc = Proc(geo, tmp_path / "home", sim, "--apply", "--json")
    try:
        proc.until(lambda: "watching" in proc.err, "start-up line")
        (geo / "geo.py").write_text(DO)
        proc.until(lambda: any(ln["type"] == "end" for ln in proc.lines), "turn")
        code = proc.stop()
    finally:
        proc.kill()
    assert code == 0, proc.err
    check_schema(proc.lines)
    kinds = [ln["type"] for ln in proc.lines]
    assert kinds[0] == "session" and kinds.index("comment") < kinds.index("turn")
    [comment] = [ln for ln in proc.lines if ln["type"] == "comment"]
    assert (comment["path"], comment["line"], comment["kind"]) == ("geo.py", 2, "do")
    end = next(ln for ln in proc.lines if ln["type"] == "end")
    assert end["status"] == "applied" and end["exit_code"] == 0
    assert (geo / "geo.py").read_text() == DONE  # done, and the comment is gone
    # the comment that was there before watch started never started a turn
    assert kinds.count("turn") == 1 and (geo / "old.py").read_text() == "# keep this AI!\n"
    assert "Traceback" not in proc.err


def test_ctrl_c_during_a_turn_cancels_it_and_writes_nothing(sim: SimProcess, geo: Path,
                                                           tmp_path: Path) -> None:
    sim.configure(replies=[{"match": "negative sizes", "text": REPLY}], tps=20, ttft_ms=0)
    proc = Proc(geo, tmp_path / "home", sim, "--apply", "--json")
    try:
        proc.until(lambda: "watching" in proc.err, "start-up line")
        (geo / "geo.py").write_text(DO)
        proc.until(lambda: any(ln["type"] == "request" for ln in proc.lines), "request")
        code = proc.stop()
    finally:
        proc.kill()
    assert code == ExitCode.INTERRUPTED, proc.err
    check_schema(proc.lines)
    end = next(ln for ln in proc.lines if ln["type"] == "end")
    assert end["status"] == "cancelled" and end["exit_name"] == "INTERRUPTED"
    assert (geo / "geo.py").read_text() == DO
    assert "Traceback" not in proc.err
