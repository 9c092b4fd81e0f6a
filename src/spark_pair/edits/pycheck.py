"""Whether a loose placement broke a Python file: compile() of the text (never run), before
and after. A file that did not compile before is not judged."""

from __future__ import annotations

import functools
import warnings

from .placement import is_python

MAX_CHARS = 2_000_000  # a larger file is not compiled (the check must stay quick)


@functools.lru_cache(maxsize=4)  # (one file's text is checked by each look at the turn)
def _error(text: str, path: str) -> tuple[int, str] | None:
    """(line, message) of the first error compile() finds in `text`, else None."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(text, path or "<file>", "exec", dont_inherit=True)
    except SyntaxError as exc:
        return exc.lineno or 1, exc.msg
    except (ValueError, RecursionError, MemoryError, OverflowError) as exc:
        return 1, str(exc) or type(exc).__name__
    return None


def broken(path: str, before: str, after: str) -> tuple[int, str] | None:
    """(line, message) when `path` is Python (by name or `#!` line), `before` compiles and
    `after` does not; else None."""
    first = before.split("\n", 1)[0]
    if not is_python(path, first) or max(len(before), len(after)) > MAX_CHARS:
        return None
    if _error(before, path) is not None:
        return None
    return _error(after, path)
