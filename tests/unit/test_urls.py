import pytest
from hypothesis import given
from hypothesis import strategies as st

from spark_pair.base.errors import ConfigError
from spark_pair.base.urls import diagnose_key, host_of, normalize_base_url


@pytest.mark.parametrize(
    "raw, expected, warns",
    [
        # the two right forms (and a harmless trailing slash): silent, the same URLs
        ("https://gw.example/api", "https://gw.example/api", 0),
        ("https://gw.example/api/v1", "https://gw.example/api", 0),
        ("https://gw.example/api/V1", "https://gw.example/api", 0),
        ("http://127.0.0.1:8080/v1", "http://127.0.0.1:8080", 0),
        ("http://127.0.0.1:8080/v1/", "http://127.0.0.1:8080", 0),
        ("https://gw.example/api/", "https://gw.example/api", 0),
        # real mistakes: corrected and explained
        ("https://gw.example/api/v1/v1", "https://gw.example/api", 1),
        ("https://gw.example/api?utm_source=x#frag", "https://gw.example/api", 1),
        ("  https://gw.example/api\n", "https://gw.example/api", 1),
        ("https://gw.example/v1/chat/completions", "https://gw.example", 1),
        ("https://gw.example/api/v1/responses", "https://gw.example/api", 1),
        ("https://gw.example/api/responses", "https://gw.example/api", 1),
        ("https://gw.example/v1/v1/chat/completions", "https://gw.example", 2),
        ("https://gw.example/api/api", "https://gw.example/api", 1),
        ("https://gw.example/api/api/v1", "https://gw.example/api", 1),
        ("localhost:8000", "http://localhost:8000", 1),
        ("gw.example/api", "https://gw.example/api", 1),
        ("ws://127.0.0.1:9/v1", "http://127.0.0.1:9", 1),
        ("https://gw.example/api?next=a@b", "https://gw.example/api", 1),
    ],
)
def test_normalize_base_url(raw, expected, warns):
    url, warnings = normalize_base_url(raw)
    assert url == expected
    assert len(warnings) == warns, warnings


def test_doubled_v1_is_named():
    _, warnings = normalize_base_url("https://gw.example/v1/v1")
    assert any("/v1 twice" in w for w in warnings)


def test_a_pasted_endpoint_is_named_whole():
    _, warnings = normalize_base_url("http://127.0.0.1:8080/v1/chat/completions")
    assert warnings == ["base_url ended with the endpoint path /v1/chat/completions; "
                        "spark-pair appends it itself, removed it"]


@pytest.mark.parametrize("raw", ["", "   ", "ftp://x/y", "https:///nohost", "https:/gw.example/api",
                                 "http:gw.example"])
def test_unusable_base_urls_are_config_errors(raw):
    with pytest.raises(ConfigError) as info:
        normalize_base_url(raw)
    assert info.value.hint


@given(st.text(max_size=60))
def test_normalize_never_raises_anything_else_and_is_idempotent(raw):
    try:
        url, _ = normalize_base_url(raw)
    except ConfigError:
        return
    again, warnings = normalize_base_url(url)
    assert again == url and warnings == []
    assert not url.endswith("/v1") and "?" not in url and not url.endswith("/")


def test_key_diagnosis_strips_and_explains_without_showing_the_key():
    key, warnings = diagnose_key("  Bearer sk-abcdef123456\n", "MY_KEY")
    assert key == "sk-abcdef123456"
    assert len(warnings) == 2
    assert all("sk-abcdef123456" not in w for w in warnings)
    assert diagnose_key("   ", "K") == (None, [])
    assert diagnose_key("sk-good", "K") == ("sk-good", [])


def test_host_of_keeps_only_host_and_port():
    assert host_of("https://user:pw@gw.example:8443/api?k=v") == "gw.example:8443"


@pytest.mark.parametrize("raw", ["https://me:tok-PASSWORD42@gw.example/api",
                                 "http://tok-PASSWORD42@127.0.0.1:9", "http://u:tok-PASSWORD42@/x"])
def test_credentials_in_the_url_are_refused_and_never_shown(raw):
    with pytest.raises(ConfigError) as info:
        normalize_base_url(raw)
    assert "PASSWORD42" not in info.value.message + (info.value.hint or "")


@pytest.mark.parametrize("raw", ["sk-abc\ndef123", "sk-abc\u2019def", "sk-\x00abc"])
def test_a_key_that_cannot_go_in_a_header_is_a_config_error(raw):
    with pytest.raises(ConfigError) as info:
        diagnose_key(raw, "MY_KEY")
    assert "MY_KEY" in info.value.message and "def" not in info.value.message


@pytest.mark.parametrize(("raw", "begins"), [("htp:/127.0.0.1:8765", "htp:/"),
                                             ("htps:/gw.example/api", "htps:/"),
                                             ("hhtp:/x", "hhtp:/"), ("http//127.0.0.1", "http//")])
def test_a_mistyped_scheme_is_named_not_taken_for_a_host(raw, begins):
    """(before: 'base_url has no scheme; assuming https://', then a connection to https://htp)"""
    with pytest.raises(ConfigError) as info:
        normalize_base_url(raw)
    assert f"begins with {begins!r}: a mistyped scheme" in info.value.message


def test_a_host_and_port_without_a_scheme_is_still_a_host():
    assert normalize_base_url("localhost:8080/v1")[0] == "http://localhost:8080"
