"""Telemetry's figures and set-up: what each record, verdict, turn and bench becomes, what
turns it on and where it goes, and what never leaves (the SDK's own in-memory reading)."""

from __future__ import annotations

import pytest

from spark_pair.base.config import Settings, load_settings
from spark_pair.base.errors import ConfigError, redact
from spark_pair.edits.ops import Create, Delete, Hunk, Modify
from spark_pair.protocol.records import RequestRecord
from spark_pair.session.approval import Action, Decision
from spark_pair.store.verdicts import Fate, Verdict
from spark_pair.telemetry import points
from spark_pair.telemetry.options import DEFAULT_OTLP, options_of

P = "spark_pair."
SECRET_PROMPT = "rename the secret-project-omega function"
SECRET_FILE = "def omega_internal():\n    return 'classified'\n"


def settings_with(env: dict[str, str], **telemetry: object) -> Settings:
    s = Settings(env=env)
    for name, value in telemetry.items():
        setattr(s.telemetry, name, value)
    return s


def record(**kw: object) -> RequestRecord:
    base: dict = dict(ts=1.0, model="m1", transport="ws", status="ok", input_tokens=120,
                      output_tokens=480, ttft_ms=140.0, duration_ms=540.0, tokens_per_s=1190.0,
                      base_host="models.internal:8443", request_id="req_1",
                      extra={"prompt": SECRET_PROMPT})
    base.update(kw)
    return RequestRecord(**base)


def test_a_record_gives_tokens_cost_and_the_turn_times():
    pts = points.of_record(record(), {"m1": (2.0, 10.0)})
    got = {(p.name, tuple(sorted(p.attributes.items()))): p.value for p in pts}
    assert got == {
        (P + "token.usage", (("model", "m1"), ("type", "input"))): 120,
        (P + "token.usage", (("model", "m1"), ("type", "output"))): 480,
        (P + "cost.usage", (("model", "m1"),)): pytest.approx((120 * 2 + 480 * 10) / 1e6),
        (P + "turn.ttft.duration_ms", (("model", "m1"), ("transport", "ws"))): 140.0,
        (P + "turn.tokens_per_second", (("model", "m1"), ("transport", "ws"))): 1190.0,
        (P + "turn.e2e_duration_ms", (("model", "m1"), ("transport", "ws"))): 540.0,
    }


def test_a_failed_or_cut_request_is_an_error_by_kind_and_has_no_turn_times():
    failed = points.of_record(record(status="error", error_class="rate_limit", ttft_ms=None,
                                     input_tokens=None, output_tokens=None), None)
    assert failed == [points.Point(P + "request.errors", 1,
                                   {"class": "rate_limit", "transport": "ws"})]
    cut = points.of_record(record(status="cut", error_class=None, transport="chat"), None)
    assert points.Point(P + "request.errors", 1, {"class": "incomplete", "transport": "chat"}) \
        in cut
    assert not [p for p in cut if p.name.startswith(P + "turn.")]
    assert not [p for p in cut if p.name == P + "cost.usage"]  # no price for m1


def test_reconnects_count_retries_on_the_websocket_only():
    from spark_pair.protocol.events import Retrying, Transport

    assert points.of_retry(Retrying(1, 0.1, "dropped", Transport.WS)) == [
        points.Point(P + "ws.reconnects", 1, {})]
    assert points.of_retry(Retrying(1, 0.1, "rate_limit", Transport.CHAT)) == []


def test_verdicts_count_per_hunk_and_fate():
    verdicts = [Verdict(0, "a.py", "modify", 0, Fate.KEPT), Verdict(0, "a.py", "modify", 1,
                                                                     Fate.REJECTED, "no"),
                Verdict(1, "b.py", "modify", 0, Fate.KEPT),
                Verdict(2, "c.py", "create", None, Fate.AMENDED, text=SECRET_FILE)]
    got = {p.attributes["decision"]: p.value for p in points.of_verdicts("m1", verdicts)}
    assert got == {"kept": 2, "rejected": 1, "amended": 1}
    assert all(p.attributes["unit"] == "hunk" and p.attributes["model"] == "m1"
               for p in points.of_verdicts("m1", verdicts))


class _Result:
    def __init__(self, ops, decisions, outcomes):
        self.operations, self.decisions, self.outcomes = ops, decisions, outcomes


