"""Options shared by the sub-commands, and a usage error as JSON lines (errors are reported by
base.exitcodes.report_errors)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click

from ...headless.options import flag_overrides as flag_overrides  # its home is headless.options
from ...protocol.events import Transport

F = TypeVar("F", bound=Callable[..., Any])


def model_options(func: F) -> F:
    """--base-url / --model / --transport, on every command that talks to a model."""
    func = click.option("--transport", type=click.Choice(["auto", *(t.value for t in Transport)]),
                        help="Transport (overrides config and SPARK_PAIR_TRANSPORT).")(func)
    func = click.option("--model", help="Model id (overrides config and SPARK_PAIR_MODEL).")(func)
    func = click.option("--base-url", help="API root URL (overrides SPARK_PAIR_BASE_URL).")(func)
    return func


def turn_options(func: F) -> F:
    """The approval and output flags shared by `run` and `watch`."""
    for option in reversed([
        click.option("--apply", "apply_", is_flag=True,
                     help="Write the changes (default: dry run, print the diff, write nothing)."),
        click.option("--allow-delete", is_flag=True, help="Allow deleting files (with --apply)."),
        click.option("--allow-rename", is_flag=True, help="Allow renaming files (with --apply)."),
        click.option("--commit", is_flag=True,
                     help="With --apply: commit exactly the applied turn (its message from the "
                          "model); exit 10 when it is not committed."),
        click.option("--json", "as_json", is_flag=True,
                     help="One JSON object per line on stdout (schema: docs/headless.md)."),
        click.option("--deltas", is_flag=True, help="With --json: also a line per text delta."),
        click.option("--no-auto-context", "no_auto_context", is_flag=True,
                     help="Send only the files given (-f, the AI comment's file): choose none "
                          "by itself and send no repository map."),
    ]):
        func = option(func)
    return func


def usage_json(error: Exception) -> None:
    """A click usage error as JSON lines on stdout (for commands that take --json)."""
    from ...headless.runner import write_usage_error

    write_usage_error(sys.stdout, error)  # type: ignore[arg-type]


def print_plain(console: Any, text: str, style: str = "", more: str = "  ") -> None:
    """Plain text on a rich console (never markup: model ids and server text are not ours),
    wrapped to its width; continuation lines get the text's own indent plus `more`."""
    from rich.text import Text

    from ...base.termwrap import wrap

    body = text.lstrip(" ")
    indent = text[:len(text) - len(body)]
    for line in wrap(body, console.width, indent, indent + more) or [""]:
        console.print(Text(line, style=style), soft_wrap=True)
