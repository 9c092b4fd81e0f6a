"""The one place the app relies on Textual's private state, where Textual has no public way.
tests/ui/test_textual_private.py fails when a Textual upgrade changes what is used here.

- `_anchor_released`: Textual offers `anchor()`, `release_anchor()` and `is_anchored`, but no
  way to ask whether the anchor is released (the person scrolled away from the tail, and has
  not scrolled back to it). Textual's compositor follows the tail when a widget is anchored
  and not released; the live diff reads the same flag, so it follows exactly when Textual does.
- `ChordParser`: Textual's xterm parser, reading `ESC a ESC b` (two alt chords in one terminal
  read), drops the first chord's alt and reports `^` then `a`. Before an ESC that follows an
  `ESC` + one key, this parser ends the pending sequence as its escape delay would (the tick,
  through `_timeout_time`), so the first chord arrives as alt+a. `install_chord_parser` puts
  it into Textual's Linux driver (a module global it reads when its input thread starts).
  It also takes the ESC bytes out of a bracketed paste (text copied with colours in it): at an
  ESC inside a paste Textual's parser reads on as a key sequence and sends the rest of the
  paste as keys (its newlines as enter, which sent a turn). Many terminals drop them too.
- `withdraw`: Textual's notify() gives no handle to take a toast back before its timeout; the
  app's `_unnotify` does (a hint that has become untrue goes at once).
- `run_binding`: Textual runs a key's (not priority) binding once the key has gone back up
  from the focused widget to the app, a message queue at each step: after the keys typed
  behind it, on whatever has the focus by then (ctrl+u pressed on the live diff, then
  letters that move the focus to the prompt, cleared those letters). The app's
  `_check_bindings` runs the binding for the focus as it is now.
"""

from __future__ import annotations

from collections.abc import Iterable

from textual import events
from textual._xterm_parser import XTermParser
from textual.app import App
from textual.message import Message
from textual.notifications import Notification
from textual.widget import Widget

ESC = "\x1b"
OPENERS = "[O"  # ESC [ and ESC O begin longer sequences, never an alt chord
PASTE_START, PASTE_END = "\x1b[200~", "\x1b[201~"  # what a terminal wraps a paste in


async def run_binding(app: App[object], key: str) -> bool:
    """Run the binding `key` has now, a priority one first (False: it has none)."""
    return await app._check_bindings(key, priority=True) or await app._check_bindings(key)


def withdraw(app: App[object], notification: Notification) -> None:
    """Take a toast off the screen before its timeout (a no-op once it is gone)."""
    app._unnotify(notification)


def anchor_released(widget: Widget) -> bool:
    """The widget's anchor is released: it is anchored but the person scrolled away."""
    return widget._anchor_released


class ChordParser(XTermParser):
    """Textual's parser, with an alt chord followed at once by another ESC kept as a chord."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._last2 = ""  # the last two characters fed
        self._pasting = False  # inside a bracketed paste
        self._seen = ""  # outside one: the last characters passed on (a start split in two)
        self._held = ""  # inside one: a part of its end marker, until the next read

    def feed(self, data: str) -> Iterable[Message]:
        if not data:  # the end of input
            yield from super().feed(self._held + data)
            return
        data = self._paste_without_escapes(data)
        start = 0
        for i, ch in enumerate(data):
            if ch != ESC or (self._last2 + data[:i])[-2:-1] != ESC:
                continue
            if i > start:
                yield from super().feed(data[start:i])  # ("" would be the end of input)
                start = i
            last = (self._last2 + data[:i])[-1]
            if last not in OPENERS + ESC and self._timeout_time is not None:
                self._timeout_time = 0.0  # the pending ESC + key ends now, as after the delay
                yield from self.tick()
        self._last2 = (self._last2 + data)[-2:]
        if start < len(data):
            yield from super().feed(data[start:])


    def _paste_without_escapes(self, data: str) -> str:
        """`data` with the ESCs inside a bracketed paste left out (its end marker kept)."""
        text, self._held, out, i = self._held + data, "", [], 0
        while i < len(text):
            if not self._pasting:
                seen = self._seen + text[i:]
                at = seen.find(PASTE_START)
                if at < 0:
                    out.append(text[i:])
                    self._seen = seen[-(len(PASTE_START) - 1):]
                    break
                end = at + len(PASTE_START) - len(self._seen) + i  # (in `text`)
                out.append(text[i:end])
                i, self._pasting, self._seen = end, True, ""
                continue
            at = text.find(PASTE_END, i)
            if at < 0:  # the paste goes on; a part of its end marker waits for the rest
                rest = text[i:]
                keep = next((n for n in range(min(len(rest), len(PASTE_END) - 1), 0, -1)
                             if PASTE_END.startswith(rest[-n:])), 0)
                out.append(rest[:len(rest) - keep].replace(ESC, ""))
                self._held = rest[len(rest) - keep:]
                break
            out.append(text[i:at].replace(ESC, "") + PASTE_END)
            i, self._pasting = at + len(PASTE_END), False
        return "".join(out)


def install_chord_parser() -> None:
    """Textual's Linux driver builds its parser from this module global when input starts."""
    from textual.drivers import linux_driver

    linux_driver.XTermParser = ChordParser  # type: ignore[misc]


def keys_of(tokens: Iterable[Message]) -> list[str]:
    """The keys among parsed tokens (for the tests)."""
    return [t.key for t in tokens if isinstance(t, events.Key)]
