"""Translate HTTP statuses, bodies and socket failures into the error tree in base/errors.py."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urljoin, urlsplit, urlunsplit

from ..base.errors import (
    AuthError,
    BadRequest,
    ConfigError,
    ConnectionFailed,
    EndpointError,
    IncompleteReply,
    ModelError,
    ModelNotFound,
    ProtocolError,
    ProtocolViolation,
    RateLimited,
    Redirected,
    ServerError,
    StreamDropped,
    StreamTimeout,
    add_secret,
    excerpt,
    redact,
)


def _parse_error_body(body: str) -> tuple[str | None, str | None]:
    """(code, message) from an OpenAI error JSON body, or (None, None)."""
    try:
        data = json.loads(body)
    except (ValueError, TypeError, RecursionError):  # (RecursionError: "[[[[...", nested deep)
        return None, None
    err = data.get("error") if isinstance(data, dict) else None
    if isinstance(err, dict):
        return err.get("code") or err.get("type"), err.get("message")
    if isinstance(err, str):
        return None, err
    return None, None


def _secret(api_key: str | None) -> str | None:
    """The key to scrub from text (remembered for every later message, whatever its shape);
    keys under 4 characters would scrub ordinary letters."""
    add_secret(api_key)
    return api_key if api_key and len(api_key.strip()) >= 4 else None


def retry_after_of(headers: Mapping[str, str] | None) -> float | None:
    if not headers:
        return None
    value = headers.get("retry-after") or headers.get("Retry-After")
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def auth_cause(api_key: str | None) -> str:
    """Which of the usual 401 causes this key looks like."""
    if not api_key:
        return "no API key was sent: the key env var is not set or not exported in this shell"
    if api_key != api_key.strip() or "\n" in api_key:
        return "the key has leading/trailing whitespace or a newline (check how it was pasted)"
    if api_key.lower().startswith("bearer"):
        return "the key starts with 'Bearer': it is added for you, so it is doubled"
    return "the key was refused: wrong, deleted or out of credit"


def error_from_response(status: int, body: str, url: str, *, api_key: str | None = None,
                        headers: Mapping[str, str] | None = None, model: str = "",
                        content_type: str = "") -> ModelError:
    code, message = _parse_error_body(body)
    secret = _secret(api_key)
    safe_url = redact(url, secret)
    shaped = code is not None or message is not None  # an OpenAI-style JSON error body
    # what the server said: its JSON message, else an excerpt of the raw body
    detail = redact(message or "", secret) if shaped else body_excerpt(redact(body, secret))
    kw: dict[str, Any] = dict(status=status, url=safe_url, body=redact(body, secret))
    if 300 <= status < 400:
        return redirected(status, safe_url, _location(headers), kw["body"])
    if code == "model_not_found":
        return ModelNotFound(f"model {model!r} was not found at {safe_url} ({detail})", **kw)
    if status in (401, 403):
        said = "" if shaped else f" (the server said: {detail})"
        return AuthError(f"HTTP {status} from {safe_url}: {auth_cause(api_key)}{said}", **kw)
    if status == 429:
        return RateLimited(f"rate limited (429) at {safe_url}: {detail}",
                           retry_after=retry_after_of(headers), **kw)
    doubled = "/v1/v1" in url
    note = " — /v1 is doubled: remove /v1 from base_url" if doubled else ""
    if not shaped and status not in GATEWAY and ("html" in content_type.lower()
                                                 or _is_html(body)):
        page = EndpointError if status in (404, 405, 501) else ProtocolError
        return page(f"{safe_url} answered HTTP {status} with an HTML page, not the API{note}: "
                    f"{detail}", hint=HTML_HINT, **kw)
    if status == 501:  # the server does not do this request at all: asking again cannot help
        return EndpointError(f"HTTP 501 (not implemented) from {safe_url}{note}: {detail}",
                             hint=NOT_IMPLEMENTED_HINT, **kw)
    if status >= 500:
        return ServerError(f"server error {status} at {safe_url}: {detail}",
                           retry_after=retry_after_of(headers), **kw)
    if not shaped and status not in (404, 405):
        return ProtocolError(f"HTTP {status} from {safe_url} is not an OpenAI-shaped body"
                             f" ({content_type or 'no content type'}): {detail}", **kw)
    if status in (404, 405):
        return EndpointError(f"HTTP {status} for {safe_url}{note}: {detail}", **kw)
    if status in (400, 422):
        return BadRequest(f"HTTP {status} from {safe_url}: {detail}", **kw)
    return ProtocolError(f"unexpected HTTP {status} from {safe_url}: {detail}", **kw)


GATEWAY = (502, 503, 504)  # a proxy's page for a server behind it that is down: retried
HTML_HINT = ("a web site, a login page or a proxy's error page answers there: base_url must "
             "be the API root (e.g. https://host/api); check any proxy")
NOT_IMPLEMENTED_HINT = ("this server does not implement the request: base_url must be the API "
                        "root (e.g. https://host/api) of an OpenAI-compatible server; "
                        "`spark-pair doctor` shows what it offers")
# what httpx (h11, httpcore) says of a connection that ended early: a drop; any other remote
# protocol error is an answer that breaks HTTP
DROP_SAYINGS = ("peer closed connection", "peer unexpectedly closed", "server disconnected",
                "can't receive data when peer state is error")


_BYTEARRAY = re.compile(r"""bytearray\((b'.*?'|b".*?")\)""")  # h11 quotes what it read so


def http_broken(exc: BaseException, url: str) -> ModelError:
    """httpx's RemoteProtocolError as what it was: a dropped connection (retried), or an
    answer that breaks HTTP (a chunk size that is no number, two Content-Lengths that
    disagree, a status line that is not HTTP: not retried, named)."""
    said = _BYTEARRAY.sub(r"\1", str(exc).strip())
    if not said or said.lower().startswith(DROP_SAYINGS):
        return dropped(url, f"the connection closed mid-response: {said or type(exc).__name__}")
    return ProtocolViolation(f"{url} broke the HTTP protocol: {excerpt(said, 160)}", url=url)


WS_PROTOCOL_ERROR, WS_INVALID_DATA = 1002, 1007
WS_FAILED = (WS_PROTOCOL_ERROR, WS_INVALID_DATA)  # the close codes of a client that failed it


def ws_broken(exc: BaseException, url: str) -> ProtocolViolation | None:
    """A WebSocket the client closed because the server broke the protocol (a masked or
    reserved-bit frame, a bad close code: 1002; text that is not UTF-8: 1007), as such;
    None for any other close (a drop, the server's own close)."""
    sent, rcvd = getattr(exc, "sent", None), getattr(exc, "rcvd", None)
    code = getattr(sent, "code", None)
    if code not in WS_FAILED or (
            rcvd is not None and getattr(exc, "rcvd_then_sent", False)):
        return None  # (the client echoing the server's own close is no finding of its own)
    why = excerpt(str(getattr(sent, "reason", "") or ""), 160) or "no reason given"
    what = "a text message that is not UTF-8" if code == WS_INVALID_DATA else \
        "a frame that breaks the WebSocket protocol"
    return ProtocolViolation(f"{url} sent {what} ({why})", url=url)


def handshake_failed(exc: BaseException) -> str:
    """websockets' words for a failed upgrade, with their cause (an answer whose body is over
    its limit: 'did not receive a valid HTTP response (body too large: ...)')."""
    cause = str(exc.__cause__ or "")
    return f"{exc} ({excerpt(cause, 160)})" if cause else str(exc)


ENDPOINTS = ("/v1/chat/completions", "/v1/responses", "/v1/models")
MAX_LOCATION = 300  # a Location longer than this is cut in the message


def _location(headers: Mapping[str, str] | None) -> str:
    if not headers:
        return ""
    return (headers.get("location") or headers.get("Location") or "").strip()


def redirected(status: int, url: str, location: str, body: str | None = None) -> Redirected:
    """A 3xx answer: where it points and the base URL that stands for (never followed)."""
    kw: dict[str, Any] = dict(status=status, url=url, body=body)
    if not location:
        return Redirected(f"HTTP {status} from {url}: a redirect without a Location header "
                          "(the server or a proxy in front of it moved the API)", **kw)
    target = urljoin(url, location)
    shown = target if len(target) <= MAX_LOCATION else target[:MAX_LOCATION] + " …"
    base = moved_base(url, target)
    hint = None
    if base is not None:
        hint = (f"set the base URL to where it points: {base} (model.base_url / --base-url); "
                "spark-pair does not follow redirects, so the API key goes nowhere else")
    return Redirected(f"the server redirected the request to {shown} (HTTP {status} for {url})",
                      hint=hint, target=shown, **kw)


def moved_base(url: str, target: str) -> str | None:
    """The base URL a redirect target stands for, when it keeps the request's endpoint path
    (`https://new/api/v1/responses` for `.../v1/responses` -> `https://new/api`); else None."""
    old, new = urlsplit(url), urlsplit(target)
    scheme = {"ws": "http", "wss": "https"}.get(new.scheme, new.scheme)
    if scheme not in ("http", "https") or not new.netloc:
        return None
    for endpoint in ENDPOINTS:
        if old.path.endswith(endpoint) and new.path.endswith(endpoint):
            return urlunsplit((scheme, new.netloc, new.path[:-len(endpoint)], "", ""))
    return None


# (the message says why)
MODE_HINT = ("set transport = auto (--transport auto, or [session] transport in the config: it "
             "uses what the server offers) or chat")


def mode_not_offered(err: ModelError, mode: str) -> EndpointError:
    """A 404/405 (or a refused WebSocket upgrade) for a mode the transport setting demands,
    from a server whose API root answers: the URL is right, the mode is missing."""
    what = "WebSocket mode" if mode == "ws" else "the Responses API"
    return EndpointError(f"{err.message} — the base URL is right (/v1/models answers), but this "
                         f"server does not offer {what}", hint=MODE_HINT, status=err.status,
                         url=err.url, body=err.body)


def fallback_reason(err: ModelError, mode: str) -> str:
    """Why auto leaves `mode` for the next transport, as far as the answer tells: an HTML
    page, the API saying the mode is missing, or a path that is not there (a wrong base URL
    or a server without the mode: a bare 404 cannot tell which); with no status (a failed
    upgrade, a protocol broken), its own message."""
    if isinstance(err, ProtocolViolation) or err.status is None:  # it names what happened
        return err.message
    what = "WebSocket mode" if mode == "ws" else "Responses API"
    where = err.url or "the server"
    status = f"HTTP {err.status}"
    body = err.body or ""
    if _is_html(body):
        return (f"{where} answered with an HTML page ({status}), not the API: a wrong "
                f"base URL, or a login or proxy page")
    _, said = _parse_error_body(body)
    if said:  # the API itself answered: the base URL is right
        return f"no {what} here ({status} at {where}: {excerpt(said, 120)})"
    if err.status in (404, 405):
        return (f"nothing at {where} ({status}): a wrong base URL, or no {what} on "
                f"this server")
    return f"{where} refused it ({status}): no {what} here"


def _is_html(body: str) -> bool:
    head = body.lstrip()[:200].lower()
    return head.startswith(("<!doctype html", "<html")) or "<html" in head


def not_openai_body(url: str, body: str, content_type: str, status: int = 200) -> ProtocolError:
    return ProtocolError(f"{url} answered with {content_type or 'no content type'}, not an "
                         f"event stream: {body_excerpt(body)}", status=status, url=url, body=body)


def odd_event(url: str, data: str | bytes, what: str = "a stream event") -> ProtocolError:
    """A streamed message that is not what the API sends: not JSON, not a JSON object, or a
    field of the wrong type (`what`: how it came)."""
    shown = data[:2000]  # (an excerpt needs no more)
    if isinstance(shown, bytes):
        shown = shown.decode("utf-8", "replace")
    return ProtocolError(f"{url} sent {what} that is not an API event: "
                         f"{excerpt(shown, 200) or '(empty)'}", url=url, body=shown)


def error_object(err: Any) -> dict[str, Any]:
    """A stream's `error` as an error object: an object as is, a text as its message."""
    return err if isinstance(err, dict) else {"message": str(err)}


SERVER_TYPES = ("server_error", "api_error")  # OpenAI's and Ollama's type of a server failure


def error_from_event(err: Mapping, url: str, *, status: int | None = None, model: str = "",
                     api_key: str | None = None) -> ModelError:
    """An `error` / `response.failed` event (SSE or WebSocket) as a ModelError. A numeric
    `code` is the HTTP status the server would have answered (vLLM, llama.cpp)."""
    code = err.get("code") or err.get("type")
    if type(status) is not int:  # (a server's event may say anything there)
        status = None
    if status is None and type(code) is int and 400 <= code <= 599:
        status = code
    message = redact(str(err.get("message") or code or "error"), _secret(api_key))
    retry_after = retry_after_of(err.get("headers") if isinstance(err.get("headers"), Mapping)
                                 else None)
    if code == "model_not_found":
        return ModelNotFound(f"model {model!r} was not found at {url} ({message})",
                             status=status or 404, url=url)
    if status in (401, 403) or code == "invalid_api_key":
        return AuthError(f"{url}: {auth_cause(api_key)}", status=status or 401, url=url)
    if status == 429 or code in ("rate_limit_exceeded", "rate_limit"):
        return RateLimited(f"rate limited at {url}: {message}", status=429, url=url,
                           retry_after=retry_after)
    if (status or 0) >= 500 or err.get("type") in SERVER_TYPES or code == "server_error":
        return ServerError(f"server error at {url}: {message}", status=status, url=url,
                           retry_after=retry_after)
    return BadRequest(f"{url} refused the request: {message}", status=status, url=url,
                      code=code)


LINK_HINT = ("is a configured proxy running (HTTP(S)_PROXY)? does the host resolve? is the server "
             "up on that port?")  # (the message says it is a link problem)


CERT_HINT = "a TLS-intercepting proxy or a wrong certificate: set SSL_CERT_FILE to your CA bundle"
CA_VARS = ("SSL_CERT_FILE", "SSL_CERT_DIR")  # where the CA certificates come from, when set


def connection_failed(exc: BaseException, url: str) -> ConnectionFailed:
    """Refused, DNS, TLS or proxy failure: a link problem, reported at once (not retried)."""
    untrusted = _cert_refused(exc)
    if untrusted is not None:
        err = ConnectionFailed(f"could not connect to {url}: its TLS certificate is not "
                               f"trusted ({untrusted}){_ca_source()}", url=url, hint=CERT_HINT)
        err.retryable = False
        return err
    proxy = [n for n in ("HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy", "ALL_PROXY")
             if os.environ.get(n)]
    note = f"; a proxy is set ({', '.join(proxy)}): is it running?" if proxy else ""
    err = ConnectionFailed(f"could not connect to {url}: {type(exc).__name__}: {exc} — a link "
                           f"problem, not the model{note}", url=url, hint=LINK_HINT)
    err.retryable = False  # nothing listens there: retrying only delays the answer
    return err


def _cert_refused(exc: BaseException | None) -> str | None:
    """What OpenSSL said when it did not trust the server's certificate (the error or one
    it came from: httpx wraps it), or None for any other failure."""
    import ssl

    chain: list[BaseException] = []
    while exc is not None and len(chain) < 6:  # (a chain of causes, bounded)
        chain.append(exc)
        exc = exc.__cause__ or exc.__context__
    for each in chain:
        if isinstance(each, ssl.SSLCertVerificationError):
            return each.verify_message or each.reason or "certificate verify failed"
    if any("CERTIFICATE_VERIFY_FAILED" in str(each) for each in chain):
        return "certificate verify failed"
    return None


def _ca_source() -> str:
    """Which variable gave the CA certificates, when one did (for a message)."""
    set_ = [f"{n}={os.environ[n]}" for n in CA_VARS if os.environ.get(n)]
    return f"; the CA certificates come from {' and '.join(set_)}" if set_ else ""


def ca_bundle_failed(exc: BaseException) -> ConfigError:
    """The CA certificates could not be loaded for TLS (a missing or unreadable SSL_CERT_FILE,
    a file that holds no PEM certificate): a configuration error, before any request."""
    import ssl

    name = next((n for n in CA_VARS if os.environ.get(n)), None)
    where = f"{name}={os.environ[name]}" if name else "the CA bundle"
    if isinstance(exc, FileNotFoundError):
        what = "no such file"
    elif isinstance(exc, IsADirectoryError):
        what = "a directory, not a file (a folder of certificates goes in SSL_CERT_DIR)"
    elif isinstance(exc, ssl.SSLError):
        what = f"it holds no PEM certificate ({exc.reason or exc})"
    elif isinstance(exc, OSError):
        what = f"it cannot be read ({exc.strerror or exc})"
    else:
        what = f"{type(exc).__name__}: {exc}"
    fix = f"point {name} at" if name else "give"
    return ConfigError(f"the TLS CA certificates cannot be loaded from {where}: {what}",
                       hint=f"{fix} a PEM file of CA certificates (your CA bundle), or unset "
                            f"{name or 'SSL_CERT_FILE'} to use the built-in ones")


def tls_context() -> Any:
    """The TLS context a wss:// socket uses (the one websockets would make itself:
    ssl.create_default_context()), or the ConfigError of an SSL_CERT_FILE it loaded nothing
    from (OpenSSL skips a missing or broken one without a word, and the handshake fails)."""
    import ssl

    ctx = ssl.create_default_context()
    cafile = os.environ.get("SSL_CERT_FILE")
    if cafile and not ctx.cert_store_stats()["x509_ca"]:  # nothing loaded: load it to say why
        try:
            ctx.load_verify_locations(cafile)
        except (OSError, ValueError) as exc:
            return ca_bundle_failed(exc)
    return ctx


def connect_timeout(url: str, seconds: float) -> StreamTimeout:
    """Connecting took too long: a timeout, so it is retried."""
    return StreamTimeout(f"could not connect to {url} within {seconds:g} s (connect timeout)",
                         url=url, hint="a slow link or an overloaded server: try again, or "
                                       "check the link (a VPN, a proxy, the host)")


def timeout(url: str, seconds: float, capped: bool = False) -> StreamTimeout:
    why = " (the time left of the retry deadline)" if capped else ""
    return StreamTimeout(f"no data from {url} for {seconds:.3g} s{why}", url=url)


def dropped(url: str, why: str = "the connection closed mid-response") -> StreamDropped:
    return StreamDropped(f"{why} ({url})", url=url)


LIMIT_REASONS = ("length", "max_output_tokens", "max_tokens")  # "the output limit", per API
SERVER_LIMIT_HINT = (
    "nothing was written; raising max_tokens will not help: send less context (fewer or "
    "smaller files, a shorter conversation), split the request into smaller steps, or use a "
    "server with a larger context window (llama.cpp: --ctx-size; llama-cpp-python: --n_ctx)")


def incomplete(url: str, reason: object, max_tokens: object = None,
               output_tokens: int | None = None, counted: bool = True) -> IncompleteReply:
    """A reply the server ended early: the output limit (`length`, `max_output_tokens`), a
    content filter, or a reason it did not give. With the reply's `output_tokens` (`counted`
    by the server, or estimated), a limit well below max_tokens (or none sent) is the
    server's own: its context window or its own cap, which max_tokens does not move."""
    hint = None
    cap = max_tokens if isinstance(max_tokens, int) else None
    at_limit = False  # it stopped at the max_tokens it was sent, as far as can be told
    if reason in LIMIT_REASONS:
        why, hint, at_limit = _limit_cut(cap, output_tokens, counted)
    elif reason == "content_filter":
        why = "the server's content filter stopped it"
        hint = "nothing was written; rephrase or split the request"
    else:
        why = f"the server marked it incomplete ({reason or 'no reason given'})"
    return IncompleteReply(f"the reply was cut before it finished: {why} ({url})", url=url,
                           hint=hint, reason=reason, max_tokens=max_tokens,
                           output_limit=at_limit)


def _limit_cut(cap: int | None, output_tokens: int | None,
               counted: bool) -> tuple[str, str | None, bool]:
    """(why, hint, at the output limit) for a reply ended by a token limit. A server that
    counts stops at max_tokens itself, so a count below it was another limit; an estimate
    (characters / 4) may be a third off either way, so only far below it says as much, and
    near it both causes are named."""
    reached = (f"the output limit{f' of {cap:,} tokens' if cap else ''} was reached", None, True)
    if output_tokens is None:
        return reached
    if cap is not None:
        if counted and output_tokens >= cap * 0.98 or not counted and output_tokens >= cap:
            return reached
        if not counted and (output_tokens >= cap * 0.7 or cap - output_tokens < 100):
            return (f"the output limit of {cap:,} tokens was reached, or the server's context "
                    f"window ended it (about {output_tokens:,} tokens came)",
                    "nothing was written; split the request into smaller steps; then, near "
                    "max_tokens: raise it ([request] max_tokens); well short of it: the "
                    "server's context window ended the reply, so send less context (fewer or "
                    "smaller files) or use a server with a larger window (llama.cpp: "
                    "--ctx-size; llama-cpp-python: --n_ctx)", True)
    about = "" if counted else "about "
    below = f"below the max_tokens of {cap:,}" if cap else "no max_tokens was sent"
    return (f"the server stopped it after {about}{output_tokens:,} output tokens ({below}): "
            "its context window (the prompt and the reply together) or its own limit ended it",
            SERVER_LIMIT_HINT, False)


def output_limit_reached(err: ModelError | None) -> bool:
    """Whether a cut reply stopped at the max_tokens it was sent (as asked: every token it
    was allowed), not for a reason of the server's."""
    return isinstance(err, IncompleteReply) and err.details.get("output_limit") is True


def counted_cut(cut: ModelError | None, output_tokens: int, counted: bool) -> ModelError | None:
    """A cut reply's error once its output tokens are known (the stream says why it ended
    before its usage comes): `incomplete` again, with them."""
    if not isinstance(cut, IncompleteReply) or "reason" not in cut.details:
        return cut
    return incomplete(cut.url or "", cut.details["reason"], cut.details.get("max_tokens"),
                      output_tokens, counted)


def body_excerpt(body: str, limit: int = 200) -> str:
    """The first `limit` characters of a raw body as text: HTML tags stripped."""
    return excerpt(body, limit, text_only=True) or "(empty body)"
