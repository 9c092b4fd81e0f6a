"""Settings: defaults < user file < project file < environment < flags.

Every effective value remembers where it came from (`Settings.sources`), so `spark-pair config`
can say which config is in effect. Errors name the file, the line and the field.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from . import dirs
from .dirs import PROJECT_FILE
from .errors import ConfigError, add_secret
from .transport import TRANSPORT_CHOICES
from .urls import diagnose_key, normalize_base_url

if TYPE_CHECKING:
    from typing import Any


OTLP_PROTOCOLS = ("", "http/protobuf", "grpc")
ENV_OVERRIDES = {
    "SPARK_PAIR_BASE_URL": "model.base_url",
    "SPARK_PAIR_MODEL": "model.name",
    "SPARK_PAIR_TRANSPORT": "session.transport",
    "SPARK_PAIR_API_KEY_ENV": "model.api_key_env",
    "SPARK_PAIR_TELEMETRY": "telemetry.enabled",
}
FLAGS = {"model.name": "--model", "model.base_url": "--base-url",
         "session.transport": "--transport", "review.repair": "--no-repair"}
_INTERP = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_FIX_HINT = "fix the value where it is set (the file and line, variable or flag named)"
RANGES: dict[str, tuple[float, float]] = {
    "request.timeout_ms": (1, math.inf), "request.max_tokens": (1, math.inf),
    "request.temperature": (0, 2), "request.max_retries": (0, 20),
    "session.reconnect_attempts": (0, 100),
    "session.history_turns": (0, 1000),
    "session.history_tokens": (0, math.inf), "context.budget_tokens": (100, math.inf),
    "context.map_tokens": (0, math.inf), "context.max_files": (0, 1000),
    "review.check_timeout_s": (0.1, 86400), "review.fix_rounds": (0, 10),
    "telemetry.metrics_port": (0, 65535), "telemetry.interval_s": (0.1, 86400),
    "telemetry.exit_timeout_s": (0.1, 10),
}
ESCALATE = ("auto", "ask", "off")
GIT_COMMIT = ("off", "ask", "auto")
GIT_MESSAGE = ("model", "template")


class Table:
    """A settings table: its annotated class attributes are the fields, with their defaults
    (plain classes, not dataclasses: a one-shot `run` loads its settings before anything else,
    and dataclasses cost tens of milliseconds to import)."""

    def __init__(self, **values: Any) -> None:
        names = self.names()
        for name in names:
            default = getattr(type(self), name)
            setattr(self, name, list(default) if isinstance(default, list) else default)
        for name, value in values.items():
            if name not in names:
                raise TypeError(f"{type(self).__name__} has no field {name!r}")
            setattr(self, name, value)

    @classmethod
    def names(cls) -> list[str]:
        """The field names, in the order they are declared."""
        return list(cls.__annotations__)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and vars(self) == vars(other)

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.names())
        return f"{type(self).__name__}({inner})"


class ModelSettings(Table):
    name: str = "gpt-5.3-codex-spark"
    """Model id sent with every request (the least stable value: keep fallbacks)."""
    base_url: str = ""
    """API root, e.g. https://host/api; spark-pair appends /v1/... itself."""
    api_key_env: str = "SPARK_PAIR_API_KEY"
    """Name of the environment variable that holds the key (keys never live in files)."""
    api_key: str = ""
    """Only as "${ENV_NAME}": an alternative way to name the key's variable."""
    fallbacks: list[str] = []  # each instance gets its own copy (Table.__init__)
    """Models to move to, in order, when the model is not found (retired, typo)."""
    stronger: str = ""
    """A stronger model to escalate complex turns to."""


class RequestSettings(Table):
    timeout_ms: int = 60000
    """Read timeout: no data for this long ends the attempt."""
    max_tokens: int = 4096
    """Output cap; small patches need hundreds, and a large cap can slow the first token."""
    temperature: float = 0.2
    """Sampling temperature."""
    max_retries: int = 4
    """Retries of a failed request (429, 5xx, timeouts, drops), each after a growing wait;
    0 fails at the first error."""


