"""`spark-pair run` end to end: a real process against the simulator process, in a real git repo."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from support.runs import (  # noqa: F401 (fixtures)
    A_NEW,
    MULTI_DIFF,
    NEW_PY,
    UTIL_PY,
    VALIDATOR,
    check_schema,
    cli,
    env_for,
    home,
    lines_of,
    repo,
    run,
    run_editing_mid_stream,
    tree,
)

from spark_pair.base.exitcodes import ExitCode
from spark_pair.sim.process import SimProcess


def test_multi_file_turn_dry_run_refusal_apply_and_undo(sim: SimProcess, repo: Path,
                                                        home: Path) -> None:
    sim.configure(replies=[{"match": "MULTI", "text": MULTI_DIFF}])
    before = tree(repo)

    dry = run(repo, home, sim, "MULTI change", "-f", "a.py", "-f", "old.py")
    assert dry.returncode == 0, dry.stderr
    assert "+++ b/main.py" in dry.stdout and "-    return 'hello ' + name" in dry.stdout
    assert tree(repo) == before

    refused = run(repo, home, sim, "MULTI change", "-f", "a.py", "--apply", "--json")
    assert refused.returncode == ExitCode.POLICY, refused.stderr
    lines = lines_of(refused.stdout)
    check_schema(lines)
    assert tree(repo) == before
    assert {ln["path"] for ln in lines if ln["type"] == "refused"} == {"old.py", "util.py"}
    assert lines[-1]["status"] == "refused" and lines[-1]["exit_name"] == "POLICY"
    assert "allow-delete" in refused.stderr

    done = run(repo, home, sim, "MULTI change", "-f", "a.py", "--apply", "--allow-delete",
               "--allow-rename", "--json")
    assert done.returncode == 0, done.stderr
    lines = lines_of(done.stdout)
    check_schema(lines)
    ops = [ln for ln in lines if ln["type"] == "operation"]
    assert [(o["op"], o["outcome"]) for o in ops] == [
        ("modify", "applied"), ("create", "applied"), ("delete", "applied"), ("rename", "applied")]
    assert tree(repo) == {"a.py": A_NEW.encode(), "main.py": NEW_PY.encode(),
                          "helpers.py": UTIL_PY.encode()}
    assert "sk-test-e2e-secret-key" not in done.stdout + done.stderr

    undo = subprocess.run(cli() + ["undo"], cwd=repo, env=env_for(home, sim),
                          capture_output=True, text=True, timeout=60)
    assert undo.returncode == 0, undo.stderr
    assert tree(repo) == before


def test_prompt_from_stdin_and_empty_prompt(sim: SimProcess, repo: Path, home: Path) -> None:
    sim.configure(replies=[{"match": "MULTI", "text": MULTI_DIFF}])
    res = run(repo, home, sim, "-", stdin="please MULTI\n")
    assert res.returncode == 0, res.stderr
    assert "+++ b/main.py" in res.stdout
    empty = run(repo, home, sim, "-", stdin="  \n")
    assert empty.returncode == ExitCode.USAGE
    assert "prompt read from stdin is empty" in empty.stderr and empty.stdout == ""
    assert "| spark-pair run -" in empty.stderr  # the hint fits the stdin form


@pytest.mark.parametrize("transport", ["responses", "ws"])
def test_drop_mid_stream_retries_and_applies_once(sim: SimProcess, repo: Path, home: Path,
                                                  transport: str) -> None:
    sim.configure(replies=[{"match": "MULTI", "text": MULTI_DIFF}])
    sim.set_faults([{"kind": "drop", "after_tokens": 10, "times": 1}])
    res = run(repo, home, sim, "MULTI change", "--apply", "--allow-delete", "--allow-rename",
              "--json", "--transport", transport)
    assert res.returncode == 0, res.stderr
    lines = lines_of(res.stdout)
    check_schema(lines)
    assert [ln["reason"] for ln in lines if ln["type"] == "retry"] == ["dropped"]
    assert [ln["type"] for ln in lines].count("request") == 1  # retries show as retry lines
    assert len([e for e in sim.requests() if e["transport"] == transport and e["body"]]) == 2
    assert (repo / "a.py").read_text() == A_NEW and (repo / "main.py").read_text() == NEW_PY
    assert len([ln for ln in lines if ln["type"] == "applied"]) == 1
    sim.set_faults([{"kind": "drop", "after_tokens": 10, "times": 1}])
    res = run(repo, home, sim, "MULTI change", "--transport", transport)  # the text meter
    meter = [ln for ln in res.stderr.splitlines() if "TTFT" in ln]
    assert len(meter) == 1 and meter[0].endswith("│ 1 retry")


PAD_DIFF = ("--- /dev/null\n+++ b/pad.txt\n@@ -0,0 +1,150 @@\n"
            + "".join(f"+line {i}\n" for i in range(150)))


@pytest.mark.parametrize("transport", ["responses", "ws", "chat"])
def test_tok_s_after_a_mid_reply_retry_is_the_pace_of_the_attempt_that_answered(
        sim: SimProcess, repo: Path, home: Path, transport: str) -> None:
    """The connection drops a tenth into the reply; the run waits a second, reconnects and asks
    again. The rate is the pace of the attempt that answered, the waits between the attempts
    excluded (counted in, it read 5-9x low), and every place that shows it agrees: run's
    --json and text meter and the request log that `stats` reads. The TTFT is that attempt's,
    and says so."""
    tps = 1200
    sim.configure(replies=[{"match": "PAD", "text": PAD_DIFF}], tps=tps, ttft_ms=150)
    shown = []
    for fmt in (["--json"], []):
        sim.set_faults([{"kind": "drop", "after_tokens": 60, "times": 1}])
        res = run(repo, home, sim, "PAD please", "--transport", transport, *fmt)
        assert res.returncode == 0, res.stderr
        shown.append(res)
    lines = lines_of(shown[0].stdout)
    check_schema(lines)
    [retry] = [ln for ln in lines if ln["type"] == "retry"]
    [m] = [ln for ln in lines if ln["type"] == "metrics"]
    assert retry["reason"] == "dropped" and m["retries"] == 1 and m["attempt"] == 2
    assert tps / 2 < m["tokens_per_s"] < tps * 2, m  # the wait alone is more than the reply
    assert m["ttft_ms"] < m["duration_ms"] - retry["delay_s"] * 1000  # no wait in it
    [meter] = [ln for ln in shown[1].stderr.splitlines() if "TTFT" in ln]
    assert " ms (attempt 2) │ " in meter and meter.endswith("│ 1 retry")
    rate = float(meter.split(" tok/s")[0].rsplit("│ ", 1)[1].replace(",", ""))
    assert tps / 2 < rate < tps * 2, meter
    stats = subprocess.run(cli() + ["stats", "--json"], cwd=repo, env=env_for(home, sim),
                           capture_output=True, text=True, timeout=60)
    total = json.loads(stats.stdout)["total"]
    assert total["requests"] == 2 and total["retries"] == 2
    spread = total["tokens_per_s"]
    assert tps / 2 < spread["min"] <= spread["max"] < tps * 2, spread


def test_ttft_after_rate_limits_is_the_answering_attempts(
        sim: SimProcess, repo: Path, home: Path) -> None:
    """Two 429s with Retry-After 0.5 s, then the answer after the server's 150 ms TTFT: the
    TTFT is that attempt's (it read 1.3 s, the waits counted in), in --json and in the request
    log that `stats` reads; the waits are the retry lines' delays, and in duration_ms."""
    sim.configure(replies=[{"match": "PAD", "text": PAD_DIFF}], tps=1200, ttft_ms=150)
    sim.set_faults([{"kind": "rate_limit", "retry_after": 0.5, "times": 2}])
    res = run(repo, home, sim, "PAD please", "--json")
    assert res.returncode == 0, res.stderr
    lines = lines_of(res.stdout)
    check_schema(lines)
    retries = [ln for ln in lines if ln["type"] == "retry"]
    [m] = [ln for ln in lines if ln["type"] == "metrics"]
    waited = sum(r["delay_s"] for r in retries) * 1000
    assert [r["reason"] for r in retries] == ["rate_limit"] * 2 and m["attempt"] == 3
    assert 150 <= m["ttft_ms"] < 150 + waited / 2, m
    assert m["duration_ms"] >= waited + m["ttft_ms"]
    stats = subprocess.run(cli() + ["stats", "--json"], cwd=repo, env=env_for(home, sim),
                           capture_output=True, text=True, timeout=60)
    ttft = json.loads(stats.stdout)["total"]["ttft_ms"]
    assert ttft["count"] == 1 and ttft["max"] == pytest.approx(m["ttft_ms"], abs=1)


