from spark_pair.protocol.records import RequestRecord
from spark_pair.store import RequestStore


def test_records_round_trip_and_filter(tmp_path):
    store = RequestStore(tmp_path / "r.sqlite3")
    a = RequestRecord(ts=100.0, model="m1", transport="ws", status="ok", input_tokens=10,
                      output_tokens=400, ttft_ms=120.5, tokens_per_s=1180.0, extra={"k": [1, 2]})
    b = RequestRecord(ts=200.0, model="m2", transport="chat", status="error",
                      error_class="rate_limit", http_status=429, retries=3, usage_estimated=True)
    store.record(a)
    store.record(b)
    store.close()
    with RequestStore(tmp_path / "r.sqlite3") as again:
        assert again.records() == [a, b]
        assert again.records(since=150) == [b]
        assert again.records(until=150) == [a]
        assert again.records(model="m2") == [b]


def test_bench_runs_newest_first(tmp_path, monkeypatch):
    monkeypatch.setenv("SPARK_PAIR_HOME", str(tmp_path))
    with RequestStore() as store:
        first = store.save_bench_run({"levels": [1]})
        second = store.save_bench_run({"levels": [1, 4]})
        runs = store.bench_runs()
    assert [r["id"] for r in runs] == [second, first]
    assert runs[0]["levels"] == [1, 4]
    assert (tmp_path / "data" / "requests.sqlite3").is_file()
