"""`spark-pair sim`: serve the simulated Spark-class endpoint on loopback."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click

from ..base.errors import UsageError
from ..base.exitcodes import report_errors
from .profiles import DEFAULT, PROFILES


@click.command("sim")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=0, show_default=True, type=click.IntRange(0, 65535),
              help="Port (0 picks a free one).")
@click.option("--profile", type=click.Choice(list(PROFILES)), default=DEFAULT,
              show_default=True,
              help="Which server to act as: its endpoints, 404 bodies, usage chunk and pacing. "
                   + "; ".join(f"{p.name}: {p.about}" for p in PROFILES.values()) + ".")
@click.option("--tps", type=click.FloatRange(min=0),
              help="Tokens per second (0 = unthrottled; default: the profile's).")
@click.option("--ttft-ms", type=click.FloatRange(min=0),
              help="Time to first token, in milliseconds (default: the profile's).")
@click.option("--script", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help='Replies JSON: {"replies": [{"match": ..., "text": ...}], "default": ...}; a '
                   'reply may add "check" (text of the check output a fix round carries) '
                   'and "model" (the model asked).')
@click.option("--api-key", help="Accept only this Bearer key (default: accept any).")
@click.option("--models", help="Comma-separated model ids to serve.")
@click.option("--tokens", default=200, show_default=True, type=click.IntRange(min=1),
              help="Length of generated replies when no script reply matches.")
@click.option("--ctx-size", "context", default=0, show_default=True, type=click.IntRange(min=0),
              help="Context window in tokens (0 = none): a reply stops with finish_reason "
                   "length where prompt and reply fill it, whatever max_tokens says.")
@click.option("--prefill-tps", default=20000.0, show_default=True, type=click.FloatRange(min=0),
              help="Input tokens processed per second before the first token (0 = instant); "
                   "input a connection processed before (a chained or pre-warmed request) "
                   "is not processed again.")
@click.option("--no-steer", "no_steer", is_flag=True,
              help="Act as a server without `response.steer` (it answers an error).")
@click.option("--fault", "faults", multiple=True, metavar="SPEC",
              help="Inject a fault, e.g. rate_limit:times=2,retry_after=1 (repeatable).")
@report_errors
def command(host: str, port: int, profile: str, tps: float | None, ttft_ms: float | None,
            script: Path | None, api_key: str | None, models: str | None, tokens: int,
            context: int, prefill_tps: float, no_steer: bool, faults: tuple[str, ...]) -> None:
    """Serve a protocol-faithful OpenAI-compatible endpoint (chat SSE, responses SSE, responses
    WebSocket) with scripted replies, pacing and fault injection. Stop it with Ctrl-C.

    --profile acts as another server (llama.cpp, vLLM, Ollama, a gateway): only the endpoints
    it offers, its own 404 bodies, its usage chunk (or none), its way of reporting a failure
    mid-stream (fault stream_error) and its usual pacing."""
    from .faults import FaultSpecError, parse_fault_spec
    from .replies import SimConfig, load_script

    with _no_ca_load():
        from .server import serve

    chosen = PROFILES[profile]
    config = SimConfig(tps=chosen.tps if tps is None else tps,
                       ttft_ms=chosen.ttft_ms if ttft_ms is None else ttft_ms,
                       tokens=tokens, context=context, api_key=api_key or None,
                       prefill_tps=prefill_tps, steer=not no_steer)
    if models:
        config.update({"models": models})
    if script is not None:
        try:
            config.replies, config.default = load_script(script)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise UsageError(f"cannot read the script {script}: {exc}",
                             hint='expected {"replies": [{"match": "...", "text": "..."}], '
                                  '"default": "..."}') from None
    try:
        parsed = [parse_fault_spec(spec) for spec in faults]
    except FaultSpecError as exc:
        raise UsageError(f"bad --fault: {exc}",
                         hint="e.g. --fault rate_limit:times=2,retry_after=1") from None
    try:
        asyncio.run(serve(config, parsed, host, port, chosen))
    except OSError as exc:
        raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror or exc}",
                         hint="pick another --port, or 0 for a free one") from None


CA_VARS = ("SSL_CERT_FILE", "SSL_CERT_DIR")


@contextmanager
def _no_ca_load() -> Iterator[None]:
    """aiohttp makes two TLS client contexts as it is imported, each loading the system's CA
    certificates (about a fifth of the simulator's start); the simulator never uses its client
    side, so they load none: OpenSSL's CA paths point nowhere while it imports."""
    saved = {name: os.environ.get(name) for name in CA_VARS}
    os.environ.update(dict.fromkeys(CA_VARS, os.path.join(os.devnull, "no-ca")))
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
