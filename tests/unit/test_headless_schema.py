"""JSON lines: every kind of line the writer produces validates against schema.json."""

from __future__ import annotations

import io
import json
from importlib import resources

import jsonschema
import pytest
from support.runs import BY_TYPE, check_line

from spark_pair.base.errors import PolicyRefused, RateLimited
from spark_pair.edits.ops import Create, Delete, Hunk, HunkHeader, Modify, OpKind
from spark_pair.edits.parse_events import FileStarted, HunkStarted
from spark_pair.headless.jsonl import JsonLines, event_to_dict, result_lines
from spark_pair.protocol import events as pe
from spark_pair.session.approval import Decision
from spark_pair.session.events import (
    Applied,
    Decided,
    Looked,
    Refused,
    RepairFinished,
    Stale,
    TurnResult,
    TurnStarted,
)
from spark_pair.session.repair import Mended, RepairOutcome
from spark_pair.workspace.look import Sent


def schema() -> dict:
    return json.loads(resources.files("spark_pair.headless").joinpath("schema.json").read_text())


def validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(schema())


MOD = Modify("a.py", [Hunk(3, 2, 3, 2, [" a", "-b", "+c"])], base_hash="0" * 64)
EVENTS = [
    TurnStarted("t1", "do it", ["a.py"], 120, False),
    pe.Started("r1", "ws", "gpt-5.3-codex-spark", "ws://127.0.0.1:1/v1/responses"),
    pe.TextDelta("--- a/a.py\n"),
    FileStarted(0, OpKind.MODIFY, "a.py"),
    HunkStarted(0, 1, HunkHeader(3, 2, 3, 2, "def f():")),
    pe.Retrying(1, 0.5, "dropped"),
    pe.TransportChanged("ws", "responses", "reconnect budget used"),
    pe.ModelChanged("m1", "m2", "model_not_found"),
    pe.Completed("resp_1", "text", pe.Usage(10, 20), pe.Metrics(0.1, 0.5, 20, 1000.0), 1),
    pe.Completed("resp_2", "text", pe.Usage(10, 20),
                 pe.Metrics(0.1, 0.9, 20, 1000.0, connect_s=0.4), 0),
    pe.Failed(RateLimited("slow down", status=429, retry_after=1.0), retries=4),
    Stale("a.py", None),
    Stale("a.py", 0),
    Decided(0, MOD, Decision("accept", "allowed by flags")),
    Refused(1, Delete("b.py"), "delete needs --allow-delete", "policy"),
    RepairFinished(RepairOutcome(mended=[Mended(0, 1, "a.py", False, "still does not apply")])),
    Applied("t1", ["a.py"], []),
    Looked(("b.py", "parse", "../x"), (Sent("b.py", "asked by the model", 40, "whole", ((1, 9),)),
                                       Sent("c.py", "asked by the model: defines parse", 12,
                                            "regions", ((3, 7),))),
           (("../x", "'..' leaves the repository"),), 52, 180),
]


def test_every_event_line_validates() -> None:
    v = validator()
    out = io.StringIO()
    writer = JsonLines(out)
    for event in EVENTS:
        obj = event_to_dict(event, deltas=True)
        assert obj is not None, event
        writer.write(obj)
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert len(lines) == len(EVENTS)
    for line in lines:
        v.validate(line)
    assert [line["type"] for line in lines][:3] == ["turn", "request", "delta"]
    file = next(line for line in lines if line["type"] == "file")
    hunk = next(line for line in lines if line["type"] == "hunk")
    assert (file["index"], file["op"]) == (0, "modify")
    assert (hunk["file_index"], hunk["hunk_index"], hunk["section"]) == (0, 1, "def f():")


def test_deltas_only_when_asked() -> None:
    assert event_to_dict(pe.TextDelta("x")) is None