def test_hung_endpoint_ends_at_timeout(sim: SimProcess, repo: Path, home: Path) -> None:
    sim.set_faults([{"kind": "stall", "after_tokens": 2, "seconds": 3600, "times": -1}])
    before = tree(repo)
    res = run(repo, home, sim, "anything", "--apply", "--json", "--timeout", "1.5")
    assert res.returncode == ExitCode.TIMEOUT
    lines = lines_of(res.stdout)
    check_schema(lines)
    assert lines[-1]["status"] == "cancelled" and lines[-1]["exit_name"] == "TIMEOUT"
    assert "--timeout" in res.stderr
    assert tree(repo) == before


def test_file_edited_during_the_stream_is_stale_and_kept(sim: SimProcess, repo: Path,
                                                         home: Path) -> None:
    diff = ("--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n def greet(name):\n"
            "-    return 'hello ' + name\n+    return f'hello {name}'\n")
    mine = "def greet(name):\n    return 'hi ' + name.upper()\n"
    code, lines = run_editing_mid_stream(sim, repo, home, diff, mine)
    assert code == ExitCode.CONFLICT
    assert any(ln["type"] == "stale" and ln["path"] == "a.py" for ln in lines)
    assert any(ln["type"] == "refused" and ln["kind"] == "stale" for ln in lines)
    assert (repo / "a.py").read_text() == mine
    assert not (repo / "pad.txt").exists()


