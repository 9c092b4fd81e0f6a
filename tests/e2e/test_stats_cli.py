"""`spark-pair stats` end to end: known records in a real store, prices from a real config file."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from support.records import PRICES, known_records

from spark_pair.cli.main import main
from spark_pair.store import RequestStore
from spark_pair.store.stats import build_report


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SPARK_PAIR_HOME", str(tmp_path / "home"))
    for name in ("SPARK_PAIR_MODEL", "SPARK_PAIR_BASE_URL", "SPARK_PAIR_TRANSPORT"):
        monkeypatch.delenv(name, raising=False)
    config = tmp_path / "home" / "config" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("".join(f'[prices."{model}"]\ninput_per_m = {inp}\noutput_per_m = {out}\n'
                              for model, (inp, out) in PRICES.items()))
    store = RequestStore(tmp_path / "home" / "data" / "requests.sqlite3")
    for rec in known_records():
        store.record(rec)
    store.close()
    return tmp_path


def test_json_matches_the_store(home):
    result = CliRunner().invoke(main, ["stats", "--since", "all", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    expected = build_report(known_records(), PRICES).as_dict()
    assert data["total"] == expected["total"]
    assert data["by"] == expected["by"]
    assert data["turns"] == expected["turns"]
    assert data["total"]["requests"] == 6 and data["total"]["cost_usd"] == pytest.approx(0.069)
    assert data["missing_prices"] == ["mystery"]


def test_task_filter_and_since(home):
    result = CliRunner().invoke(main, ["stats", "--since", "all", "--task", "bench", "--json"])
    assert json.loads(result.stdout)["total"]["requests"] == 1
    recent = CliRunner().invoke(main, ["stats", "--since", "7d", "--json"])  # records are old
    assert json.loads(recent.stdout)["total"]["requests"] == 0


def test_table_at_80_columns(home):
    result = CliRunner().invoke(main, ["stats", "--since", "all"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert "By model" in result.stdout and "By day" in result.stdout
    assert "tokens, $0.0045" in " ".join(result.stdout.split())  # (wrapped at 80)
    assert "rate_limit 1" in result.stdout


def test_bad_option_is_a_usage_error(home):
    result = CliRunner().invoke(main, ["stats", "--by", "colour"])
    assert result.exit_code == 2 and "colour" in result.output


def test_db_flag_with_a_missing_file_says_so_and_creates_nothing(home):
    missing = home / "elsewhere" / "requests.sqlite3"
    result = CliRunner().invoke(main, ["stats", "--db", str(missing)])
    assert result.exit_code == 2, result.output
    assert "no request store" in result.output and str(missing) in result.output
    assert not missing.exists() and not missing.parent.exists()


def test_db_flag_reads_an_existing_store(home):
    path = home / "home" / "data" / "requests.sqlite3"
    result = CliRunner().invoke(main, ["stats", "--since", "all", "--json", "--db", str(path)])
    assert result.exit_code == 0 and json.loads(result.stdout)["total"]["requests"] == 6


def test_model_ids_are_plain_text_and_the_price_hint_fits(home):
    from support.records import rec

    model = "a-rather-long/model-identifier-[/b]-preview"  # sorts first
    with RequestStore(home / "home" / "data" / "requests.sqlite3") as store:
        store.record(rec(model=model))
    result = CliRunner().invoke(main, ["stats", "--since", "all"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert f'    [prices."{model}"]' in lines  # whole, on its own line: copyable
    assert "    output_per_m = ..." in lines
    assert "50+ output tokens" in " ".join(result.stdout.split())  # the legend says so


@pytest.mark.parametrize("table,fragment", [
    ("input_per_m = -1\noutput_per_m = 4\n", "negative"),
    ("input_per_m = 1\noutput_per_m = 4\ncurrency = 'EUR'\n", "unknown field 'currency'"),
])
def test_bad_price_tables_are_config_errors(home, table, fragment):
    config = home / "home" / "config" / "config.toml"
    config.write_text(f'[prices."spark"]\n{table}')
    result = CliRunner().invoke(main, ["stats", "--since", "all"])
    assert result.exit_code == 3, result.output
    assert fragment in result.output and "config.toml" in result.output


def test_task_help_names_only_recorded_tasks():
    result = CliRunner().invoke(main, ["stats", "--help"])
    assert "bench" in result.output and "doctor" not in result.output


def test_review_shares_per_model_in_json_and_in_the_table(home):
    from spark_pair.edits.ops import Hunk, Modify
    from spark_pair.session.approval import Action, Decision
    from spark_pair.session.review import verdicts_of

    op = Modify("a.py", [Hunk(1, 1, 1, 1, ["-a", "+b"]) for _ in range(4)])
    store = RequestStore(home / "home" / "data" / "requests.sqlite3")
    store.record_verdicts("t1", "fast-model", verdicts_of([op], [Decision(
        Action.ACCEPT, hunks=(0, 1, 2), notes=((3, "no"),),
        amended=((2, Hunk(1, 1, 1, 1, ["-a", "+c"])),))]))
    store.close()
    data = json.loads(CliRunner().invoke(main, ["stats", "--since", "all", "--json"]).stdout)
    assert data["review"] == [{"model": "fast-model", "turns": 1, "proposed_hunks": 4,
                               "kept": 2, "amended": 1, "rejected": 1, "kept_share": 0.5,
                               "amended_share": 0.25, "rejected_share": 0.25,
                               "could_not_apply": 0}]
    text = CliRunner().invoke(main, ["stats", "--since", "all"], env={"COLUMNS": "80"}).stdout
    row = next(line for line in text.splitlines() if line.strip().startswith("fast-model"))
    assert row.split()[1:] == ["1", "4", "50%", "25%", "25%", "0"]


def test_the_review_table_says_how_many_hunks_could_not_apply(home):
    from spark_pair.edits.ops import Hunk, Modify
    from spark_pair.session.approval import Action, Decision
    from spark_pair.session.review import verdicts_of

    op = Modify("a.py", [Hunk(1, 1, 1, 1, ["-a", "+b"]) for _ in range(3)])
    store = RequestStore(home / "home" / "data" / "requests.sqlite3")
    store.record_verdicts("t1", "fast-model", verdicts_of([op], [Decision(
        Action.ACCEPT, hunks=(0,), notes=((1, "its lines are not in the file"),),
        unfit=(1, 2))]))
    store.close()
    text = CliRunner().invoke(main, ["stats", "--since", "all"], env={"COLUMNS": "80"}).stdout
    assert "unfit" in text and "could not apply" in text
    row = next(line for line in text.splitlines() if line.strip().startswith("fast-model"))
    assert row.split()[1:] == ["1", "1", "100%", "0%", "0%", "2"]


async def test_replies_the_server_cut_show_as_cut(sim, tmp_path, monkeypatch):
    """Real requests to the simulator into a real store: a whole reply is ok; one the server's
    context window ended and one without any output are cut, not ok and not failed."""
    from spark_pair.protocol.client import ClientOptions, ModelClient
    from spark_pair.protocol.events import Message, TurnRequest

    monkeypatch.setenv("SPARK_PAIR_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    store = RequestStore(tmp_path / "home" / "data" / "requests.sqlite3")
    options = ClientOptions(base_url=sim.base_url, api_key=None, model="gpt-5.3-codex-spark",
                            transport="chat", max_tokens=1000)
    request = TurnRequest("You edit code.", [Message("user", "change x")])
    for settings in ({"tokens": 100}, {"tokens": 500, "context": 300}, {"default": ""}):
        sim.reset()
        sim.configure(tps=0, ttft_ms=0, **settings)
        async with ModelClient(options, recorder=store) as client:
            await client.complete(request)
    store.close()
    data = json.loads(CliRunner().invoke(main, ["stats", "--since", "all", "--json"]).stdout)
    total = data["total"]
    assert (total["requests"], total["ok"], total["cut"], total["errors"]) == (3, 1, 2, 0)
    assert total["error_rate"] == 0 and total["cut_rate"] == pytest.approx(2 / 3)
    shown = CliRunner().invoke(main, ["stats", "--since", "all"], env={"COLUMNS": "80"}).stdout
    assert "3 (1 ok, 2 cut, 0 failed, 0 stopped)" in shown
    assert "cut%" in shown and max(len(line) for line in shown.splitlines()) <= 80


def test_check_and_fix_figures_per_model(home):
    from spark_pair.store.rounds import Round

    store = RequestStore(home / "home" / "data" / "requests.sqlite3")
    now = __import__("time").time()
    rounds = [  # fast: green at once; green after 2 fix rounds; escalated and still red
        ("t1", 0, "fast", True, False), ("t2", 0, "fast", False, False),
        ("t2", 1, "fast", False, False), ("t2", 2, "fast", True, False),
        ("t3", 0, "fast", False, False), ("t3", 1, "strong", False, True),
        ("t4", 0, "strong", True, False)]
    for task, index, model, passed, escalated in rounds:
        store.record_round(Round(task, index, model, f"turn-{task}-{index}", passed, escalated,
                                 now))
    store.close()
    data = json.loads(CliRunner().invoke(main, ["stats", "--json"]).stdout)
    fast, strong = data["tasks"]
    assert fast == {"model": "fast", "tasks": 3, "green": 2, "median_rounds_to_green": 2.0,
                    "escalated_share": 0.3333, "green_first_share": 0.3333}
    assert strong["tasks"] == 1 and strong["green_first_share"] == 1.0
    table = CliRunner().invoke(main, ["stats"], env={"COLUMNS": "80"}).stdout
    assert "Check and fix by model" in table and max(map(len, table.splitlines())) <= 80
    row = next(line for line in table.splitlines() if line.strip().startswith("fast"))
    assert row.split() == ["fast", "3", "2", "2.0", "33%", "33%"]


def test_diff_form_shares_per_model_in_json_and_in_the_table(home):
    import sqlite3

    from spark_pair.store.forms import Form

    path = home / "home" / "data" / "requests.sqlite3"
    db = sqlite3.connect(path)  # a store written before the forms table existed
    db.execute("DROP TABLE forms")
    db.commit()
    db.close()
    store = RequestStore(path)  # opened: it gains the table, its records stay readable
    assert store.form_rows() == [] and len(store.records()) == 6
    for i, form in enumerate([Form.AS_SENT, Form.AS_SENT, Form.TOLERANCE, Form.REPAIRED]):
        store.record_form(f"t{i}", "fast-model", form)
    store.record_form("t9", "strong-model", Form.REFUSED)
    store.close()
    data = json.loads(CliRunner().invoke(main, ["stats", "--since", "all", "--json"]).stdout)
    assert data["forms"][0] == {"model": "fast-model", "replies": 4, "as_sent": 2,
                                "tolerance": 1, "repaired": 1, "refused": 0,
                                "as_sent_share": 0.5, "tolerance_share": 0.25,
                                "repaired_share": 0.25, "refused_share": 0.0}
    assert data["forms"][1]["model"] == "strong-model"
    assert data["forms"][1]["refused_share"] == 1.0
    text = CliRunner().invoke(main, ["stats", "--since", "all"], env={"COLUMNS": "80"}).stdout
    assert "Diff form by model" in text and max(len(line) for line in text.splitlines()) <= 80
    row = next(line for line in text.splitlines() if line.strip().startswith("fast-model")
               and "%" in line and line.split()[1] == "4")
    assert row.split()[1:] == ["4", "50%", "25%", "25%", "0%"]