def test_result_lines_validate_and_cost_is_computed() -> None:
    result = TurnResult("t1", "refused", operations=[MOD, Create("n.py", "x\ny\n"), Delete("b.py")],
                        decisions=[Decision("accept"), Decision("accept"),
                                   Decision("refuse", "no")],
                        outcomes=["not_applied"] * 3, usage=pe.Usage(1000, 2000), model="m",
                        error=PolicyRefused("refused"))
    lines = result_lines(result, {"m": (1.0, 10.0)})
    for line in lines:
        validator().validate({"t": 0.0, **line})
    assert [ln["op"] for ln in lines[:3]] == ["modify", "create", "delete"]
    assert lines[1]["added"] == 2
    assert lines[-1]["cost_usd"] == pytest.approx(0.021)


def test_schema_rejects_unknown_fields_and_types() -> None:
    v = validator()
    assert not v.is_valid({"type": "stale", "t": 0, "path": "a", "index": None, "extra": 1})
    assert not v.is_valid({"type": "nonsense", "t": 0})
    assert v.is_valid({"type": "stale", "t": 0, "path": "a", "index": None})


def test_the_schema_is_one_branch_per_line_type() -> None:
    """The end-to-end tests check a line against the branch its type names (support.runs):
    the oneOf's verdict only while each branch is a type of its own that it requires."""
    s = schema()
    names = [ref["$ref"].removeprefix("#/$defs/") for ref in s["oneOf"]]
    assert all(list(ref) == ["$ref"] for ref in s["oneOf"])
    assert sorted(names) == sorted(s["$defs"]) and len(set(names)) == len(names)
    for name in names:
        branch = s["$defs"][name]
        assert branch["properties"]["type"] == {"const": name}, name
        assert "type" in branch["required"], name
    assert sorted(BY_TYPE) == sorted(names)


def test_a_line_checked_by_its_type_gets_the_whole_schemas_verdict() -> None:
    lines = [{"t": 0.5, **obj} for obj in map(event_to_dict, EVENTS) if obj is not None]
    stale = {"type": "stale", "t": 0, "path": "a", "index": None}
    cases = [*lines, stale, {**stale, "extra": 1}, {**stale, "type": "hunk"}, {**stale, "t": -1},
             {k: v for k, v in stale.items() if k != "type"}, {**stale, "type": "nonsense"},
             {**stale, "type": None}, {**lines[0], "turn_id": 7}]
    verdicts = []
    for line in cases:
        try:
            check_line(line)
        except (jsonschema.ValidationError, AssertionError):
            verdicts.append(False)
        else:
            verdicts.append(True)
    whole = validator()
    assert verdicts == [whole.is_valid(line) for line in cases]
    assert verdicts.count(True) == len(lines) + 1  # the events' lines and the plain stale


def test_create_and_delete_count_the_hunk_lines_their_diff_had() -> None:
    result = TurnResult("t1", "dry_run", operations=[MOD, Create("n.py", "x\n"), Delete("b.py"),
                                                     Delete("c.py")],
                        decisions=[Decision("skip")] * 4, outcomes=["not_applied"] * 4)
    lines = result_lines(result, None, {0: 1, 1: 1, 2: 1})  # c.py: a header-only delete
    for line in lines:
        validator().validate({"t": 0.0, **line})
    assert [ln["hunks"] for ln in lines] == [1, 1, 1, 0]


def test_a_metrics_line_says_the_connection_set_up_apart_and_older_lines_still_validate() -> None:
    line = event_to_dict(pe.Completed("r", "t", pe.Usage(1, 2),
                                      pe.Metrics(0.05, 0.7, 2, None, connect_s=0.6)))
    assert line is not None and line["ttft_ms"] == 50.0 and line["connect_ms"] == 600.0
    v = validator()
    v.validate({"t": 0.0, **line})
    older = {k: x for k, x in line.items() if k != "connect_ms"}  # before connect_ms existed
    assert v.is_valid({"t": 0.0, **older})
    assert not v.is_valid({"t": 0.0, **line, "connect_ms": -1})
    assert event_to_dict(pe.FirstToken(0.05)) is None  # its TTFT is the metrics line's