class SessionSettings(Table):
    transport: str = "auto"
    """auto | ws | responses | chat (auto tries WS, then Responses SSE, then Chat)."""
    reconnect_attempts: int = 3
    """WebSocket reconnects before falling back to HTTP for the rest of the session."""
    persistent_ws: bool = True
    """Keep one WebSocket open across turns and chain them with previous_response_id."""
    history_turns: int = 6
    """Turns of conversation kept and resent."""
    history_tokens: int = 8000
    """Tokens of earlier turns resent with a request, at most (the newest turns that fit;
    failed attempts and the text of rejected replies are left out, their reasons kept)."""
    ai_comments: bool = True
    """In the app, saving an `AI!` comment in a file starts a turn about it."""
    prewarm_ms: int = 300
    """In the app, a draft still this long is sent ahead with `generate: false` (WebSocket
    mode), so enter finds the server ready; 0 turns it off."""


class ContextSettings(Table):
    auto: bool = True
    """Choose the files an instruction needs by itself: files it names, files defining the
    identifiers it names, files edited on disk, files of earlier turns, files using those
    identifiers (or a package or flag it names), files whose paths hold its words, the
    changelog, and the tests and history companions of the best of them; plus a repository
    map. Files a person adds are always sent."""
    budget_tokens: int = 7500
    """File context and map per request, in tokens, at most (chosen from bench_context's recall
    against tokens: more adds little recall for its cost in money and first-token time)."""
    map_tokens: int = 1024
    """The part of the budget for the repository map (0: no map)."""
    max_files: int = 12
    """Files chosen by itself per request, at most."""
    second_look: bool = True
    """The model may answer `NEED: path` or `NEED: name` (up to 3 lines, once per turn) when
    the context lacks what the edit needs: those files or definitions go in one follow-up
    request (a quarter of budget_tokens at most), whose reply is the turn's. Needs `auto`."""
    never: list[str] = []
    """Glob patterns of files never sent unless a person adds them (beside the built-in ones:
    .env*, *.pem, *.key, id_*, credentials*, ...)."""


class ReviewSettings(Table):
    check: str = ""
    """Command that tries an accepted turn before it is kept, e.g. "pytest -q" (run by the
    shell in the repository root; empty: no check)."""
    check_timeout_s: float = 300.0
    """A check still running after this many seconds is stopped (and counts as failed)."""
    fix_rounds: int = 2
    """When the check fails after a turn is tried or kept, its output goes back to the model
    for up to this many fix rounds, each reviewed as any turn (0: off)."""
    repair: bool = True
    """Hunks whose lines match nowhere in their file go back to the same model once, with the
    file's real lines around the likeliest place, for a corrected diff of those hunks."""
    escalate: str = "ask"
    """After the fix rounds fail, or two rejections with a reason in one task, the next round
    goes to [model] stronger: auto (said on screen) | ask (you are asked) | off."""
    pager: str = ""
    """Program that shows a turn's diff (delta, less -R, ...); empty: $PAGER, then less -R."""


class GitSettings(Table):
    commit: str = "off"
    """Commit each accepted turn: off (only /commit in the app, run --commit) | ask (the app
    shows the message to edit, then commits) | auto (the app commits at once)."""
    trailer: str = ""
    """A line added to every commit message spark-pair makes, e.g. "Assisted-by: spark-pair"
    (empty: none)."""
    message: str = "model"
    """Where a commit's message comes from: model (a short second request with the diff; the
    template when it cannot be reached) | template (no second request)."""


class TelemetrySettings(Table):
    enabled: bool = False
    """Export metrics (OpenTelemetry, Prometheus); off by default. Needs the optional extra:
    pip install 'spark-pair[otel]'. Prompts, file contents and the key are never exported."""
    otlp_endpoint: str = ""
    """OTLP receiver, e.g. http://127.0.0.1:4318 (spark-pair adds /v1/metrics); empty:
    $OTEL_EXPORTER_OTLP_ENDPOINT, else no OTLP when pushgateway or metrics_port is set, else
    http://localhost:4318."""
    otlp_protocol: str = ""
    """http/protobuf or grpc (grpc needs opentelemetry-exporter-otlp-proto-grpc); empty:
    $OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf."""
    interval_s: float = 10.0
    """Seconds between OTLP exports of a long-lived process ($OTEL_METRIC_EXPORT_INTERVAL,
    in ms, wins); a run and bench export once when they end."""
    metrics_port: int = 0
    """The app and watch serve Prometheus /metrics on 127.0.0.1:PORT (0: not served)."""
    pushgateway: str = ""
    """Prometheus Pushgateway URL, e.g. http://127.0.0.1:9091: run and bench push their
    figures there when they end (job spark-pair, grouped by command and instance)."""
    instance: str = ""
    """The `instance` label of pushed figures; empty: this machine's host name."""
    exit_timeout_s: float = 1.0
    """How long the export at a run's end may take; then it is dropped with one note."""


