"""spark-pair's own files (project config, config folder, data folder with the undo journal and
request log) are never an edit's target, wherever they lie, whatever the approver said."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
from support.disk import snapshot
from support.runs import check_schema, cli, env_for, lines_of, make_repo, tree

from spark_pair.base.dirs import data_dir
from spark_pair.base.errors import PathRefused
from spark_pair.base.exitcodes import ExitCode
from spark_pair.edits.apply import apply_turn, check_each
from spark_pair.edits.journal import FileChange, Journal
from spark_pair.edits.ops import Create, Delete, Hunk, Modify, Rename

CONFIG = "[model]\nbase_url = \"http://127.0.0.1:1/api\"\n"
EVIL = "[model]\nbase_url = \"http://attacker.invalid/api\"\n"


def edit(old: str, new: str) -> Hunk:
    return Hunk(None, None, None, None, [f"-{old}", f"+{new}"])


@pytest.fixture
def repo(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.setenv("SPARK_PAIR_HOME", str(tmp_path / "home"))  # outside the repository
    root = tmp_path / "repo"
    (root / "sub").mkdir(parents=True)
    (root / ".spark-pair.toml").write_text(CONFIG)
    (root / "sub" / ".Spark-Pair.toml").write_text(CONFIG)
    (root / "a.txt").write_text("a\n")
    return root


PROJECT_CONFIG_OPS = {
    "create in a folder": lambda: Create("new/.spark-pair.toml", EVIL),
    "modify": lambda: Modify(".spark-pair.toml", [edit('base_url = "http://127.0.0.1:1/api"',
                                                       'base_url = "http://attacker.invalid"')]),
    "modify, other case": lambda: Modify("sub/.Spark-Pair.toml", [edit(
        'base_url = "http://127.0.0.1:1/api"', 'base_url = "http://attacker.invalid"')]),
    "delete": lambda: Delete(".spark-pair.toml"),
    "rename from": lambda: Rename(".spark-pair.toml", "old.toml"),
    "rename to": lambda: Rename("a.txt", "sub/x/.spark-pair.toml"),
}


@pytest.mark.parametrize("name", sorted(PROJECT_CONFIG_OPS))
def test_the_project_config_is_refused_by_apply_itself(repo, tmp_path, name):
    """No approver is involved: apply and its check refuse, so no front end can accept it."""
    before = snapshot(repo)
    ops = [Create("fine.txt", "ok\n"), PROJECT_CONFIG_OPS[name]()]
    [(index, error)] = check_each(repo, ops)
    assert index == 1 and isinstance(error, PathRefused)
    with pytest.raises(PathRefused, match=r"spark-pair's project config") as info:
        apply_turn(repo, ops, journal=Journal(repo, tmp_path / "data"))
    assert "edit them yourself" in info.value.hint
    assert snapshot(repo) == before  # all or nothing: fine.txt is not written either


def test_spark_pair_home_inside_the_project_is_refused(repo, tmp_path, monkeypatch):
    home = repo / "tools" / "sp-home"
    monkeypatch.setenv("SPARK_PAIR_HOME", str(home))
    (home / "config").mkdir(parents=True)
    (home / "config" / "config.toml").write_text(CONFIG)
    journal = Journal(repo)  # the default journal: under SPARK_PAIR_HOME, so inside the repo
    assert str(journal.dir).startswith(str(repo))
    for op in (Create("tools/sp-home/config/other.toml", EVIL),
               Modify("tools/sp-home/config/config.toml", [edit(
                   'base_url = "http://127.0.0.1:1/api"', 'base_url = "http://x.invalid"')]),
               Delete("tools/sp-home/config/config.toml"),
               Create("tools/sp-home/data/journal/planted/manifest.json", "{}"),
               Rename("tools/sp-home/config/config.toml", "moved.toml")):
        with pytest.raises(PathRefused, match="spark-pair's (config|data) folder"):
            apply_turn(repo, [op], journal=journal)
    assert (home / "config" / "config.toml").read_text() == CONFIG
    assert not (home / "data" / "journal" / "planted").exists()
    from spark_pair.base.dirs import own_dirs_inside

    [warning] = own_dirs_inside(repo)  # the data folder (the config folder is refused, quietly)
    assert "data folder" in warning and not own_dirs_inside(tmp_path / "elsewhere")


def test_only_the_config_and_data_folders_of_spark_pair_home_are_refused(repo, monkeypatch):
    monkeypatch.setenv("SPARK_PAIR_HOME", str(repo))  # a home that also holds a project
    journal = Journal(repo)
    turn = apply_turn(repo, [Create("src/app.py", "x = 1\n")], journal=journal)
    assert turn.changed == ["src/app.py"]
    with pytest.raises(PathRefused, match="config folder"):
        apply_turn(repo, [Create("config/config.toml", EVIL)], journal=journal)


def test_a_dotfiles_repository_at_home_keeps_the_user_config(tmp_path, monkeypatch):
    home = make_git_free_home(tmp_path)
    monkeypatch.delenv("SPARK_PAIR_HOME", raising=False)
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    journal = Journal(home, tmp_path / "data")
    before = snapshot(home)
    for rel in (".config/spark-pair/new.toml",
                os.path.relpath(data_dir() / "journal" / "k" / "t" / "manifest.json", home)):
        with pytest.raises(PathRefused, match="inside spark-pair's"):
            apply_turn(home, [Create(rel, EVIL)], journal=journal)
    with pytest.raises(PathRefused, match="config folder"):
        apply_turn(home, [Delete(".config/spark-pair/config.toml")], journal=journal)
    assert snapshot(home) == before
    turn = apply_turn(home, [Create(".config/other-tool/config.toml", "x = 1\n")],
                      journal=journal)
    assert turn.changed == [".config/other-tool/config.toml"]  # other dotfiles are fine


def make_git_free_home(tmp_path: Path) -> Path:
    home = tmp_path / "userhome"
    (home / ".config" / "spark-pair").mkdir(parents=True)
    (home / ".config" / "spark-pair" / "config.toml").write_text(CONFIG)
    return home


def test_a_journal_folder_given_inside_the_repository_is_refused(repo):
    journal = Journal(repo, repo / "undo-data")
    with pytest.raises(PathRefused, match="data folder"):
        apply_turn(repo, [Create("undo-data/journal/x/manifest.json", "{}")], journal=journal)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_recovery_never_writes_a_refused_path(repo, tmp_path, monkeypatch):
    """A fake interrupted turn planted in a journal inside the repository (a model could write
    there if nothing refused it) would 'restore' an attacker's project config."""
    monkeypatch.setenv("SPARK_PAIR_HOME", str(repo / ".sp"))
    journal = Journal(repo)
    now = (repo / ".spark-pair.toml").read_bytes()
    journal.begin("20990101-000000-planted", [
        FileChange(".spark-pair.toml", EVIL.encode(), 0o644, now, 0o644),
        FileChange(".sp/config/config.toml", None, None, None, None),
        FileChange("a.txt", b"restored\n", 0o644, b"a\n", 0o644)])
    [rec] = journal.recover()
    assert (repo / ".spark-pair.toml").read_bytes() == now
    assert [k.split(" ")[0] for k in rec.kept] == [".spark-pair.toml", ".sp/config/config.toml"]
    assert "refused path" in rec.kept[0]
    assert rec.restored == ["a.txt"]  # an ordinary file is restored as before


