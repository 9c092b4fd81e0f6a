"""One error tree for everything a user can hit. Each error says what is wrong and what to do.

    SparkPairError                 message + hint; never carries the API key
    ├── ConfigError                config file / flags / environment (file, line, field)
    ├── UsageError                 bad command-line input
    │   └── TurnInProgress         a second turn started while one runs
    ├── ModelError                 anything that went wrong talking to the model
    │   ├── AuthError              401 / 403: key missing, wrong, whitespace, "Bearer" doubled
    │   ├── EndpointError          404 / 405: wrong path (/v1 doubled or missing); shows the URL
    │   │   └── Redirected         3xx: the base URL moved; names where to (never followed)
    │   ├── ModelNotFound          model id unknown or retired (moves to the next fallback)
    │   ├── BadRequest             400 / 422: the server refused the request body
    │   ├── RateLimited            429 (retried; honours Retry-After)
    │   ├── ServerError            5xx / 504 (retried a bounded number of times)
    │   ├── ConnectionFailed       refused, DNS, proxy, TLS: a link problem, not the model
    │   ├── StreamTimeout          no data within the read timeout / stream stalled
    │   ├── StreamDropped          the connection closed mid-response (retried / reconnected)
    │   ├── IncompleteReply        the reply was cut (output limit, filter, or a diff that stops
    │   │                          mid-hunk / mid-envelope): nothing is written
    │   └── ProtocolError          the body is not an OpenAI-shaped response (shows an excerpt)
    │       └── ProtocolViolation  the server broke HTTP or WebSocket itself (not retried)
    ├── EditError                  turning the diff into file operations
    │   ├── ParseError             the reply holds no usable diff
    │   ├── PathRefused            absolute, "..", symlink escape, .git/
    │   ├── ConflictError          a hunk does not match the file (names the hunk)
    │   ├── StaleError             the file changed since the request and no longer fits
    │   └── ApplyError             writing failed (rolled back)
    ├── PolicyRefused              an operation the approver or flags did not allow
    ├── UndoError                  undo impossible (file changed since, nothing to undo)
    ├── CommitError                a turn not committed (hook, HEAD moved, own edits, git state)
    └── Cancelled                  the user stopped the turn (Ctrl-C, escape, --timeout)

Third-party exceptions are translated at the boundary: `raise ServerError(...) from exc`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import Any

_BEARER_RE = re.compile(r"(Bearer\s+)(?=[A-Za-z0-9])\S+", re.IGNORECASE)
_KEYLIKE_RE = re.compile(r"\b(sk|gsk|xai|rk|pk)([-_])[A-Za-z0-9_\-]{6,}")


_SECRETS: set[str] = set()  # the configured keys this process has read, whatever their shape


def add_secret(value: str | None) -> None:
    """Remember a key this process uses, so that every message, excerpt and log scrubs it."""
    if value and len(value.strip()) >= 8:  # shorter would scrub ordinary words
        _SECRETS.add(value.strip())


def redact(text: str, *secrets: str | None) -> str:
    """Remove secrets (these, every known key, and anything key-shaped) from text meant for a
    human or a log. Redact before cutting text short: a cut key is no longer found."""
    known = {s for s in (*secrets, *_known_keys()) if s}
    for secret in sorted(known, key=len, reverse=True):
        if secret and secret.strip():
            text = text.replace(secret, "***").replace(secret.strip(), "***")
    text = _BEARER_RE.sub(r"\1***", text)
    return _KEYLIKE_RE.sub(r"\1\2***", text)


MIN_SCRUBBED = 12  # a known key shorter than this is not scrubbed from what the model reads


def scrub_keys(text: str) -> str:
    """`text` for the model: every key this process knows (the environment's, the configured
    one, a literal one a config file held) replaced by ***. Only those exact keys, and only
    long ones: a placeholder key ("EMPTY") or a key-shaped word in code stays as it is."""
    for secret in _known_keys():
        secret = secret.strip()
        if len(secret) >= MIN_SCRUBBED and secret in text:
            text = text.replace(secret, "***")
    return text


MAX_EXCERPT_INPUT = 64 * 1024  # characters of a body an excerpt looks at: the rest is cut first


def excerpt(body: str | bytes, limit: int = 300, *, text_only: bool = False) -> str:
    """A short single-paragraph excerpt of a raw response body, whitespace collapsed and every
    known key redacted before it is cut; `text_only` strips HTML tags (and scripts, styles,
    comments) for a message. Only the first MAX_EXCERPT_INPUT characters are looked at, and
    the work is linear in them, whatever a hostile server sends."""
    if isinstance(body, bytes):
        body = body[:4 * MAX_EXCERPT_INPUT].decode("utf-8", "replace")
    body = redact(_cut(body, MAX_EXCERPT_INPUT))
    if text_only and "<" in body:
        body = _unescape(strip_tags(body))
    body = " ".join(body.split())
    return body if len(body) <= limit else body[:limit] + " …"


def _cut(text: str, size: int) -> str:
    """The first `size` characters of `text`, without a word cut at the end (a key cut short
    would no longer be found to redact)."""
    if len(text) <= size:
        return text
    text = text[:size]
    end = max(text.rfind(c, size - 512) for c in " \t\n\r<>\"'")
    return text[:end] if end > 0 else text[:size - 512]


_CLOSERS = {name: re.compile(rf"</{name}\s*>", re.I) for name in ("script", "style")}


class _Next:
    """Where a pattern next occurs at or after a position that only grows from call to call:
    an answer still ahead is reused, so each stretch of text is searched once."""

    def __init__(self, text: str, find: Any) -> None:
        self.text, self.find = text, find
        self.at, self.end = -2, -1  # the last answer (-1: none at all from there on)

    def __call__(self, pos: int) -> tuple[int, int]:
        if self.at == -1 or self.at >= pos:
            return self.at, self.end
        self.at, self.end = self.find(self.text, pos)
        return self.at, self.end


def _finder(needle: str) -> Any:
    def find(text: str, pos: int) -> tuple[int, int]:
        at = text.find(needle, pos)
        return (at, at + len(needle)) if at >= 0 else (-1, -1)
    return find


def _searcher(pattern: re.Pattern[str]) -> Any:
    def find(text: str, pos: int) -> tuple[int, int]:
        m = pattern.search(text, pos)
        return (m.start(), m.end()) if m else (-1, -1)
    return find


def strip_tags(text: str) -> str:
    r"""`text` with each HTML tag, comment, script and style replaced by a space, in one pass
    (a tag regex backtracks over unclosed `<!--` or `<script` to quadratic time). The same
    as re.sub(r"<(script|style)\b.*?</\1\s*>|<!--.*?-->|<[^>]*>", " ", text, flags=re.I | re.S)."""
    nexts = {name: _Next(text, _searcher(p)) for name, p in _CLOSERS.items()}
    comment_end, tag_end = _Next(text, _finder("-->")), _Next(text, _finder(">"))
    out: list[str] = []
    i = 0
    while (p := text.find("<", i)) >= 0:
        end = -1
        head = text[p + 1:p + 7].lower()
        name = "script" if head.startswith("script") else "style" if head.startswith(
            "style") else None
        if name is not None and not _word(text[p + 1 + len(name):p + 2 + len(name)]):
            end = nexts[name](p + 1 + len(name))[1]
        if end < 0 and text.startswith("<!--", p):
            end = comment_end(p + 4)[1]
        if end < 0:
            end = tag_end(p + 1)[1]
            if end < 0:  # no `>` from here on: nothing later is a tag either
                break
        out.append(text[i:p])
        out.append(" ")
        i = end
    out.append(text[i:])
    return "".join(out)


def _word(char: str) -> bool:
    return char.isalnum() or char == "_"


def _unescape(text: str) -> str:
    import html

    try:
        return html.unescape(text)
    except ValueError:  # a numeric reference too long for int(): a code point past the last
        return html.unescape(_LONG_REF_RE.sub("\ufffd", text))


_LONG_REF_RE = re.compile(r"&#(?:[xX][0-9a-fA-F]{1000,}|[0-9]{1000,});?")


class SparkPairError(Exception):
    """Base of every error spark-pair reports to a user."""

    kind = "error"
    default_hint = ""

    def __init__(self, message: str, *, hint: str | None = None, **details: object) -> None:
        self.message = redact(message, *_known_keys())
        self.hint = redact(hint if hint is not None else self.default_hint, *_known_keys())
        self.details = details
        super().__init__(self.message)

    def __str__(self) -> str:
        return self.message

    def describe(self) -> str:
        """Message and hint, as shown to a user."""
        return f"{self.message}\n  hint: {self.hint}" if self.hint else self.message

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"class": type(self).__name__, "kind": self.kind}
        out["message"] = self.message
        if self.hint:
            out["hint"] = self.hint
        return out


def _known_keys() -> list[str]:
    """API keys present in this process's environment or read from the configured variable
    (to scrub from any message)."""
    names = {"SPARK_PAIR_API_KEY", "OPENAI_API_KEY"}
    names.update(v for v in (os.environ.get("SPARK_PAIR_API_KEY_ENV"),) if v)
    found = [os.environ[n] for n in names if len(os.environ.get(n, "").strip()) >= 4]
    return found + sorted(_SECRETS)


class ConfigError(SparkPairError):
    kind = "config"
    default_hint = "run `spark-pair config` to see every effective value and where it came from"


class UsageError(SparkPairError):
    kind = "usage"
    default_hint = "see `spark-pair --help`"


class TurnInProgress(UsageError):
    """A session runs one turn at a time."""

    default_hint = ("wait for the turn in flight to finish (its TurnFinished), or cancel it "
                    "with session.cancel() first")


class ModelError(SparkPairError):
    """Something went wrong talking to the model endpoint."""

    kind = "model"
    retryable = False

    def __init__(
        self,
        message: str,
        *,
        hint: str | None = None,
        status: int | None = None,
        url: str | None = None,
        body: str | None = None,
        retry_after: float | None = None,
        **details: object,
    ) -> None:
        self.status = status
        self.url = url
        self.body = excerpt(body) if body else None
        self.retry_after = retry_after
        super().__init__(message, hint=hint, **details)

    def to_dict(self) -> dict[str, object]:
        out = super().to_dict()
        for name in ("status", "url", "body", "retry_after"):
            value = getattr(self, name)
            if value is not None:
                out[name] = redact(value, *_known_keys()) if isinstance(value, str) else value
        return out


class AuthError(ModelError):
    kind = "auth"
    default_hint = (  # (short: with the message it is read whole in 6 lines at 80 columns)
        "check the key: exported in this shell? no stray whitespace, newline or 'Bearer ' "
        "prefix? spark-pair takes an API key, never an OAuth / login token"
    )


class EndpointError(ModelError):
    kind = "endpoint"
    default_hint = (
        "base_url must be the API root (e.g. https://host/api); spark-pair appends /v1/...; "
        "check for /v1 doubled or missing"
    )


class Redirected(EndpointError):
    """The server answered with a redirect (3xx). It is never followed: the API key must not
    go to another address unasked."""

    kind = "redirect"
    default_hint = ("set the base URL to where it points (model.base_url / --base-url); "
                    "spark-pair does not follow redirects, so the API key goes nowhere else")

    def __init__(self, message: str, *, target: str | None = None, hint: str | None = None,
                 status: int | None = None, url: str | None = None,
                 body: str | None = None) -> None:
        self.target = target  # where it points (None: no Location header)
        super().__init__(message, hint=hint, status=status, url=url, body=body)


class ModelNotFound(ModelError):
    kind = "model_not_found"
    default_hint = (
        "check the model id for typos or a preview suffix; retired models disappear in batches; "
        "list what the key can use with `spark-pair doctor`, and set [model] fallbacks"
    )


class BadRequest(ModelError):
    kind = "bad_request"
    default_hint = "the server refused the request body; lower max_tokens or check the model id"


class RateLimited(ModelError):
    kind = "rate_limit"
    retryable = True
    default_hint = "rate limited: wait, lower concurrency, or use a key with a higher limit"


class ServerError(ModelError):
    kind = "server"
    retryable = True
    default_hint = (
        "the server is overloaded or failing: retry later, lower max_tokens or concurrency"
    )


class ConnectionFailed(ModelError):
    kind = "connection"
    retryable = True
    default_hint = (
        "this is a link problem, not the model: is a configured proxy running (HTTP(S)_PROXY)? "
        "does the host resolve? is the server up on that port?"
    )


class StreamTimeout(ModelError):
    kind = "timeout"
    retryable = True
    default_hint = (
        "a buffering proxy, a slow or overloaded server, or a timeout that is "
        "too short: raise [request] timeout_ms or try another transport"
    )


class StreamDropped(ModelError):
    kind = "dropped"
    retryable = True
    # shown once the retries are spent (the message says how many): what is left to do; the
    # client names the transports worth a try (drop_hint)
    default_hint = (
        "nothing was written; send the turn again (ctrl+r in the app), or try another transport "
        "([session] transport): a proxy or load balancer that cuts long streams, or an unstable "
        "server, does this"
    )

    @staticmethod
    def drop_hint(others: Sequence[str]) -> str:
        """The hint naming `others`, the transports not yet tried (none: no transport advice)."""
        if not others:
            return ("nothing was written; send the turn again (ctrl+r in the app): a proxy or "
                    "load balancer that cuts long streams, or an unstable server, does this")
        return ("nothing was written; send the turn again (ctrl+r in the app), or try another "
                f"transport ([session] transport = {' or '.join(others)}): a proxy or load "
                "balancer that cuts long streams, or an unstable server, does this")


class IncompleteReply(ModelError):
    """The reply stopped before it was finished: the output limit or a content filter cut it,
    or its diff ends inside a hunk, a file header or an unclosed envelope."""

    kind = "incomplete"
    default_hint = (
        "nothing was written; raise max_tokens ([request] max_tokens in .spark-pair.toml or the "
        "user config) or split the request into smaller steps"
    )


class ProtocolError(ModelError):
    kind = "protocol"
    default_hint = (
        "the response is not an OpenAI-shaped body (an HTML page, a proxy's error page, or the "
        "wrong endpoint); check base_url and look at the body excerpt"
    )


class ProtocolViolation(ProtocolError):
    """The server broke the wire protocol itself (a malformed chunk size or Content-Length, a
    masked or reserved-bit WebSocket frame, text that is not UTF-8, a close code no endpoint
    may send): not a dropped connection, so not retried (the same answer would come again)."""

    default_hint = (
        "nothing was written; a retry would get the same answer: check that base_url is the "
        "API and not another service, and any proxy in between (`spark-pair doctor`)"
    )


class TooLarge(ProtocolError):
    """A server sent more than spark-pair holds of one answer (the limits are in
    protocol.limits and docs/headless.md, "Size limits")."""

    kind = "too_large"
    default_hint = (
        "nothing was written; no real reply is this large: a broken or hostile server, or a "
        "proxy in between (check base_url); for a reply this long, split the request into "
        "smaller steps"
    )


class EditError(SparkPairError):
    kind = "edit"


class ParseError(EditError):
    kind = "parse"
    default_hint = "the model's reply held no usable unified diff; regenerate or rephrase"


class PathRefused(EditError):
    kind = "path"
    default_hint = "spark-pair only writes inside the repository, never under .git/"


class ConflictError(EditError):
    kind = "conflict"
    default_hint = "the hunk's context does not match the file; regenerate the turn"


class StaleError(EditError):
    kind = "stale"
    default_hint = "the file changed on disk after the request; regenerate against the new content"


class ApplyError(EditError):
    kind = "apply"
    default_hint = "nothing was changed: the turn was rolled back"


class PolicyRefused(SparkPairError):
    kind = "policy"
    default_hint = "deletes need --allow-delete and renames --allow-rename (or approval in the TUI)"


class UndoError(SparkPairError):
    kind = "undo"
    default_hint = "`spark-pair undo --list` shows the journaled turns and which are undone"


class CommitError(SparkPairError):
    """A turn that was not committed (it stays applied): `reason` in details says why (state,
    mixed, hook, moved, git)."""

    kind = "commit"
    default_hint = "the turn stays applied; `git status` shows it, and you can commit it by hand"


class Cancelled(SparkPairError):
    kind = "cancelled"
