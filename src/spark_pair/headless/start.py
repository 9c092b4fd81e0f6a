"""How a headless run starts: its options, its -f paths, and its request, sent first.

A one-shot `spark-pair run` pays its start-up on every call, so it sends its request before it
loads anything the reply needs: `send_first()` finds the repository, loads the settings,
builds the request and sends it over a plain socket (protocol.sendfirst), with light imports
only (no click, asyncio, httpx, websockets or dataclasses). The runtime then adopts the
settings, the workspace and the socket, and the reply is read there while the parser, the
apply step and the request log load. Whenever that path does not apply (a question, a
pre-warm, TLS, a proxy, a repository git has to find, any error), nothing is sent and the
run goes the normal way, failing the same way it always has.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from ..errors import SparkPairError, UsageError

TYPE_CHECKING = False  # not typing's: `run` loads this module before its request goes out
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from ..config import Settings
    from ..protocol.sendfirst import Sent
    from ..workspace.context import Workspace


MAX_FOLDER_FILES = 200
TRANSPORT_CHOICES = ("auto", "ws", "responses", "chat")


class RunOptions:
    """What a headless run was asked to do (flags and the prompt)."""

    __slots__ = ("prompt", "files", "apply", "allow_delete", "allow_rename", "json", "deltas",
                 "timeout", "overrides", "cwd", "meter", "env", "prewarm", "ask", "leave",
                 "started", "auto_context")

    def __init__(self, prompt: str, files: list[str] | None = None, apply: bool = False,
                 allow_delete: bool = False, allow_rename: bool = False, json: bool = False,
                 deltas: bool = False, timeout: float | None = None,
                 overrides: dict[str, str] | None = None, cwd: Path | None = None,
                 meter: bool = True, env: dict[str, str] | None = None, prewarm: bool = False,
                 ask: bool = False, leave: Callable[[int], None] | None = None,
                 started: float | None = None, auto_context: bool = True) -> None:
        self.prompt = prompt
        self.files = [] if files is None else files
        self.apply = apply
        self.allow_delete = allow_delete
        self.allow_rename = allow_rename
        self.json = json
        self.deltas = deltas
        self.timeout = timeout
        self.overrides = {} if overrides is None else overrides
        self.cwd = cwd
        self.meter = meter  # the one-line meter on stderr (text mode)
        self.env = env
        self.prewarm = prewarm  # open the WebSocket while the run starts up
        self.ask = ask  # a question (AI? comment): the prose reply is the answer
        # called with the exit code once the result is out, the files and the journal are
        # written and the request record is stored; it does not return (the command's quick
        # exit: no graceful close of the connection, the watcher or the request log)
        self.leave = leave
        # when the run began (time.monotonic; the process's start for the command): --timeout
        # and the JSON lines' times count from here, the request sent first included
        self.started = started
        # choose files by itself besides `files` (when [context] auto is on too)
        self.auto_context = auto_context

    def replace(self, **changes: Any) -> RunOptions:
        """A copy with `changes` applied."""
        values = {name: getattr(self, name) for name in self.__slots__}
        values.update(changes)
        return RunOptions(**values)

    def __eq__(self, other: object) -> bool:
        if type(other) is not RunOptions:
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in self.__slots__)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        inner = ", ".join(f"{n}={getattr(self, n)!r}" for n in self.__slots__)
        return f"RunOptions({inner})"


def flag_overrides(base_url: str | None, model: str | None, transport: str | None
                   ) -> dict[str, str]:
    """The flags given on the command line, as config overrides ("section.field" -> value)."""
    out = {"model.base_url": base_url, "model.name": model, "session.transport": transport}
    return {k: v for k, v in out.items() if v}


def seconds(text: str) -> float | None:
    """A --timeout value: a finite number of seconds above zero, else None."""
    try:
        value = float(text)
    except ValueError:
        return None
    return value if value > 0 and value != float("inf") else None


_FLAGS = {"--apply": "apply", "--allow-delete": "allow_delete", "--allow-rename": "allow_rename",
          "--json": "json", "--deltas": "deltas", "--no-meter": "no_meter"}
_VALUED = {"-f": "file", "--file": "file", "--timeout": "timeout", "--base-url": "base_url",
           "--model": "model", "--transport": "transport"}


def parse_run_args(args: list[str]) -> RunOptions | None:
    """`run`'s arguments as RunOptions, for plain valid command lines only: anything else
    (help, a bad or unknown option, stdin as the prompt, a flag that needs a note) is None,
    and the full command-line parser handles it as it always has."""
    prompts: list[str] = []
    files: list[str] = []
    flags: dict[str, bool] = {}
    values: dict[str, str] = {}
    rest = list(args)
    while rest:
        arg = rest.pop(0)
        if arg == "--":
            prompts += rest
            break
        if not arg.startswith("-") or arg == "-":
            prompts.append(arg)
            continue
        name, eq, value = arg.partition("=") if arg.startswith("--") else (arg[:2], "", arg[2:])
        if name in _FLAGS and not eq and not value:
            flags[_FLAGS[name]] = True
            continue
        if name not in _VALUED or (eq and not name.startswith("--")):
            return None
        if not eq and not value:
            if not rest:
                return None
            value = rest.pop(0)
        if _VALUED[name] == "file":
            files.append(value)
        else:
            values[_VALUED[name]] = value
    if len(prompts) != 1 or prompts[0] == "-":
        return None
    timeout = None
    if "timeout" in values:
        timeout = seconds(values["timeout"])
        if timeout is None:
            return None
    if values.get("transport", "auto") not in TRANSPORT_CHOICES:
        return None
    if flags.get("deltas") and not flags.get("json"):
        return None
    if (flags.get("allow_delete") or flags.get("allow_rename")) and not flags.get("apply"):
        return None
    return RunOptions(prompt=prompts[0], files=files, apply=flags.get("apply", False),
                      allow_delete=flags.get("allow_delete", False),
                      allow_rename=flags.get("allow_rename", False),
                      json=flags.get("json", False), deltas=flags.get("deltas", False),
                      timeout=timeout, meter=not flags.get("no_meter", False),
                      overrides=flag_overrides(values.get("base_url"), values.get("model"),
                                               values.get("transport")), leave=leave)


def repo_paths(root: Path, cwd: Path, files: list[str]) -> list[str]:
    """-f paths (relative to cwd, or absolute) as repo paths, a folder as the files under it;
    anything outside the repository is refused."""
    real_root = root.resolve()
    out = []
    for name in files:
        full = Path(os.path.abspath(cwd / name))
        full = full.resolve() if full.exists() else full
        try:
            rel = full.relative_to(real_root).as_posix()
        except ValueError:
            raise UsageError(f"-f {name}: outside the repository {root}",
                             hint="only files inside the repository go into the context") from None
        if rel == ".git" or rel.startswith(".git/"):
            raise UsageError(f"-f {name}: not a file of the repository",
                             hint="name files inside the repository, not .git")
        if full.is_dir():
            out.extend(_files_under(root, rel, name))
        else:
            out.append(rel)
    return list(dict.fromkeys(out))


def _files_under(root: Path, rel: str, name: str) -> list[str]:
    """The listed (not ignored) files under a folder given to -f."""
    from ..workspace.files import list_files

    prefix = "" if rel in ("", ".") else rel + "/"
    found = [f for f in list_files(root) if f.startswith(prefix)]
    if not found:
        raise UsageError(f"-f {name}: the folder holds no files spark-pair may read",
                         hint="ignored files (.gitignore) are left out; name files instead")
    if len(found) > MAX_FOLDER_FILES:
        raise UsageError(
            f"-f {name}: the folder holds {len(found)} files (limit {MAX_FOLDER_FILES})",
            hint="name a smaller folder or the files themselves",
        )
    return found


class Early:
    """What `send_first` prepared and sent, for the run to adopt."""

    __slots__ = ("root", "files", "settings", "workspace", "sent")

    def __init__(self, root: Path, files: list[str], settings: Settings, workspace: Workspace,
                 sent: Sent) -> None:
        self.root, self.files, self.settings = root, files, settings
        self.workspace, self.sent = workspace, sent


def send_first(opts: RunOptions) -> Early | None:
    """Send the run's request now, before the rest loads; None (nothing sent) when the normal
    path has to do it."""
    if opts.prewarm or opts.ask or not opts.prompt.strip():
        return None
    from ..workspace.files import plain_top

    cwd = opts.cwd or Path.cwd()
    root = plain_top(cwd)
    if root is None:
        return None
    try:
        return _send(opts, root, cwd)
    except SparkPairError:
        return None  # the normal path reports it, the same way as ever
    except Exception:  # noqa: BLE001 - a case this path does not know: nothing went out
        return None  # (a request is sent last), so the normal path does it all


def _send(opts: RunOptions, root: Path, cwd: Path) -> Early | None:
    from ..config import load_settings
    from ..protocol import offers, sendfirst
    from ..protocol.bodies import chat_body, json_bytes, responses_body, sse_body, ws_create
    from ..protocol.request import CONNECT_TIMEOUT_S, Transport, endpoint_url
    from ..workspace.context import Workspace, limits_of

    files = repo_paths(root, cwd, opts.files)
    settings = load_settings(cwd=cwd, env=opts.env, overrides=dict(opts.overrides))
    o = settings.client_values(task="edit")
    if not o["base_url"]:
        return None
    transport = offers.candidates(o["transport"], offers.default_path(),
                                  o["base_url"].rstrip("/"))[0][0]
    if opts.auto_context and settings.context.auto:
        return None  # the files it chooses need the index: the normal path sends it
    workspace = Workspace(root, **limits_of(settings))
    request = workspace.build_ahead(opts.prompt, files)
    max_tokens = request.max_tokens if request.max_tokens is not None else o["max_tokens"]
    temperature = request.temperature if request.temperature is not None else o["temperature"]
    model, key = o["model"], o["api_key"]
    url = endpoint_url(o["base_url"], transport)
    wait_s = CONNECT_TIMEOUT_S
    if opts.timeout is not None:  # what is left of the run's time (one clock for the run)
        began = time.monotonic() if opts.started is None else opts.started
        wait_s = min(wait_s, opts.timeout - (time.monotonic() - began))
        if wait_s <= 0:
            return None
    if transport == Transport.WS:
        body = responses_body(request, model, max_tokens, temperature)
        sent = sendfirst.send_ws(url, model, ws_create(body), key, wait_s)
    else:
        body = (chat_body(request, model, max_tokens, temperature)
                if transport == Transport.CHAT
                else sse_body(responses_body(request, model, max_tokens, temperature)))
        sent = sendfirst.send_http(url, transport, model, json_bytes(body), key, wait_s)
    if sent is None:
        return None
    sent.request = request
    request.sent_at = sent.at
    return Early(root, files, settings, workspace, sent)


def run(opts: RunOptions) -> int:
    """The whole run (its exit code): the request first, then everything else."""
    if opts.started is None:
        opts.started = time.monotonic()
    early = send_first(opts)
    if early is not None:
        _load_asyncio_without_tls()
    from .runner import main

    return main(opts, early=early)


def _load_asyncio_without_tls() -> None:
    """Load asyncio without the ssl module (about a tenth of a run's start-up CPU here, and 6 MB
    to map and unmap). A request sent first went out over plain HTTP (protocol.sendfirst takes
    no TLS endpoint), and the rest of the run talks to that same endpoint; asyncio imports ssl
    only to offer TLS and goes without it when the import fails, as it does by design. ssl
    itself stays importable: only asyncio's own copy of the name is None."""
    import sys

    if "asyncio" in sys.modules or "ssl" in sys.modules:
        return
    sys.modules["ssl"] = None  # type: ignore[assignment]  # `import ssl` raises ImportError
    try:
        import asyncio  # noqa: F401
    finally:
        if "ssl" in sys.modules and sys.modules["ssl"] is None:
            del sys.modules["ssl"]


def leave(code: int) -> None:
    """Exit now: the result is out, the files, the journal and the request record are written,
    so the interpreter's teardown of every module and object (tens of milliseconds, more on a
    busy machine) is skipped, and so are the graceful closes the runner would still do (the
    connection's close handshake, the watcher, the request log's checkpoint: SQLite keeps a
    committed record in its write-ahead log, read by whoever opens it next)."""
    import logging
    import sys

    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # a closed pipe: nothing more can be said
        pass
    logging.shutdown()
    os._exit(code)
