"""Exit codes of every command, the one function that maps an error to its code, and the
decorator every command wears to report an error and exit with its code."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from enum import IntEnum
from typing import Any, TypeVar

from . import errors

F = TypeVar("F", bound=Callable[..., Any])


class ExitCode(IntEnum):
    OK = 0
    FAILURE = 1  # a check failed (doctor) or an unexpected internal error
    USAGE = 2  # bad command-line input
    CONFIG = 3  # the configuration cannot be used
    MODEL = 4  # the model endpoint failed (after retries and fallbacks)
    CONFLICT = 5  # the edits cannot apply (conflict, stale file, refused path, failed write)
    POLICY = 6  # an operation was refused by policy (flags / approval): nothing was written
    TIMEOUT = 7  # --timeout ran out
    UNDO = 8  # undo or redo refused
    CHECK = 9  # run --check: the check still fails after the fix rounds (the tree keeps them)
    COMMIT = 10  # --commit: not committed (the turn stays applied, or nothing was written)
    INTERRUPTED = 130  # Ctrl-C


_BY_CLASS: list[tuple[type[errors.SparkPairError], ExitCode]] = [
    (errors.UsageError, ExitCode.USAGE),
    (errors.ConfigError, ExitCode.CONFIG),
    (errors.ModelError, ExitCode.MODEL),
    (errors.ConflictError, ExitCode.CONFLICT),
    (errors.StaleError, ExitCode.CONFLICT),
    (errors.ParseError, ExitCode.MODEL),
    (errors.EditError, ExitCode.CONFLICT),
    (errors.PolicyRefused, ExitCode.POLICY),
    (errors.UndoError, ExitCode.UNDO),
    (errors.CommitError, ExitCode.COMMIT),
]


def exit_code_for(error: BaseException) -> ExitCode:
    """The documented exit code for an error (the one mapping every front end uses)."""
    if isinstance(error, errors.Cancelled):
        return ExitCode.TIMEOUT if error.details.get("timeout") else ExitCode.INTERRUPTED
    if isinstance(error, KeyboardInterrupt):
        return ExitCode.INTERRUPTED
    if isinstance(error, errors.CommitError) and error.details.get("reason") == "interrupted":
        return ExitCode.INTERRUPTED  # Ctrl-C during a hook (the turn stays applied)
    for cls, code in _BY_CLASS:
        if isinstance(error, cls):
            return code
    return ExitCode.FAILURE


def report_errors(func: F) -> F:
    """Turn a SparkPairError into a clear message with a hint on stderr and its exit code."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except errors.SparkPairError as exc:
            from .termwrap import say

            say(sys.stderr, exc.describe())
            sys.exit(int(exit_code_for(exc)))
        except KeyboardInterrupt:
            sys.stderr.write("spark-pair: interrupted\n")
            sys.exit(int(ExitCode.INTERRUPTED))

    return wrapper  # type: ignore[return-value]
