"""`spark-pair stats` with nothing checked yet names the app's key as it is (alt+t: a check
kept or rolled back counts), never the single letters of before."""

from __future__ import annotations

from click.testing import CliRunner

from spark_pair.cli.main import main


def test_the_check_hint_names_the_chords(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SPARK_PAIR_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("COLUMNS", "200")  # one line: the hint is read whole
    result = CliRunner().invoke(main, ["stats", "--since", "all"])
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "no checked tasks yet" in said, said
    assert "alt+t in the app" in said and "t / keep" not in said, said
