import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from spark_pair.base.config import load_settings
from spark_pair.base.errors import ConfigError
from spark_pair.protocol.client import ClientOptions


@pytest.fixture
def home(tmp_path, monkeypatch):
    home = tmp_path / "home"
    monkeypatch.setenv("SPARK_PAIR_HOME", str(home))
    (home / "config").mkdir(parents=True)
    return home


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_precedence_defaults_user_project_env_flags(home, tmp_path):
    write(home / "config" / "config.toml",
          '[model]\nname = "user-model"\nbase_url = "https://user.example/api"\n'
          '[request]\nmax_tokens = 1000\n')
    project = tmp_path / "proj"
    write(
        project / ".spark-pair.toml",
        '[model]\nname = "proj-model"\n\n[session]\ntransport = "chat"\n',
    )
    env = {"SPARK_PAIR_TRANSPORT": "responses"}
    s = load_settings(cwd=project, env=env, overrides={"model.name": "flag-model"})
    assert s.model.name == "flag-model" and s.sources["model.name"] == "flag --model"
    assert s.model.base_url == "https://user.example/api"
    assert s.sources["model.base_url"].startswith("user file") and s.sources[
        "model.base_url"
    ].endswith(":3")
    assert (
        s.session.transport == "responses"
        and s.sources["session.transport"] == "env SPARK_PAIR_TRANSPORT"
    )
    assert s.request.max_tokens == 1000
    assert s.request.temperature == 0.2 and s.sources["request.temperature"] == "default"
    s2 = load_settings(cwd=project, env={})
    assert s2.model.name == "proj-model" and s2.session.transport == "chat"
    assert "project file" in s2.sources["session.transport"] and s2.sources[
        "session.transport"
    ].endswith(":5")


def test_env_interpolation_and_key_from_named_variable(home, tmp_path):
    write(tmp_path / ".spark-pair.toml",
          '[model]\nbase_url = "${GW}/api"\napi_key = "${TEAM_KEY}"\nfallbacks = ["a", "b"]\n')
    s = load_settings(cwd=tmp_path, env={"GW": "https://gw.example", "TEAM_KEY": "sk-team-123456"})
    assert s.model.base_url == "https://gw.example/api"
    assert s.api_key == "sk-team-123456" and s.key_env == "TEAM_KEY"
    assert s.model.fallbacks == ["a", "b"]
    opts = ClientOptions.of(s)
    assert opts.base_url == "https://gw.example/api" and opts.fallbacks == ["a", "b"]
    assert "sk-team" not in repr(opts)


def test_missing_interpolated_variable_names_file_line_and_variable(home, tmp_path):
    write(tmp_path / ".spark-pair.toml", '[model]\n\nbase_url = "${NOPE}/api"\n')
    with pytest.raises(ConfigError) as info:
        load_settings(cwd=tmp_path, env={})
    assert ".spark-pair.toml:3" in info.value.message and "NOPE" in info.value.message


@pytest.mark.parametrize(
    "text, needle",
    [
        ('[model]\nnme = "x"\n', "did you mean 'name'"),
        ('[modle]\nname = "x"\n', "did you mean 'model'"),
        ('[request]\nmax_tokens = "many"\n', "must be a number"),
        ('[request]\nmax_tokens = 1.5\n', "whole number"),
        ('[session]\ntransport = "websocket"\n', "transport"),
        ('[session]\npersistent_ws = "maybe"\n', "true or false"),
        ('[model\nname = "x"\n', "line 1"),
        ('[request]\ntimeout_ms = 0\n', "at least 1"),
        ('[request]\nmax_tokens = -1\n', "at least 1"),
        ('[request]\ntemperature = nan\n', "from 0 to 2"),
        ('[request]\ntemperature = 99\n', "from 0 to 2"),
        ('[session]\nreconnect_attempts = -2\n', "from 0 to 100"),
        ('[request]\nmax_retries = -1\n', "from 0 to 20"),
        ('[review]\nescalate = "atuo"\n', "did you mean 'auto'"),
        ('[review]\nfix_rounds = 11\n', "from 0 to 10"),
        ('[model]\nname = ""\n', ".spark-pair.toml:2: model.name is empty"),
    ],
)
def test_bad_files_name_the_problem(home, tmp_path, text, needle):
    write(tmp_path / ".spark-pair.toml", text)
    with pytest.raises(ConfigError) as info:
        load_settings(cwd=tmp_path, env={})
    assert needle in info.value.message
    assert ".spark-pair.toml" in info.value.message


