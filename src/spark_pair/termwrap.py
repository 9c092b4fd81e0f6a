"""Messages for people on stderr: wrapped to the terminal's width when it is one.

Logs and pipes get one line per message (easy to grep); a terminal gets lines that fit, the
continuation indented under the text.
"""

from __future__ import annotations

import shutil
import textwrap
from typing import TextIO

MAX_WIDTH = 100


def say(stream: TextIO, text: str, prefix: str = "spark-pair: ") -> None:
    """Write `prefix + text` (each of its lines) to `stream`, wrapped if it is a terminal."""
    stream.write(fit(prefix + text, stream) + "\n")
    stream.flush()


def fit(text: str, stream: TextIO) -> str:
    isatty = getattr(stream, "isatty", None)
    if not (isatty and isatty()):
        return text
    width = min(shutil.get_terminal_size((80, 24)).columns, MAX_WIDTH)
    out = []
    for line in text.splitlines():
        body = line.lstrip(" ")
        indent = " " * (len(line) - len(body) + 2)
        out.append(textwrap.fill(line, width=width, subsequent_indent=indent,
                                 break_long_words=False, break_on_hyphens=False))
    return "\n".join(out)