def test_lines_of_code_count_what_applied_operations_wrote():
    two = Hunk(1, 2, 1, 3, [" a", "-b", "+c", "+d"])
    other = Hunk(9, 1, 9, 1, ["-x", "+y"])
    mine = Hunk(9, 1, 9, 3, ["-x", "+y1", "+y2", "+y3"])  # a person rewrote the second hunk
    ops = [Modify("a.py", [two, other]), Create("new.py", SECRET_FILE),
           Delete("old.py", lines=["gone", "too"]), Modify("skipped.py", [two])]
    decisions = [Decision(Action.ACCEPT, amended=((1, mine),)), None, None,
                 Decision(Action.REFUSE)]
    outcomes = ["applied", "applied", "applied", "not_applied"]
    got = {p.attributes["type"]: p.value
           for p in points.of_result(_Result(ops, decisions, outcomes))}
    assert got == {"added": 2 + 3 + 2, "removed": 1 + 1 + 2}
    only_first = [Decision(Action.ACCEPT, hunks=(0,)), None, None, None]
    got = {p.attributes["type"]: p.value
           for p in points.of_result(_Result(ops[:1], only_first, ["applied"]))}
    assert got == {"added": 2, "removed": 1}
    assert points.of_result(_Result(ops, decisions, ["not_applied"] * 4)) == []


def test_bench_points_carry_level_quantile_and_the_baseline():
    def run(p50: float) -> dict:
        return {"plan": {"model": "m1"}, "levels": [
            {"transport": "ws", "concurrency": 4, "tokens_per_s": {"p50": p50, "p95": None}}]}

    pts = points.of_bench(run(900.0), run(1100.0))
    assert pts == [
        points.Point(P + "bench.tokens_per_second", 900.0, {
            "concurrency": "4", "quantile": "0.5", "transport": "ws", "model": "m1"}),
        points.Point(P + "bench.baseline_tokens_per_second", 1100.0, {
            "concurrency": "4", "quantile": "0.5", "transport": "ws", "model": "m1"})]
    assert [p.name for p in points.of_bench(run(900.0), None)] == [
        P + "bench.tokens_per_second"]


def test_every_point_is_a_declared_metric_with_its_declared_attributes():
    from spark_pair.protocol.events import Retrying, Transport

    verdicts = [Verdict(0, "a.py", "modify", 0, Fate.KEPT)]
    hunk = Hunk(1, 1, 1, 1, ["-a", "+b"])
    every = [*points.of_session(), *points.of_record(record(), {"m1": (1.0, 1.0)}),
             *points.of_record(record(status="error", error_class="auth"), None),
             *points.of_retry(Retrying(1, 0.1, "dropped", Transport.WS)),
             *points.of_verdicts("m1", verdicts),
             *points.of_result(_Result([Modify("a.py", [hunk])], [None], ["applied"])),
             *points.of_bench({"plan": {"model": "m"}, "levels": [
                 {"transport": "ws", "concurrency": 1, "tokens_per_s": {"p50": 1, "p95": 2}}]},
                 None)]
    assert {p.name for p in every} == set(points.METRICS) - {
        P + "bench.baseline_tokens_per_second"}
    for p in every:
        assert set(p.attributes) <= set(points.METRICS[p.name].attributes), p


def test_the_exported_payload_holds_no_prompt_file_path_host_or_key(monkeypatch):
    """What the SDK would send for a turn's points, encoded as the OTLP exporter encodes it."""
    from opentelemetry.exporter.otlp.proto.common.metrics_encoder import encode_metrics

    from spark_pair.telemetry.meters import collect_once

    key = "sk-live-telemetry-key-0123456789"
    monkeypatch.setenv("SPARK_PAIR_API_KEY", key)
    rec = record(request_id=key, extra={"prompt": SECRET_PROMPT, "file": SECRET_FILE})
    verdicts = [Verdict(0, "src/omega_secret.py", "create", None, Fate.AMENDED,
                        reason=SECRET_PROMPT, text=SECRET_FILE)]
    pts = [*points.of_record(rec, None), *points.of_verdicts("m1", verdicts),
           *points.of_result(_Result([Create("src/omega_secret.py", SECRET_FILE)], [None],
                                     ["applied"]))]
    body = encode_metrics(collect_once(pts)).SerializeToString()
    assert b"spark_pair.token.usage" in body and b"spark_pair.lines_of_code.count" in body
    for secret in (SECRET_PROMPT, "omega", key, "models.internal", "req_1"):
        assert secret.encode() not in body, secret