def test_deltas_rebuild_the_reply_and_need_json(sim: SimProcess, repo: Path, home: Path) -> None:
    sim.configure(replies=[{"match": "MULTI", "text": MULTI_DIFF}])
    res = run(repo, home, sim, "MULTI change", "--json", "--deltas")
    assert res.returncode == 0, res.stderr
    lines = lines_of(res.stdout)
    check_schema(lines)
    assert "".join(ln["text"] for ln in lines if ln["type"] == "delta") == MULTI_DIFF
    # a line per message of the server (one token each), never text gathered into fewer
    usage_line = next(ln for ln in lines if ln["type"] == "usage")
    assert len([ln for ln in lines if ln["type"] == "delta"]) == usage_line["output_tokens"]
    assert [ln["decision"] for ln in lines if ln["type"] == "decision"] == ["skip"] * 4
    assert lines[-1]["status"] == "dry_run" and lines[-1]["exit_code"] == 0
    usage = run(repo, home, sim, "MULTI change", "--deltas")
    assert usage.returncode == ExitCode.USAGE and "--deltas needs --json" in usage.stderr


def test_reply_without_a_diff_is_a_model_failure(sim: SimProcess, repo: Path, home: Path) -> None:
    sim.configure(default="Sorry, I cannot help with that.")
    res = run(repo, home, sim, "anything", "--apply", "--json")
    assert res.returncode == ExitCode.MODEL
    lines = lines_of(res.stdout)
    check_schema(lines)
    assert lines[-2]["type"] == "error" and lines[-2]["class"] == "ParseError"


def test_missing_key_is_named_up_front(sim: SimProcess, repo: Path, home: Path) -> None:
    env = env_for(home, sim)
    del env["SPARK_PAIR_API_KEY"]
    sim.configure(default="no diff here")
    res = subprocess.run(cli() + ["run", "anything"], cwd=repo, env=env, capture_output=True,
                         text=True, timeout=60)
    assert "$SPARK_PAIR_API_KEY is not set" in res.stderr
    keyed = run(repo, home, sim, "anything")
    assert "is not set" not in keyed.stderr