SECTIONS: dict[str, type[Table]] = {"model": ModelSettings, "request": RequestSettings,
                             "session": SessionSettings, "context": ContextSettings,
                             "review": ReviewSettings, "telemetry": TelemetrySettings,
                             "git": GitSettings}
# fields that moved: old "section.field" -> new
MOVED = {"session.context_tokens": "context.budget_tokens"}


class Settings:
    """The effective settings: one table per section, plus what the files and environment
    said about them."""

    def __init__(self, *, model: ModelSettings | None = None,
                 request: RequestSettings | None = None, session: SessionSettings | None = None,
                 review: ReviewSettings | None = None, env: Mapping[str, str] | None = None,
                 context: ContextSettings | None = None,
                 telemetry: TelemetrySettings | None = None, git: GitSettings | None = None
                 ) -> None:
        self.model = model or ModelSettings()
        self.request = request or RequestSettings()
        self.session = session or SessionSettings()
        self.context = context or ContextSettings()
        self.review = review or ReviewSettings()
        self.telemetry = telemetry or TelemetrySettings()
        self.git = git or GitSettings()
        self.prices: dict[str, tuple[float, float]] = {}
        """USD per million (input, output) tokens, by model id."""
        self.keys: dict[str, str] = {}
        """The app's key map: binding id (e.g. "review.accept") -> key(s) (e.g. "enter")."""
        self.sources: dict[str, str] = {}
        """"section.field" -> where the effective value came from."""
        self.warnings: list[str] = []
        self.files: list[Path] = []
        """The config files found and read, lowest precedence first."""
        self.env: Mapping[str, str] = os.environ if env is None else env

    def __repr__(self) -> str:
        return (f"Settings(model={self.model!r}, request={self.request!r}, "
                f"session={self.session!r}, context={self.context!r}, "
                f"review={self.review!r}, telemetry={self.telemetry!r}, git={self.git!r})")

    @property
    def key_env(self) -> str:
        """The environment variable the key is read from."""
        match = _INTERP.fullmatch(self.model.api_key.strip())
        return match.group(1) if match else self.model.api_key_env

    @property
    def api_key(self) -> str | None:
        key, _ = diagnose_key(self.env.get(self.key_env), self.key_env)
        add_secret(key)  # scrubbed from every message from now on, whatever its shape
        return key

    def value(self, dotted: str) -> Any:
        section, name = dotted.split(".", 1)
        return getattr(getattr(self, section), name)

    def client_values(self, task: str = "edit") -> dict[str, Any]:
        """The model client's options as keyword arguments (protocol.client.ClientOptions.of
        makes them)."""
        base_url, _ = normalize_base_url(self.model.base_url)
        timeout_s = self.request.timeout_ms / 1000
        return dict(
            base_url=base_url, api_key=self.api_key, model=self.model.name,
            fallbacks=list(self.model.fallbacks), transport=self.session.transport,
            timeout_s=timeout_s, max_tokens=self.request.max_tokens,
            temperature=self.request.temperature,
            reconnect_attempts=self.session.reconnect_attempts,
            retry_deadline_s=max(timeout_s, 30.0), max_retries=self.request.max_retries,
            persistent_ws=self.session.persistent_ws, task=task,
            key_source=f"${self.key_env}" + ("" if self.api_key else " (not set)"))


def load_settings(cwd: Path | None = None, env: Mapping[str, str] | None = None,
                  overrides: Mapping[str, str] | None = None) -> Settings:
    """The effective settings for a command run in `cwd`."""
    env = os.environ if env is None else env
    settings = Settings(env=env)
    for section, cls in SECTIONS.items():
        for name in cls.names():
            settings.sources[f"{section}.{name}"] = "default"
    user = dirs.user_config_file()
    project = find_project_file(cwd or Path.cwd())
    for path, label in ((user, "user file"), (project, "project file")):
        if path is not None and path.is_file():
            _apply_file(settings, path, label, env)
            settings.files.append(path)
    for var, dotted in ENV_OVERRIDES.items():
        if env.get(var, "").strip():  # a base URL is stripped with a warning when checked
            value = env[var] if dotted == "model.base_url" else env[var].strip()
            _set(settings, dotted, value, f"env {var}", None)
    for dotted, value in (overrides or {}).items():
        if value is not None and value != "":
            flag = FLAGS.get(dotted, "--" + dotted.split(".")[1].replace("_", "-"))
            _set(settings, dotted, value, f"flag {flag}", None)
    _check(settings)
    return settings