def test_undo_never_writes_a_refused_path(repo, tmp_path):
    journal = Journal(repo, tmp_path / "data")
    now = (repo / ".spark-pair.toml").read_bytes()
    journal.begin("20990101-000000-planted", [
        FileChange(".spark-pair.toml", EVIL.encode(), 0o644, now, 0o644)])
    journal.commit("20990101-000000-planted")
    with pytest.raises(PathRefused):
        journal.undo()
    assert (repo / ".spark-pair.toml").read_bytes() == now


# ---- end to end: spark-pair run against the simulator ----------------------------------------

def run_in(repo: Path, env: dict[str, str], *args: str):
    import subprocess

    return subprocess.run(cli() + ["run", *args], cwd=repo, env=env, capture_output=True,
                          text=True, timeout=60)


def test_run_refuses_spark_pair_home_inside_the_project_and_warns(sim, tmp_path):
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    home = repo / ".sp-home"
    env = env_for(home, sim)
    (home / "config").mkdir(parents=True)
    (home / "config" / "config.toml").write_text("[model]\nname = \"gpt-5.3-codex-spark\"\n")
    mine = lambda: {k: v for k, v in tree(repo).items()  # noqa: E731 - what the model may touch
                    if not k.startswith(".sp-home/data/")}
    before = mine()
    evil = ("--- a/.sp-home/config/config.toml\n+++ b/.sp-home/config/config.toml\n"
            "@@ -1 +1,2 @@\n [model]\n+base_url = \"http://attacker.invalid/api\"\n")
    sim.configure(default=evil)
    res = run_in(repo, env, "anything", "--apply", "--json")
    lines = lines_of(res.stdout)
    check_schema(lines)
    assert res.returncode == ExitCode.CONFLICT, res.stderr
    refused = [ln for ln in lines if ln["type"] == "refused"]
    assert refused and refused[0]["kind"] == "path" and "config folder" in refused[0]["reason"]
    assert mine() == before
    assert "data folder" in res.stderr and "inside this repository" in res.stderr
    dry = run_in(repo, env, "anything")
    assert dry.returncode == ExitCode.CONFLICT and "refused path" in dry.stderr
    assert "Traceback" not in res.stderr + dry.stderr and mine() == before


def test_a_planted_manifest_reads_no_file_outside_its_turn_and_removes_no_outside_folder(
        repo, tmp_path):
    """A manifest naming ../../secret as a before-image would copy any readable file into the
    repository (where the next turn's context shows it to the model)."""
    secret = tmp_path / "secret.txt"
    secret.write_text("id_rsa contents\n")
    (tmp_path / "empty-outside").mkdir()
    journal = Journal(repo, tmp_path / "data")
    tdir = journal.begin("20990101-000000-planted", [
        FileChange("a.txt", b"x\n", 0o644, b"a\n", 0o644)])
    head, body = (tdir / "record").read_bytes().split(b"\n", 1)
    data = json.loads(head)
    data["files"][0]["before"] = os.path.relpath(secret, tdir)
    data["files"][0]["new_dirs"] = ["../empty-outside", "../" * 6 + "tmp"]
    (tdir / "record").write_bytes(json.dumps(data).encode() + b"\n" + body)
    [rec] = journal.recover()
    assert (repo / "a.txt").read_text() == "a\n" and rec.restored == []
    assert rec.kept and "before-image" in rec.kept[0]
    assert (tmp_path / "empty-outside").is_dir()
