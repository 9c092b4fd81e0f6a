"""Messages for people on stderr: wrapped to the terminal's width when it is one.

Logs and pipes get one line per message (easy to grep); a terminal gets lines that fit, the
continuation indented under the text.
"""

from __future__ import annotations

import re
import textwrap
from typing import TextIO

from .printable import shown_text

MAX_WIDTH = 100


def say(stream: TextIO, text: str, prefix: str = "spark-pair: ") -> None:
    """Write `prefix + text` (each of its lines) to `stream`, wrapped if it is a terminal.
    Control characters in the text (a model's file content in a conflict excerpt) are shown
    escaped, so they can never drive the terminal."""
    text = "\n".join(shown_text(line) for line in text.split("\n"))
    stream.write(fit(prefix + text, stream) + "\n")
    stream.flush()


def fit(text: str, stream: TextIO) -> str:
    isatty = getattr(stream, "isatty", None)
    if not (isatty and isatty()):
        return text
    import shutil

    width = min(shutil.get_terminal_size((80, 24)).columns, MAX_WIDTH)
    out = []
    for line in text.splitlines():
        body = line.lstrip(" ")
        lead = line[:len(line) - len(body)]
        out += wrap(body, width, lead, lead + "  ", break_long_words=False) or [line]
    return "\n".join(out)


def wrap(text: str, width: int, indent: str = "", more: str = "  ", *,
         break_long_words: bool = True) -> list[str]:
    """`text` in lines of at most `width` columns, `indent` before the first, `more` before
    the others; a number stays on the line of its unit ("165 ms")."""
    glued = re.sub(r"(\d) (?=[A-Za-z/%]+)", "\\1\xa0", text.strip())  # textwrap keeps \xa0
    lines = textwrap.wrap(glued, width, initial_indent=indent, subsequent_indent=more,
                          break_long_words=break_long_words, break_on_hyphens=False)
    return [line.replace("\xa0", " ") for line in lines]