def test_fallback_model_price_and_request_record(sim: SimProcess, repo: Path, home: Path) -> None:
    from spark_pair.store import RequestStore

    (repo / ".spark-pair.toml").write_text(
        '[model]\nfallbacks = ["gpt-5.3-codex-spark"]\n\n'
        '[prices."gpt-5.3-codex-spark"]\ninput_per_m = 1.0\noutput_per_m = 10.0\n')
    sim.configure(replies=[{"match": "MULTI", "text": MULTI_DIFF}])
    res = run(repo, home, sim, "MULTI change", "--apply", "--allow-delete", "--allow-rename",
              "--json", "--model", "gpt-4-retired", "--transport", "chat")
    assert res.returncode == 0, res.stderr
    lines = lines_of(res.stdout)
    check_schema(lines)
    changed = [ln for ln in lines if ln["type"] == "model_changed"]
    assert [(c["old"], c["new"]) for c in changed] == [("gpt-4-retired", "gpt-5.3-codex-spark")]
    assert "gpt-4-retired not available; using gpt-5.3-codex-spark" in res.stderr
    usage = next(ln for ln in lines if ln["type"] == "usage")
    assert usage["model"] == "gpt-5.3-codex-spark" and usage["cost_usd"] > 0
    store = RequestStore(home / "data" / "requests.sqlite3")
    try:
        records = store.records()
    finally:
        store.close()
    assert [r.turn_id for r in records] == [lines[-1]["turn_id"]]
    assert records[0].model == "gpt-5.3-codex-spark" and records[0].status == "ok"


@pytest.mark.parametrize("sig, words", [("SIGINT", "interrupted (Ctrl-C)"),
                                        ("SIGTERM", "terminated (SIGTERM)")])
