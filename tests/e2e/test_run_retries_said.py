"""Retries said and counted as a user meets them: `spark-pair run` against the simulator
process, in a real git repository: the repair request's retries are said as the main
request's are, and a run stopped while retrying counts the retries it made."""

from __future__ import annotations

from pathlib import Path

from support.runs import check_schema, home, lines_of, repo, run  # noqa: F401 (fixtures)
from test_run_repair import RIGHT, _script

from spark_pair.base.exitcodes import ExitCode
from spark_pair.sim.process import SimProcess


def test_the_repair_requests_retries_are_said_on_stderr_and_in_json(
        sim: SimProcess, repo: Path, home: Path) -> None:
    _script(sim, RIGHT)
    # the main request takes the harmless fault (a buffered body); every later one drops
    sim.set_faults([{"kind": "buffer", "times": 1},
                    {"kind": "drop", "times": -1, "after_tokens": 3}])
    done = run(repo, home, sim, "GREET with an f-string", "-f", "a.py", "--apply", "--json",
               "--transport", "chat", "--timeout", "4")
    assert done.returncode == ExitCode.TIMEOUT, done.stderr
    said = done.stderr.splitlines()
    asking = next(i for i, line in enumerate(said) if "asking" in line)
    retries = [line for line in said[asking:] if line.startswith("spark-pair: repair: retry ")]
    assert retries and retries[0].startswith("spark-pair: repair: retry 1 in "), said
    assert retries[0].endswith("(dropped)")
    lines = lines_of(done.stdout)
    check_schema(lines)
    kinds = [ln["type"] for ln in lines]
    after = kinds[kinds.index("metrics"):]  # the main request's reply had ended by then
    json_retries = [ln for ln in lines[kinds.index("metrics"):] if ln["type"] == "retry"]
    assert "retry" not in kinds[:kinds.index("metrics")]  # the main request made none
    assert len(json_retries) == len(retries) and after.count("retry") == len(retries)
    assert [r["attempt"] for r in json_retries] == list(range(1, len(retries) + 1))
    assert {r["reason"] for r in json_retries} == {"dropped"}
    # the main request's own count stays its own
    metrics = next(ln for ln in lines if ln["type"] == "metrics")
    assert metrics["retries"] == 0


def test_a_run_stopped_while_retrying_counts_the_retries_it_made(
        sim: SimProcess, repo: Path, home: Path) -> None:
    sim.set_faults([{"kind": "drop", "times": 100, "after_tokens": 10}])
    done = run(repo, home, sim, "make greet shout", "-f", "a.py", "--json", "--timeout", "4")
    assert done.returncode == ExitCode.TIMEOUT, done.stderr
    said = [line for line in done.stderr.splitlines() if line.startswith("spark-pair: retry ")]
    assert len(said) >= 2, done.stderr  # (waits of 1 s, then 2 s, in 4 s)
    lines = lines_of(done.stdout)
    check_schema(lines)
    metrics = next(ln for ln in lines if ln["type"] == "metrics")
    assert metrics["partial"] is True
    assert metrics["retries"] == len(said) == metrics["attempt"] - 1, metrics
    assert len([ln for ln in lines if ln["type"] == "retry"]) == len(said)
