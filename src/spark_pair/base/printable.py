"""Text as safe to print on a terminal: what a model or a file holds is shown escaped, never
obeyed (control, text-direction and other invisible characters)."""

from __future__ import annotations


def shown(path: str) -> str:
    """The path as safe to print: control, format (bidi) and other invisible characters are
    escaped, so a name can neither drive the terminal nor pass for another file's name."""
    return path if path.isprintable() else repr(path)[1:-1]


def shown_text(text: str) -> str:
    """A line of file content as safe to print (a dry-run diff, a conflict excerpt, a screen):
    control characters (ESC, CR, backspace, ...), text-direction and other invisible format
    characters and lone surrogates are shown escaped (\\x1b, \\u202e); tabs stay. Display
    only: what is written is always the model's exact text."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() or ch == "\t" else repr(ch)[1:-1] for ch in text)