def test_off_by_default_and_on_by_config_or_the_standard_variables():
    assert options_of(settings_with({})) is None
    assert options_of(settings_with({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"})) is None
    on = options_of(settings_with({"OTEL_METRICS_EXPORTER": "otlp",
                                   "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318/"}))
    assert on is not None and on.otlp_url == "http://c:4318/v1/metrics"
    assert options_of(settings_with({"OTEL_SDK_DISABLED": "true"}, enabled=True)) is None
    default = options_of(settings_with({}, enabled=True))
    assert default is not None and default.otlp_url == DEFAULT_OTLP + "/v1/metrics"


def test_where_the_figures_go():
    only_push = options_of(settings_with({}, enabled=True, pushgateway="http://pg:9091/"))
    assert only_push is not None and only_push.otlp_url == ""
    assert only_push.pushgateway == "http://pg:9091" and only_push.instance  # the host name
    full = options_of(settings_with(
        {"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://c:4318/custom/path",
         "OTEL_EXPORTER_OTLP_ENDPOINT": "http://ignored:4318"}, enabled=True))
    assert full is not None and full.otlp_url == "http://c:4318/custom/path"
    mine = options_of(settings_with({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://env:4318"},
                                    enabled=True, otlp_endpoint="http://cfg:4318"))
    assert mine is not None and mine.otlp_url == "http://cfg:4318/v1/metrics"
    grpc = options_of(settings_with({"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
                                     "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317"},
                                    enabled=True))
    assert grpc is not None and (grpc.protocol, grpc.otlp_url) == ("grpc", "c:4317")
    none = options_of(settings_with({"OTEL_METRICS_EXPORTER": "none"}, enabled=True,
                                    metrics_port=9464))
    assert none is not None and none.otlp_url == "" and none.metrics_port == 9464


def test_resource_attributes_interval_and_headers_from_the_environment():
    token = "collector-token-abcdef123456"
    opts = options_of(settings_with({
        "OTEL_RESOURCE_ATTRIBUTES": "team=editors,deployment.environment=ci%20runners",
        "OTEL_SERVICE_NAME": "pair-bot", "OTEL_METRIC_EXPORT_INTERVAL": "2500",
        "OTEL_EXPORTER_OTLP_HEADERS": f"Authorization=Bearer%20{token}"}, enabled=True))
    assert opts is not None
    assert opts.resource["team"] == "editors"
    assert opts.resource["deployment.environment"] == "ci runners"
    assert opts.resource["service.name"] == "pair-bot"
    assert opts.interval_s == 2.5
    assert opts.headers == {"authorization": f"Bearer {token}"}
    assert token not in redact(f"the collector said: bad token {token}")  # a secret now


def test_an_unknown_protocol_from_the_environment_is_a_note_not_an_error():
    notes: list[str] = []
    opts = options_of(settings_with({"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"},
                                    enabled=True), notes.append)
    assert opts is not None and opts.protocol == "http/protobuf"
    assert notes and "http/json" in notes[0]


def test_the_telemetry_section_in_a_config_file(tmp_path, monkeypatch):
    monkeypatch.setenv("SPARK_PAIR_HOME", str(tmp_path / "home"))
    (tmp_path / ".git").mkdir()
    (tmp_path / ".spark-pair.toml").write_text(
        '[telemetry]\nenabled = true\npushgateway = "http://127.0.0.1:9091"\n'
        "metrics_port = 9464\n")
    s = load_settings(cwd=tmp_path, env={})
    assert (s.telemetry.enabled, s.telemetry.pushgateway, s.telemetry.metrics_port) == (
        True, "http://127.0.0.1:9091", 9464)
    assert s.sources["telemetry.metrics_port"].startswith("project file")
    assert load_settings(cwd=tmp_path, env={"SPARK_PAIR_TELEMETRY": "0"}).telemetry.enabled \
        is False
    (tmp_path / ".spark-pair.toml").write_text('[telemetry]\notlp_protocol = "http/json"\n')
    with pytest.raises(ConfigError, match="otlp_protocol") as err:
        load_settings(cwd=tmp_path, env={})
    assert "http/protobuf or grpc" in err.value.hint
    (tmp_path / ".spark-pair.toml").write_text("[telemetry]\nmetrics_port = 70000\n")
    with pytest.raises(ConfigError, match="metrics_port"):
        load_settings(cwd=tmp_path, env={})