def find_project_file(start: Path) -> Path | None:
    """.spark-pair.toml in `start` or the nearest parent, not above the git root."""
    here = start.resolve()
    for folder in (here, *here.parents):
        candidate = folder / PROJECT_FILE
        if candidate.is_file():
            return candidate
        if (folder / ".git").exists():
            return None
    return None


def _apply_file(settings: Settings, path: Path, label: str, env: Mapping[str, str]) -> None:
    import tomllib  # only when a file is there (it costs ~10 ms to import)

    try:
        text = path.read_text(encoding="utf-8-sig")  # a BOM some editors add is fine
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"cannot load {path}: {exc}",
                          hint="fix the TOML syntax at that line (strings need quotes, "
                               "sections look like [model])") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc
    lines = _line_index(text)
    for section, table in data.items():
        where = f"{path}:{lines.get((section, None), 1)}"
        if section == "prices":
            _apply_prices(settings, table, path, lines)
            continue
        if section == "keys":
            _apply_keys(settings, table, path, lines)
            continue
        if section not in SECTIONS:
            known = [*SECTIONS, "prices", "keys"]
            raise ConfigError(
                f"{where}: unknown section [{section}]{_did_you_mean(section, known)}",
                hint=f"sections are {', '.join(f'[{s}]' for s in known)}")
        if not isinstance(table, dict):
            raise ConfigError(f"{where}: {section} must be a table like [{section}]")
        names = SECTIONS[section].names()
        for name, value in table.items():
            line = lines.get((section, name), lines.get((section, None), 1))
            moved = MOVED.get(f"{section}.{name}")
            if moved is not None:
                settings.warnings.append(f"{path}:{line}: {section}.{name} is now {moved} "
                                         f"([{moved.split('.')[0]}] {moved.split('.')[1]})")
                section_now, name_now = moved.split(".")
                value = _interpolate(value, env, f"{path}:{line}", section_now, name_now)
                _set(settings, moved, value, f"{label} {path}:{line}", f"{path}:{line}")
                continue
            if name not in names:
                raise ConfigError(
                    f"{path}:{line}: unknown field {name!r} in [{section}]"
                    f"{_did_you_mean(name, names)}",
                    hint=f"[{section}] takes: {', '.join(names)} (remove or rename the field)")
            value = _interpolate(value, env, f"{path}:{line}", section, name)
            _set(settings, f"{section}.{name}", value, f"{label} {path}:{line}", f"{path}:{line}")
            if section == "model" and name == "api_key":
                _check_literal_key(settings, path, line, value)


def _apply_prices(settings: Settings, table: Any, path: Path, lines: dict) -> None:
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [prices] must hold tables like [prices.\"model-id\"]")
    for model, entry in table.items():
        line = lines.get((f"prices.{model}", None), lines.get(("prices", None), 1))
        known = ("input_per_m", "output_per_m")
        unknown = [k for k in entry if k not in known] if isinstance(entry, dict) else []
        if unknown:
            raise ConfigError(f"{path}:{line}: unknown field {unknown[0]!r} in [prices.\"{model}\"]"
                              f"{_did_you_mean(unknown[0], list(known))}",
                              hint="a price table takes only input_per_m and output_per_m "
                                   "(USD per million tokens)")
        try:
            price = (float(entry["input_per_m"]), float(entry["output_per_m"]))
        except (TypeError, KeyError, ValueError) as exc:
            raise ConfigError(f"{path}:{line}: [prices.\"{model}\"] needs numbers input_per_m "
                              "and output_per_m (USD per million tokens)") from exc
        if any(p < 0 or p != p or p == float("inf") for p in price):
            raise ConfigError(f"{path}:{line}: [prices.\"{model}\"] has a negative or "
                              "non-finite price",
                              hint="prices are USD per million tokens, 0 or more")
        settings.prices[model] = price
        settings.sources[f"prices.{model}"] = f"{path}:{line}"


