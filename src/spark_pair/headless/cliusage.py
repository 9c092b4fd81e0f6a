"""Bad command-line input on a --json command: the JSON answer goes out on stdout too.

click reports its own usage errors (unknown flag, bad value, missing argument) before the
command runs; `JsonUsageCommand` catches them first and calls `on_usage_error(error)` when
--json was among the arguments, then lets click print the message and exit 2 as usual.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import click

from ..base.errors import UsageError


def wants_json(args: list[str]) -> bool:
    """--json was given as an option (not after `--`)."""
    return "--json" in (args[: args.index("--")] if "--" in args else args)


class JsonUsageCommand(click.Command):
    def __init__(self, *args: Any, on_usage_error: Callable[[UsageError], None],
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.on_usage_error = on_usage_error

    def make_context(self, info_name: str | None, args: list[str],
                     parent: click.Context | None = None, **extra: Any) -> click.Context:
        given = list(args)  # click consumes the list while parsing
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except click.UsageError as exc:
            if wants_json(given):
                name = f"{parent.info_name} {info_name}" if parent is not None else info_name
                self.on_usage_error(UsageError(exc.format_message(),
                                               hint=f"see `{name} --help`"))
            raise


class Seconds(click.ParamType):
    """A finite number of seconds above zero (nan and inf are refused)."""

    name = "seconds"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None
                ) -> float:
        if isinstance(value, float):
            seconds = value
        else:
            try:
                seconds = float(value)
            except (TypeError, ValueError):
                self.fail(f"{value!r} is not a number of seconds", param, ctx)
        if not math.isfinite(seconds) or seconds <= 0:
            self.fail(f"{value!r} is not a finite number of seconds above 0", param, ctx)
        return seconds