def test_literal_key_in_a_tracked_project_file_warns_and_is_ignored(home, tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    write(tmp_path / ".spark-pair.toml", '[model]\napi_key = "sk-literal-secret-999"\n')
    subprocess.run(["git", "add", ".spark-pair.toml"], cwd=tmp_path, check=True)
    s = load_settings(cwd=tmp_path, env={})
    assert s.api_key is None
    assert any("git tracks" in w for w in s.warnings)
    assert all("sk-literal-secret-999" not in w for w in s.warnings)


def test_a_key_pasted_as_the_variable_name_is_ignored_and_never_shown(home, tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    write(tmp_path / ".spark-pair.toml", '[model]\napi_key_env = "gsk-LEAKED987654"\n')
    subprocess.run(["git", "add", ".spark-pair.toml"], cwd=tmp_path, check=True)
    s = load_settings(cwd=tmp_path, env={"SPARK_PAIR_API_KEY": "sk-real-123456"})
    assert s.key_env == "SPARK_PAIR_API_KEY" and s.api_key == "sk-real-123456"
    assert any("git tracks" in w and ".spark-pair.toml:2" in w for w in s.warnings)
    s = load_settings(cwd=tmp_path, env={"SPARK_PAIR_API_KEY_ENV": "sk-proj-LEAKED987654"})
    assert s.key_env == "SPARK_PAIR_API_KEY"
    assert all("LEAKED" not in w for w in s.warnings) and len(s.warnings) == 2
    out = run_cli(["config", "--json"], tmp_path, home, {"SPARK_PAIR_API_KEY_ENV": "xLEAKED-987"})
    assert out.returncode == 0 and "LEAKED" not in out.stdout + out.stderr


def test_a_file_with_a_bom_loads(home, tmp_path):
    (tmp_path / ".spark-pair.toml").write_bytes('\ufeff[model]\nname = "bom-model"\n'.encode())
    assert load_settings(cwd=tmp_path, env={}).model.name == "bom-model"


def test_project_file_search_stops_at_the_git_root(home, tmp_path):
    write(tmp_path / ".spark-pair.toml", '[model]\nname = "outer"\n')
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "sub").mkdir()
    assert load_settings(cwd=repo / "sub", env={}).model.name == "gpt-5.3-codex-spark"


def run_cli(args, cwd, home, env_extra=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPARK_PAIR")}
    env.update({"SPARK_PAIR_HOME": str(home)}, **(env_extra or {}))
    return subprocess.run([str(Path(sys.executable).parent / "spark-pair"), *args],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=60)


def test_config_command_shows_sources_and_never_the_key(home, tmp_path):
    write(tmp_path / ".spark-pair.toml", '[model]\nbase_url = "https://gw.example/api/v1"\n')
    out = run_cli(["config", "--model", "m2"], tmp_path, home,
                  {"SPARK_PAIR_API_KEY": "sk-very-secret-key-42"})
    assert out.returncode == 0, out.stderr
    assert "sk-very-secret" not in out.stdout + out.stderr
    assert "flag --model" in out.stdout and "m2" in out.stdout
    assert ".spark-pair.toml:2" in out.stdout
    assert "base_url" not in out.stderr  # the SDK form ending in /v1 is right: no warning
    data = json.loads(run_cli(["config", "--json"], tmp_path, home,
                              {"SPARK_PAIR_API_KEY": "sk-very-secret-key-42"}).stdout)
    assert data["api_key"] == {"env": "SPARK_PAIR_API_KEY", "set": True, "length": 21}
    assert data["settings"]["model.base_url"]["value"] == "https://gw.example/api"


def test_config_command_broken_file_exits_3_without_traceback(home, tmp_path):
    write(tmp_path / ".spark-pair.toml", '[model]\nname = \n')
    out = run_cli(["config"], tmp_path, home)
    assert out.returncode == 3
    assert (
        "Traceback" not in out.stderr and ".spark-pair.toml" in out.stderr and "hint:" in out.stderr
    )


def test_keys_table_takes_dotted_and_quoted_binding_ids(tmp_path, monkeypatch) -> None:
    from spark_pair.base.config import load_settings

    monkeypatch.setenv("SPARK_PAIR_HOME", str(tmp_path / "home"))
    (tmp_path / ".git").mkdir()
    (tmp_path / ".spark-pair.toml").write_text(
        '[keys]\nreview.accept = "enter"\n"app.stop" = "ctrl+c"\n')
    settings = load_settings(cwd=tmp_path, env={})
    assert settings.keys == {"review.accept": "enter", "app.stop": "ctrl+c"}


def test_a_key_that_is_not_a_string_is_a_config_error(tmp_path, monkeypatch) -> None:
    import pytest

    from spark_pair.base.config import load_settings
    from spark_pair.base.errors import ConfigError

    monkeypatch.setenv("SPARK_PAIR_HOME", str(tmp_path / "home"))
    (tmp_path / ".git").mkdir()
    (tmp_path / ".spark-pair.toml").write_text('[keys]\nreview.accept = 3\n')
    with pytest.raises(ConfigError, match="review.accept must be a key name"):
        load_settings(cwd=tmp_path, env={})


def test_config_command_says_telemetry_the_otel_variables_turn_on(home, tmp_path):
    env = {k: "" for k in os.environ if k.startswith("OTEL_")}
    out = run_cli(["config"], tmp_path, home, env)
    assert "telemetry                   off" in out.stdout, out.stdout
    env.update(OTEL_METRICS_EXPORTER="otlp",
               OTEL_EXPORTER_OTLP_ENDPOINT="http://team:pw-7781@127.0.0.1:4318")
    out = run_cli(["config"], tmp_path, home, env)
    line = next(x for x in out.stdout.splitlines() if x.startswith("telemetry  "))
    assert "on, to OTLP" in line and "127.0.0.1:4318/v1/metrics" in line, line
    assert "pw-7781" not in out.stdout  # the endpoint's password is never shown
    data = json.loads(run_cli(["config", "--json"], tmp_path, home, env).stdout)
    assert data["telemetry"]["on"] is True and "pw-7781" not in data["telemetry"]["to"]