def _apply_keys(settings: Settings, table: Any, path: Path, lines: dict) -> None:
    """[keys] "binding.id" = "key[,key]": the app checks the ids when it starts."""
    where = f"{path}:{lines.get(('keys', None), 1)}"
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: [keys] must be a table of \"binding.id\" = \"key\"")
    for binding, value in _flatten(table):
        line = lines.get(("keys", binding.split(".")[0]), lines.get(("keys", None), 1))
        if not isinstance(value, str) or not value.strip():
            raise ConfigError(f"{path}:{line}: [keys] {binding} must be a key name in quotes, "
                              "like \"enter\" or \"ctrl+y\"",
                              hint="several keys: \"a,enter\"; the app's help (f1) lists the ids")
        settings.keys[binding] = value.strip()
        settings.sources[f"keys.{binding}"] = f"{path}:{line}"


def _flatten(table: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    """TOML reads `review.accept = "x"` as a nested table: back to dotted names."""
    out: list[tuple[str, Any]] = []
    for name, value in table.items():
        if isinstance(value, dict):
            out += _flatten(value, f"{prefix}{name}.")
        else:
            out.append((f"{prefix}{name}", value))
    return out


def _set(settings: Settings, dotted: str, value: Any, source: str, where: str | None) -> None:
    section, name = dotted.split(".", 1)
    target = getattr(settings, section)
    default = getattr(target, name)
    place = where or source
    if isinstance(default, bool):
        value = _to_bool(value, place, dotted)
    elif isinstance(default, int):
        value = _to_number(int, value, place, dotted)
    elif isinstance(default, float):
        value = _to_number(float, value, place, dotted)
    elif isinstance(default, list):
        if isinstance(value, str):
            value = [v.strip() for v in value.split(",") if v.strip()]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{place}: {dotted} must be a list of strings, like [\"a\", \"b\"]",
                              hint=_FIX_HINT)
    elif not isinstance(value, str):
        raise ConfigError(f"{place}: {dotted} must be a string (in quotes)", hint=_FIX_HINT)
    if dotted in RANGES:
        _check_range(value, place, dotted)
    if dotted == "model.api_key_env" and not _ENV_NAME.fullmatch(value.strip()):
        _ignore_key_in_place(settings, place, where, "api_key_env is not an environment "
                                                    "variable name (is it the key itself?)")
        return
    setattr(target, name, value.strip() if dotted == "model.api_key_env" else value)
    settings.sources[dotted] = source


def _check_range(value: Any, place: str, dotted: str) -> None:
    low, high = RANGES[dotted]
    if not (math.isfinite(value) and low <= value <= high):
        span = f"from {low:g} to {high:g}" if high != math.inf else f"at least {low:g}"
        raise ConfigError(f"{place}: {dotted} is {value!r}; it must be {span}", hint=_FIX_HINT)


def _to_bool(value: Any, place: str, dotted: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in (
        "1",
        "true",
        "yes",
        "on",
        "0",
        "false",
        "no",
        "off",
    ):
        return value.lower() in ("1", "true", "yes", "on")
    raise ConfigError(f"{place}: {dotted} must be true or false, not {value!r}", hint=_FIX_HINT)


def _to_number(kind: type, value: Any, place: str, dotted: str) -> Any:
    if isinstance(value, bool) or (kind is int and isinstance(value, float)):
        raise ConfigError(f"{place}: {dotted} must be a whole number, not {value!r}",
                          hint=_FIX_HINT)
    try:
        return kind(value)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{place}: {dotted} must be a number, not {value!r}",
                          hint=_FIX_HINT) from exc


def _interpolate(value: Any, env: Mapping[str, str], place: str, section: str, name: str) -> Any:
    if isinstance(value, list):
        return [_interpolate(v, env, place, section, name) for v in value]
    if not isinstance(value, str) or (section == "model" and name == "api_key"):
        return value

    def sub(match: re.Match[str]) -> str:
        var = match.group(1)
        if var not in env:
            raise ConfigError(f"{place}: {section}.{name} uses ${{{var}}} but {var} is not set",
                              hint=f"export {var} in this shell, or change the value")
        return env[var]

    return _INTERP.sub(sub, value)


def _check_literal_key(settings: Settings, path: Path, line: int, value: str) -> None:
    if _INTERP.fullmatch(value.strip()):
        return
    add_secret(value)  # never shown, and scrubbed from what the model reads (the file may go)
    settings.model.api_key = ""
    _ignore_key_in_place(settings, f"{path}:{line}", f"{path}:{line}",
                         "api_key holds a literal key")


def _ignore_key_in_place(settings: Settings, place: str, where: str | None, what: str) -> None:
    """A key where only a variable's name belongs: ignored, never echoed, and warned about."""
    path = Path(where.rsplit(":", 1)[0]) if where else None
    tracked = " in a file git tracks (it is, or will be, committed!)" if (
        path is not None and _git_tracks(path)) else ""
    settings.warnings.append(
        f"{place}: {what}{tracked}; it is ignored and not shown. Keys live in environment "
        "variables: api_key_env = \"NAME\" (or api_key = \"${NAME}\"); rotate a leaked key")


def _git_tracks(path: Path) -> bool:
    from .git import git_ok

    return git_ok(path.parent, "ls-files", "--error-unmatch", path.name, timeout=5) is not None


def _one_of(settings: Settings, section: str, name: str, choices: tuple[str, ...]) -> str:
    """A field that takes one of `choices` (any case, spaces around): the choice, or a
    ConfigError naming where it was set."""
    given = getattr(getattr(settings, section), name)
    value = given.strip().lower()
    if value not in choices:
        raise ConfigError(f"{settings.sources[f'{section}.{name}']}: {section}.{name} is "
                          f"{given!r}{_did_you_mean(value, choices)}",
                          hint=f"use one of: {', '.join(choices)}")
    return value


def _check(settings: Settings) -> None:
    transport = settings.session.transport.strip().lower()
    if transport not in TRANSPORT_CHOICES:
        raise ConfigError(f"{settings.sources['session.transport']}: session.transport is "
                          f"{settings.session.transport!r}"
                          f"{_did_you_mean(transport, TRANSPORT_CHOICES)}",
                          hint=f"use one of: {', '.join(TRANSPORT_CHOICES)}")
    settings.session.transport = transport
    escalate = settings.review.escalate.strip().lower()
    if escalate not in ESCALATE:
        raise ConfigError(f"{settings.sources['review.escalate']}: review.escalate is "
                          f"{settings.review.escalate!r}{_did_you_mean(escalate, ESCALATE)}",
                          hint=f"use one of: {', '.join(ESCALATE)}")
    settings.review.escalate = escalate
    settings.git.commit = _one_of(settings, "git", "commit", GIT_COMMIT)
    settings.git.message = _one_of(settings, "git", "message", GIT_MESSAGE)
    protocol = settings.telemetry.otlp_protocol.strip().lower()
    if protocol not in OTLP_PROTOCOLS:
        raise ConfigError(f"{settings.sources['telemetry.otlp_protocol']}: "
                          f"telemetry.otlp_protocol is {settings.telemetry.otlp_protocol!r}",
                          hint="use http/protobuf or grpc (or leave it empty)")
    settings.telemetry.otlp_protocol = protocol
    if not settings.model.name.strip():
        source = settings.sources.get("model.name", "default")
        raise ConfigError("no model is configured" if source == "default"
                          else f"{source}: model.name is empty",
                          hint="set [model] name or SPARK_PAIR_MODEL")
    if settings.model.base_url.strip():
        settings.model.base_url, notes = normalize_base_url(settings.model.base_url)
        settings.warnings.extend(notes)
    _, notes = diagnose_key(settings.env.get(settings.key_env), settings.key_env)
    settings.warnings.extend(notes)


def _line_index(text: str) -> dict[tuple[str, str | None], int]:
    """(section, field) -> line number, read from the raw TOML text (1-based)."""
    out: dict[tuple[str, str | None], int] = {}
    section = ""
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        header = re.match(r"^\[\s*([^\]]+?)\s*\]", stripped)
        if header:
            section = header.group(1).replace('"', "").replace("'", "")
            out.setdefault((section, None), number)
            continue
        key = re.match(r"^([A-Za-z0-9_\-]+)\s*=", stripped)
        if key:
            out.setdefault((section, key.group(1)), number)
    return out


def _did_you_mean(word: str, choices: Any) -> str:
    import difflib

    close = difflib.get_close_matches(word, list(choices), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""