def test_ctrl_c_mid_stream_writes_nothing_and_exits_130(sim: SimProcess, repo: Path,
                                                        home: Path, sig: str, words: str) -> None:
    import signal

    # a reply that still streams once the run has loaded (its request goes out first, so the
    # server is well ahead of a slow start): ~1,400 tokens at 300 tok/s
    padding = "".join(f"+line {i}\n" for i in range(600))
    diff = f"--- /dev/null\n+++ b/pad.txt\n@@ -0,0 +1,600 @@\n{padding}"
    sim.configure(replies=[{"match": "SLOW", "text": diff}], tps=300, ttft_ms=0)
    before = tree(repo)
    proc = subprocess.Popen(cli() + ["run", "SLOW", "--apply", "--json"], cwd=repo,
                            env=env_for(home, sim), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        lines, sent = [], False
        for raw in proc.stdout:  # ends when the process closes stdout (bounded by the sim reply)
            lines.append(json.loads(raw))
            if lines[-1]["type"] == "file" and not sent:
                proc.send_signal(getattr(signal, sig))  # Ctrl-C (or a kill) while it streams
                sent = True
        code = proc.wait(timeout=30)
        assert proc.stderr is not None
        err = proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()
    check_schema(lines)
    assert code == ExitCode.INTERRUPTED
    assert words in err and err.count("nothing was written") == 1, err
    error = next(ln for ln in lines if ln["type"] == "error")
    assert f"{error['message']} {error['hint']}".count("nothing was written") == 1
    assert lines[-1]["status"] == "cancelled" and lines[-1]["exit_name"] == "INTERRUPTED"
    assert tree(repo) == before
    partial = [ln for ln in lines if ln["type"] == "metrics"]  # what was measured, kept
    assert len(partial) == 1 and partial[0]["partial"] is True
    assert partial[0]["output_tokens"] > 0 and partial[0]["ttft_ms"] is not None


def test_config_error_is_a_clear_json_error_with_exit_3(sim: SimProcess, repo: Path,
                                                         home: Path) -> None:
    (repo / ".spark-pair.toml").write_text("[model]\nnmae = 'typo'\n")
    res = run(repo, home, sim, "anything", "--json")
    assert res.returncode == ExitCode.CONFIG
    lines = lines_of(res.stdout)
    for line in lines:
        VALIDATOR.validate(line)
    assert [ln["type"] for ln in lines] == ["error", "end"]
    assert lines[0]["class"] == "ConfigError" and ".spark-pair.toml" in lines[0]["message"]
    assert "Traceback" not in res.stderr


def test_files_outside_the_repo_are_refused(sim: SimProcess, repo: Path, home: Path,
                                            tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("do not send\n")
    for name in (str(tmp_path / "secret.txt"), "../secret.txt", ".git/config"):
        res = run(repo, home, sim, "anything", "-f", name)
        assert res.returncode == ExitCode.USAGE, (name, res.stderr)
        assert "-f" in res.stderr and res.stdout == ""
    assert not sim.requests()  # nothing was sent
    (repo / "sub").mkdir()
    (repo / "sub" / "x.py").write_text("x = 1\n")
    res = subprocess.run(cli() + ["run", "anything", "-f", "x.py", "-f", str(repo / "a.py"),
                                   "--json"], cwd=repo / "sub", env=env_for(home, sim),
                         capture_output=True, text=True, timeout=60)
    turn = next(ln for ln in lines_of(res.stdout) if ln["type"] == "turn")
    assert turn["files"] == ["a.py", "sub/x.py"]


def test_a_folder_means_its_files_and_a_missing_file_is_noted(sim: SimProcess, repo: Path,
                                                             home: Path) -> None:
    (repo / "pkg").mkdir()
    (repo / "pkg" / "m.py").write_text("m = 1\n")
    (repo / "pkg" / "n.py").write_text("n = 2\n")
    (repo / ".gitignore").write_text("*.log\n")
    (repo / "pkg" / "run.log").write_text("noise\n")
    res = run(repo, home, sim, "anything", "-f", "pkg", "-f", "new.py", "--json",
              "--no-auto-context")
    turn = next(ln for ln in lines_of(res.stdout) if ln["type"] == "turn")
    assert sorted(turn["files"]) == ["new.py", "pkg/m.py", "pkg/n.py"]
    assert "new.py does not exist yet" in res.stderr
    (repo / "empty").mkdir()
    res = run(repo, home, sim, "anything", "-f", "empty")
    assert res.returncode == ExitCode.USAGE and "holds no files" in res.stderr


def test_a_reply_naming_a_device_or_a_fifo_never_reads_it(sim: SimProcess, repo: Path,
                                                           home: Path) -> None:
    os.mkfifo(repo / "pipe")  # opening it for reading would block for ever
    for target in ("/dev/zero", "pipe"):
        sim.configure(default=f"--- {target}\n+++ {target}\n@@ -1 +1 @@\n-a\n+b\n")
        res = run(repo, home, sim, "anything", "--apply", "--json", timeout=30)
        lines = lines_of(res.stdout)
        check_schema(lines)
        assert res.returncode not in (0, 1), (target, res.stderr)
        assert "internal error" not in res.stderr and "Traceback" not in res.stderr
    assert (repo / "pipe").is_fifo()


BAD_DIFF = ("--- a/a.py\n+++ b/a.py\n@@ -1,3 +1,3 @@\n def greet(name):\n"
            f"-    return 'goodbye ' + name  # {'x' * 150}\n+    return 'bye'\n \n")


def test_a_dry_run_checks_the_diff_and_reports_a_conflict_like_apply(sim: SimProcess, repo: Path,
                                                                     home: Path) -> None:
    sim.configure(replies=[{"match": "BAD", "text": BAD_DIFF}])
    before = tree(repo)
    for extra in ((), ("--apply",)):
        res = run(repo, home, sim, "BAD change", *extra)
        assert res.returncode == ExitCode.CONFLICT, (extra, res.stderr)
        assert "dry run: nothing was written" not in res.stderr
        assert "a.py hunk @@ -1,3 +1,3 @@: its lines are not in the file" in res.stderr
        # the line that is nowhere is named; the hunk is shown once, on its own lines
        assert "\n  line 2 of the hunk (line 2 by its @@ line) is nowhere in the file:" in (
            res.stderr)
        assert res.stderr.count("goodbye") == 2
        assert res.stderr.count("    -    return 'goodbye '") == 1
        assert max(len(line) for line in res.stderr.splitlines() if "│" not in line) <= 80
        js = run(repo, home, sim, "BAD change", "--json", *extra)
        assert js.returncode == ExitCode.CONFLICT
        lines = lines_of(js.stdout)
        check_schema(lines)
        refused = [ln for ln in lines if ln["type"] == "refused"]
        assert [(r["path"], r["kind"], r["index"]) for r in refused] == [("a.py", "conflict", 0)]
        assert lines[-2]["type"] == "error" and lines[-2]["class"] == "ConflictError"
        assert lines[-1]["status"] == "conflict" and lines[-1]["exit_name"] == "CONFLICT"
    dry = run(repo, home, sim, "BAD change")
    assert "-    return 'goodbye '" in dry.stdout  # the diff is still printed
    assert tree(repo) == before


def test_a_create_over_an_existing_file_is_a_conflict_not_stale(sim: SimProcess, repo: Path,
                                                                 home: Path) -> None:
    sim.configure(replies=[{"match": "CREATE", "text":
                            "--- /dev/null\n+++ b/a.py\n@@ -0,0 +1,2 @@\n+x = 1\n+y = 2\n"}])
    before = tree(repo)
    for extra in (("--apply",), ()):
        res = run(repo, home, sim, "CREATE it", "--json", *extra)
        assert res.returncode == ExitCode.CONFLICT, res.stderr
        lines = lines_of(res.stdout)
        check_schema(lines)
        assert not [ln for ln in lines if ln["type"] == "stale"]
        assert [ln["kind"] for ln in lines if ln["type"] == "refused"] == ["conflict"]
        assert lines[-2]["class"] == "ConflictError"
        assert "a.py already exists; a create never overwrites" in res.stderr
        assert "stale" not in res.stderr
    assert tree(repo) == before


def test_bad_timeouts_and_click_usage_errors_with_json(sim: SimProcess, repo: Path,
                                                       home: Path) -> None:
    for value in ("nan", "inf", "-1", "0"):
        res = run(repo, home, sim, "x", "--timeout", value)
        assert res.returncode == ExitCode.USAGE, (value, res.stderr)
        assert "--timeout" in res.stderr and res.stdout == ""
    for args in (("x", "--json", "--timeout", "-1"), ("x", "--json", "--bogus"), ("--json",)):
        res = run(repo, home, sim, *args)
        assert res.returncode == ExitCode.USAGE, args
        lines = lines_of(res.stdout)
        for line in lines:
            VALIDATOR.validate(line)
        assert [ln["type"] for ln in lines] == ["error", "end"], args
        assert lines[0]["class"] == "UsageError" and lines[0]["message"] in res.stderr
        assert lines[1]["exit_code"] == ExitCode.USAGE and lines[1]["exit_name"] == "USAGE"
    assert not sim.requests()


def test_refusal_names_the_path_and_json_follows_the_documented_order(sim: SimProcess,
                                                                      repo: Path,
                                                                      home: Path) -> None:
    sim.configure(replies=[{"match": "MULTI", "text": MULTI_DIFF}])
    res = run(repo, home, sim, "MULTI change", "--apply", "--allow-rename", "--json")
    assert res.returncode == ExitCode.POLICY
    lines = lines_of(res.stdout)
    check_schema(lines)
    refused = [ln for ln in lines if ln["type"] == "refused"]
    assert [(r["index"], r["path"]) for r in refused] == [(2, "old.py")]
    error = lines[-2]
    assert error["class"] == "PolicyRefused" and error["message"].startswith(
        "delete old.py refused"
    )
    assert "operation 3" not in res.stderr and "delete old.py refused" in res.stderr
    ops = {ln["op"]: ln for ln in lines if ln["type"] == "operation"}
    hunk_lines = [ln["file_index"] for ln in lines if ln["type"] == "hunk"]
    for op in ops.values():
        assert op["hunks"] == hunk_lines.count(op["index"]), op
    assert ops["create"]["hunks"] == 1 and ops["delete"]["hunks"] == 1
    types = [ln["type"] for ln in lines]
    # documented order: streaming lines and metrics as they happen (the last decisions may
    # follow metrics), then the apply step, the operations, usage, error, end
    after = types.index("metrics")
    assert set(types[after + 1:]) <= {"decision", "stale", "refused", "operation", "usage",
                                      "error", "end"}
    first_apply = min(i for i, t in enumerate(types) if t in ("refused", "operation"))
    assert "decision" not in types[first_apply:]
    assert types.count("decision") == 4
    assert types[-4:] == ["operation", "usage", "error", "end"]


def test_applied_line_fits_80_columns(sim: SimProcess, repo: Path, home: Path) -> None:
    names = [f"pkg/a_long_module_name_number_{i:02d}.py" for i in range(12)]
    diff = "".join(f"--- /dev/null\n+++ b/{n}\n@@ -0,0 +1 @@\n+x = {i}\n"
                   for i, n in enumerate(names))
    sim.configure(replies=[{"match": "MANY", "text": diff}])
    res = run(repo, home, sim, "MANY files", "--apply")
    assert res.returncode == 0, res.stderr
    text = [line for line in res.stderr.splitlines() if "│" not in line]
    assert max(len(line) for line in text) <= 80, text
    assert any(line.startswith("spark-pair: applied turn") for line in text)
    assert any("undo: spark-pair undo --turn" in line for line in text)
    assert any("more)" in line for line in text)


def test_a_turn_never_writes_the_project_config(sim: SimProcess, repo: Path, home: Path) -> None:
    before = tree(repo)
    evil = "--- /dev/null\n+++ b/.spark-pair.toml\n@@ -0,0 +1,2 @@\n+[model]\n+base_url = \"http://127.0.0.1:9\"\n"
    sim.configure(default=evil)
    res = run(repo, home, sim, "anything", "--apply", "--allow-delete", "--allow-rename",
              "--json")
    lines = lines_of(res.stdout)
    check_schema(lines)
    assert res.returncode == ExitCode.POLICY, res.stderr
    refused = [ln for ln in lines if ln["type"] == "refused"]
    assert refused and "own config" in refused[0]["reason"]
    assert tree(repo) == before and not (repo / ".spark-pair.toml").exists()


def test_a_turn_that_changes_nothing_offers_no_undo(sim: SimProcess, repo: Path,
                                                    home: Path) -> None:
    before = tree(repo)
    sim.configure(default="diff --git a/a.py b/a.py\nrename from a.py\nrename to ./a.py\n")
    res = run(repo, home, sim, "anything", "--apply", "--allow-rename")
    assert res.returncode == 0, res.stderr
    assert "changed no file" in res.stderr and "undo --turn" not in res.stderr
    assert tree(repo) == before


def test_a_model_failure_writes_one_error_line(sim: SimProcess, repo: Path, home: Path) -> None:
    """The stream's failure and the turn's result name the same error: one `error` line."""
    sim.configure(api_key="sk-some-other-key")  # the run's key is refused: 401
    res = run(repo, home, sim, "change it", "--json", "--transport", "chat")
    assert res.returncode == 4, res.stderr
    lines = lines_of(res.stdout)
    check_schema(lines)
    errors = [ln for ln in lines if ln["type"] == "error"]
    assert len(errors) == 1 and errors[0]["status"] == 401, errors


def test_a_pure_rename_ending_the_reply_without_a_newline_applies(sim: SimProcess, repo: Path,
                                                                   home: Path) -> None:
    sim.configure(replies=[{"match": "RENAME", "text": "diff --git a/util.py b/helpers.py\n"
                            "similarity index 100%\nrename from util.py\nrename to helpers.py"}])
    res = run(repo, home, sim, "RENAME util", "-f", "util.py", "--apply", "--allow-rename")
    assert res.returncode == 0, res.stderr
    assert not (repo / "util.py").exists() and (repo / "helpers.py").read_text() == UTIL_PY
