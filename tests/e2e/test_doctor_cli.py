"""`spark-pair doctor` end to end: config from a real project file and env, JSON, exit codes."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from spark_pair.cli.main import main

KEY = "sk-doctor-cli-key-0001"


@pytest.fixture
def project(sim, tmp_path, monkeypatch):
    """A project folder with a config file; the base URL and key come from the environment."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SPARK_PAIR_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("SPARK_PAIR_BASE_URL", sim.base_url)
    monkeypatch.setenv("SPARK_PAIR_API_KEY", KEY)
    for name in ("SPARK_PAIR_MODEL", "SPARK_PAIR_TRANSPORT", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / ".spark-pair.toml").write_text(
        '[model]\nname = "gpt-5.3-codex-spark"\nfallbacks = ["gpt-5.3-codex"]\n')
    sim.configure(api_key=KEY, replies=[{"match": "What number", "text": "42"}])
    return tmp_path


def run(*args: str, env: dict[str, str] | None = None):
    return CliRunner().invoke(main, ["doctor", "--check-timeout", "3", *args], env=env)


def test_json_on_a_healthy_set_up(project):
    result = run("--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["ok"] is True and data["exit_code"] == 0 and data["failed_check"] is None
    config = data["checks"][0]
    assert config["id"] == "config" and config["status"] == "pass"
    assert ".spark-pair.toml" in config["detail"]  # where the model name came from
    assert "SPARK_PAIR_BASE_URL" in config["detail"]
    assert KEY not in result.output


def test_text_output_fits_80_columns(project):
    result = run(env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert sum(line.startswith("✓") for line in lines) == 10
    assert "All checks passed" in result.stdout


def test_wrong_key_exits_1_with_the_hint(project, monkeypatch):
    monkeypatch.setenv("SPARK_PAIR_API_KEY", "sk-not-the-right-one-9")
    result = run()
    assert result.exit_code == 1
    assert "✗ API key accepted" in result.stdout and "fix:" in result.stdout
    assert "needs 'API key accepted' to pass" in result.stdout  # skips name the check
    assert "sk-not-the-right-one-9" not in result.output


def test_model_flag_overrides_the_file(project):
    result = run("--json", "--model", "gpt-0-unknown")
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert data["failed_check"] == "models"


def test_broken_config_file_exits_3(project):
    (project / ".spark-pair.toml").write_text("[model\nname = 'x'\n")
    result = run("--json")
    assert result.exit_code == 3, result.output
    data = json.loads(result.stdout)
    assert data["failed_check"] == "config"
    assert ".spark-pair.toml" in data["checks"][0]["detail"]


def test_text_that_is_not_ours_is_never_read_as_markup(project):
    result = run("--model", "nope[/b]", env={"COLUMNS": "80"})
    assert result.exit_code == 1, result.output
    assert not isinstance(result.exception, Exception) or isinstance(result.exception,
                                                                     SystemExit)
    assert "nope[/b]" in result.stdout and "[model] name" in result.stdout


def test_a_failure_at_80_columns_wraps_with_an_indent(project):
    result = run("--base-url", "http://127.0.0.1:9/api/deeper/path/for/a/long/line",
                 env={"COLUMNS": "80"})
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80
    for line in lines[1:]:  # a check row, its indented lines, or the summary
        assert line[:1] in ("✓", "✗", "-", " ") or line.startswith("Doctor found"), line
    assert not any(line.strip().startswith(("ms", "s)")) for line in lines)
    assert "Doctor found a problem at 'DNS / connect / TLS'" in result.stdout


def test_wrap_keeps_a_number_with_its_unit():
    from spark_pair.base.termwrap import wrap

    text = "responses: TTFT 10 ms, 200 tokens, 5,411 tok/s, 200 deltas spread over 165 ms"
    lines = wrap(text, 78, "    ", "      ")
    assert lines[-1].strip() == "165 ms"
    assert all(len(line) <= 78 for line in lines)


def test_help_says_what_a_note_a_pass_and_a_failure_mean():
    from click.testing import CliRunner

    from spark_pair.cli.main import main

    text = CliRunner().invoke(main, ["doctor", "--help"]).output
    for word in ("✓ pass", "✓ + note", "✗ fail", "- skipped", "transport = auto"):
        assert word in text


@pytest.mark.parametrize("source", ["env", "flag", "file"])
def test_whitespace_around_the_base_url_is_removed_and_noted_once(project, sim, monkeypatch,
                                                                  source):
    """The same behaviour wherever the URL comes from: stripped, one note, doctor passes."""
    padded = f"  {sim.base_url}\n"
    args: list[str] = []
    if source == "env":
        monkeypatch.setenv("SPARK_PAIR_BASE_URL", padded)
    elif source == "flag":
        args = ["--base-url", padded]
    else:
        monkeypatch.delenv("SPARK_PAIR_BASE_URL")
        with (project / ".spark-pair.toml").open("a") as f:
            f.write(f"base_url = {json.dumps(padded)}\n")
    result = run("--json", *args)
    data = json.loads(result.stdout)
    checks = {c["id"]: c for c in data["checks"]}
    assert result.exit_code == 0 and data["ok"], [(c["id"], c["detail"]) for c in data["checks"]]
    shape = checks["base_url"]
    assert shape["status"] == "pass" and "whitespace" in shape["note"]
    assert sim.base_url in shape["detail"]
    assert "leading/trailing" not in checks["config"]["detail"]  # explained once, by base_url
    text = run(*args)
    assert text.exit_code == 0 and text.stdout.count("leading/trailing whitespace") == 1
