"""Base-URL and key hygiene: the set-up mistakes users make most, noticed and explained."""

from __future__ import annotations

import re
import string
from urllib.parse import urlsplit, urlunsplit

from .errors import ConfigError

_API_SUFFIXES = ("/chat/completions", "/responses", "/completions", "/models")
_LOCAL_HOSTS = ("localhost", "127.", "0.0.0.0", "[::1]")
# the one correction that leaves nothing to fix: a note, not a problem
WHITESPACE_NOTE = "base_url had leading/trailing whitespace or a newline; removed it"


def normalize_base_url(raw: str) -> tuple[str, list[str]]:
    """The API root to use for `raw`, and a warning for each thing that had to be fixed.

    Both usual forms are right and give the same URLs, silently: the API root
    (`https://host/api`) and the SDK form ending in one `/v1` (`http://host:8080/v1`), since
    spark-pair appends `/v1/...` itself. Real mistakes are fixed and explained: `/v1/v1`, a
    pasted endpoint path, `/api/api`, whitespace, a pasted query string or fragment.
    """
    warnings: list[str] = []
    url = raw.strip()
    if url != raw:
        warnings.append(WHITESPACE_NOTE)
    if not url:
        raise ConfigError("no base URL is configured",
                          hint="set [model] base_url in .spark-pair.toml, SPARK_PAIR_BASE_URL, "
                               "or pass --base-url (the API root, e.g. https://host/api)")
    if "://" not in url and re.match(r"(?i)(https?|wss?):/*(?!\d)", url):
        raise ConfigError("base_url's scheme is malformed (it needs '://', e.g. https://host)",
                          hint="the API root looks like https://host/api")
    typo = re.match(r"([A-Za-z][\w+.-]*):/|(?i:https?|wss?)//", url) if "://" not in url \
        else None
    if typo is not None:  # htp:/host or http//host, not host:port
        raise ConfigError(f"base_url begins with {typo.group(0)!r}: a mistyped scheme (it "
                          "needs http:// or https://)",
                          hint="the API root looks like https://host/api")
    if "://" not in url:
        scheme = "http" if url.startswith(_LOCAL_HOSTS) else "https"
        warnings.append(f"base_url has no scheme; assuming {scheme}://")
        url = f"{scheme}://{url}"
    if "@" in re.split(r"[/?#]", url.split("://", 1)[1], maxsplit=1)[0]:
        raise ConfigError("base_url holds a user name or password (user:secret@host); "
                          "it is not used and not shown",
                          hint="remove it from the URL; the key goes in the variable named by "
                               "[model] api_key_env (SPARK_PAIR_API_KEY by default)")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises on a bad port
    except ValueError as exc:
        raise ConfigError(f"base_url {url!r} is not a valid URL: {exc}",
                          hint="the API root looks like https://host/api") from exc
    scheme = parts.scheme.lower()
    if scheme in ("ws", "wss"):
        scheme = "http" if scheme == "ws" else "https"
        warnings.append(f"base_url is a WebSocket URL; using {scheme}:// (WS is derived from it)")
    if scheme not in ("http", "https"):
        raise ConfigError(f"base_url has an unsupported scheme {parts.scheme!r}",
                          hint="use http:// or https://")
    if not parts.hostname:
        raise ConfigError(f"base_url {raw.strip()!r} has no host name",
                          hint="the API root looks like https://host/api")
    if re.search(r"\s", parts.netloc):
        raise ConfigError(f"base_url {raw.strip()!r} has whitespace in its host name",
                          hint="the API root looks like https://host/api")
    if parts.query or parts.fragment:
        warnings.append("base_url had a query string or fragment (tracking parameters?); "
                        "removed it")
    path = parts.path.rstrip("/" + string.whitespace)  # a trailing slash is harmless
    path = _strip_endpoint(path, warnings)
    doubled = re.sub(r"(?i)(/api)(?:/api)+(?=/|$)", r"\1", path)
    if doubled != path:
        path = doubled
        warnings.append("base_url had /api twice (requests would go to /api/api/... and 404); "
                        "used it once")
    return urlunsplit((scheme, parts.netloc, path, "", "")), warnings


def _strip_endpoint(path: str, warnings: list[str]) -> str:
    """`path` without a pasted endpoint and without `/v1` (one `/v1` is the SDK form: silent)."""
    endpoint = ""
    for suffix in _API_SUFFIXES:
        if path.lower().endswith(suffix):
            path, endpoint = path[: -len(suffix)], suffix
            break
    count = 0
    while path.lower().endswith("/v1"):
        path = path[:-3]
        count += 1
    if endpoint:
        pasted = "/v1" * count + endpoint
        warnings.append(f"base_url ended with the endpoint path {pasted}; spark-pair appends "
                        "it itself, removed it")
        count -= 1  # the endpoint's own /v1 is part of what was pasted
    if count > 1 or (count == 1 and endpoint):
        warnings.append("base_url had /v1 twice (requests would go to /v1/v1/... and 404); "
                        "removed both: base_url is the API root or ends in one /v1")
    return path


def diagnose_key(raw: str | None, env_name: str) -> tuple[str | None, list[str]]:
    """The key to send and warnings about its shape. Never returns the key inside a message."""
    if raw is None or not raw.strip():
        return None, []
    warnings: list[str] = []
    key = raw.strip()
    if key != raw:
        warnings.append(f"the key in ${env_name} has leading/trailing whitespace or a newline; "
                        "stripped it (fix the variable: a 401 often comes from this)")
    if key.lower().startswith("bearer "):
        key = key[7:].strip()
        warnings.append(f"the key in ${env_name} starts with 'Bearer '; spark-pair adds that "
                        "itself, removed it")
    if any(ord(c) < 32 or ord(c) > 126 for c in key):
        raise ConfigError(f"the key in ${env_name} holds a character that cannot be sent in an "
                          "HTTP header (a line break inside it, or a pasted smart quote or other "
                          "non-ASCII character); it is not shown",
                          hint=f"export {env_name} again, copying only the key itself")
    if any(c.isspace() for c in key):
        warnings.append(f"the key in ${env_name} contains whitespace inside it; it is probably "
                        "two values pasted together")
    return key, warnings


def host_of(base_url: str) -> str:
    """host[:port] of a URL, for records (never the path, query or credentials)."""
    parts = urlsplit(base_url)
    host = parts.hostname or ""
    return f"{host}:{parts.port}" if parts.port else host
