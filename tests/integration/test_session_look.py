"""The second look over a session's turns against the simulator process: the look's request is
the turn's (logged under its id), what it sent counts as seen, and the next turn goes on from
it (chained on the WebSocket; the history resent over HTTP)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.context import make_repo

from spark_pair.edits.journal import Journal
from spark_pair.protocol.client import ClientOptions, ModelClient
from spark_pair.session.approval import PolicyApprover
from spark_pair.session.events import Looked, Stale, TurnFinished
from spark_pair.session.parts import TurnRecorder
from spark_pair.session.session import Session
from spark_pair.sim.process import SimProcess
from spark_pair.workspace.autocontext import AutoContext
from spark_pair.workspace.context import Workspace
from spark_pair.workspace.look import LOOK_RULE
from spark_pair.workspace.prompt import SYSTEM_PROMPT

UTIL = "def slugify(text):\n    return text.lower()\n\n\ndef shout(text):\n    return text\n"
FIRST = ("--- a/pkg/util.py\n+++ b/pkg/util.py\n@@ -1,2 +1,2 @@\n def slugify(text):\n"
         "-    return text.lower()\n+    return text.strip().lower()\n")
SECOND = ("--- a/pkg/util.py\n+++ b/pkg/util.py\n@@ -5,2 +5,2 @@\n def shout(text):\n"
          "-    return text\n+    return text.upper()\n")


class Kept:
    def __init__(self) -> None:
        self.records: list = []

    def record(self, rec) -> None:
        self.records.append(rec)


@pytest.mark.parametrize("transport", ["ws", "responses"])
async def test_a_look_is_part_of_its_turn_and_the_next_turn_goes_on_from_it(
        sim: SimProcess, tmp_path: Path, transport: str) -> None:
    repo = make_repo(tmp_path / "repo", {"pkg/util.py": UTIL, "main.py": "print(1)\n"})
    sim.configure(replies=[{"match": "You asked for: ", "text": FIRST},
                           {"match": "trim", "text": "NEED: pkg/util.py\n"},
                           {"match": "louder", "text": SECOND}])
    options = ClientOptions(base_url=sim.base_url, api_key="sk-look-test-key",
                            model="gpt-5.3-codex-spark", transport=transport)
    kept = Kept()
    recorder = TurnRecorder(kept)
    async with ModelClient(options, recorder=recorder) as client:
        workspace = Workspace(repo, chained=lambda: client.transport == "ws",
                              system_prompt=SYSTEM_PROMPT + LOOK_RULE, auto=AutoContext(repo))
        session = Session(repo, client, PolicyApprover(apply=True), workspace=workspace,
                          journal=Journal(repo, data_dir=tmp_path / "data"), recorder=recorder)
        events = [e async for e in session.turn("trim the input first", choose=True)]
        looked = [e for e in events if isinstance(e, Looked)]
        result = events[-1].result
        assert isinstance(events[-1], TurnFinished) and result.error is None, result.error
        assert [f.path for f in looked[0].files] == ["pkg/util.py"]
        assert "strip()" in (repo / "pkg" / "util.py").read_text()
        assert [r.task for r in kept.records] == ["edit", "look"]
        assert {r.turn_id for r in kept.records} == {result.turn_id}
        events = [e async for e in session.turn("make shout louder", choose=True)]
        assert events[-1].result.error is None, events[-1].result.error
        assert "upper()" in (repo / "pkg" / "util.py").read_text()
    bodies = [r["body"] for r in sim.requests() if r["body"].get("generate") is not False]
    assert len(bodies) == 3
    last = bodies[-1]
    if transport == "ws":  # chained on the look's reply: the file it saw whole is not resent
        assert last["previous_response_id"] == result.response_id
        assert "def slugify" not in str(last["input"])
    else:  # the history goes again, the look's reply and the file an earlier turn's
        assert "def shout" in str(last["input"])


async def test_a_file_the_look_sent_that_changes_on_disk_is_stale(sim: SimProcess,
                                                                   tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"pkg/util.py": UTIL})
    sim.configure(replies=[{"match": "You asked for: ", "text": FIRST},
                           {"match": "trim", "text": "NEED: pkg/util.py\n"}], ttft_ms=400)
    options = ClientOptions(base_url=sim.base_url, api_key="sk-look-test-key",
                            model="gpt-5.3-codex-spark", transport="ws")
    async with ModelClient(options) as client:
        workspace = Workspace(repo, system_prompt=SYSTEM_PROMPT + LOOK_RULE,
                              auto=AutoContext(repo))
        session = Session(repo, client, PolicyApprover(apply=True), workspace=workspace,
                          journal=Journal(repo, data_dir=tmp_path / "data"))
        events = []
        async for event in session.turn("trim the input first", choose=True):
            events.append(event)
            if isinstance(event, Looked):  # changed by a person while the diff is written
                (repo / "pkg" / "util.py").write_text("# mine\n" + UTIL)
    assert any(isinstance(e, Stale) and e.path == "pkg/util.py" for e in events)
    # asked again against the file as it is now: the person's line stays, the edit goes on it
    assert (repo / "pkg" / "util.py").read_text() == "# mine\n" + UTIL.replace(
        "text.lower()", "text.strip().lower()")


def test_what_the_look_sends_stays_within_its_cap(tmp_path: Path) -> None:
    from spark_pair.workspace.files import read_text
    from spark_pair.workspace.index import RepoIndex
    from spark_pair.workspace.look import look_up

    big = "".join(f"def helper_{n}(value):\n    return value * {n}\n\n" for n in range(2000))
    repo = make_repo(tmp_path / "repo", {"big.py": big, "pkg/util.py": UTIL})
    index = RepoIndex(repo)
    found = look_up(repo, index, ["big.py", "helper_1500", "pkg/util.py"], cap=500,
                    read=lambda rel: read_text(repo, rel))
    assert found.tokens <= 500
    sent = {f.path: f for f in found.files}
    assert sent["big.py"].shown == "regions"  # cut, around the definition it asked for
    assert any(a <= 4501 <= b for a, b in sent["big.py"].regions)  # def helper_1500
    # what did not fit is said, never dropped in silence
    assert "pkg/util.py" in sent or any(n == "pkg/util.py" for n, _ in found.refused)
    assert "def helper_1500(value):" in found.text
