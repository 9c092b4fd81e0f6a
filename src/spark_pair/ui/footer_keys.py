"""Which keys the footer shows, most important first, and how many fit a width.

The order is the order of `SLOTS` (the focused pane's keys come up there, because only the
focused pane's bindings are active); keys that do not fit are left out whole, from the least
important, never cut in the middle. On a short line the labels are shorter and the gaps one
column; shorter still, a run of chords with one modifier shows it once (`alt+ a yes r no`). The
keys for help (f1: ? is text) and for the palette are always shown, at the right.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

from textual.binding import Binding

PIN_GAP = 1  # columns between the pinned keys
CHORD = "alt+"  # the review's modifier: on the shortest line, said once for a run of its keys


@dataclass(frozen=True, slots=True)
class Shown:
    """One key (or a pair, `j/k`) as the footer shows it."""

    key: str  # what a click presses
    display: str  # "a", "j/k", "^p", "⏎"
    label: str
    enabled: bool
    tooltip: str
    short: str = ""  # the label on a short line ("" : the same)
    lead: str = ""  # shown before the key: the modifier of a run of chords ("alt+ ")

    @property
    def width(self) -> int:
        return len(self.lead) + len(self.display) + 1 + len(self.label)

    def shortened(self) -> Shown:
        return replace(self, label=self.short or self.label, short="")


def grouped(keys: Sequence[Shown]) -> list[Shown]:
    """`keys` with the modifier of each run of chords said once, before its first key: `alt+a
    yes  alt+r no` becomes `alt+ a yes  r no`."""
    out: list[Shown] = []
    in_run = False
    for key in keys:
        parts = key.display.split("/")
        if all(part.startswith(CHORD) and len(part) > len(CHORD) for part in parts):
            out.append(replace(key, display="/".join(part[len(CHORD):] for part in parts),
                               lead="" if in_run else CHORD + " "))
            in_run = True
        else:
            out.append(key)
            in_run = False
    return out


# binding ids in order of importance, the label (None: the binding's), the label on a short
# line (None: the same); a pair shows as `j/k hunk`
SLOTS: tuple[tuple[tuple[str, ...], str | None, str | None], ...] = (
    (("review.accept",), None, "yes"),
    (("review.reject",), None, "no"),
    (("review.accept_all",), None, None),
    (("review.reject_all",), None, "rest"),
    (("review.confirm",), None, "del/ren"),
    (("prompt.clear_queue",), None, "unqueue"),  # escape, on an empty prompt with a queue
    (("app.stop",), None, None),  # escape, while a turn runs
    # enter, named for what it does now (decide first, steer): among the last to go
    (("prompt.send",), None, None),
    # the review's own keys before moving (the arrows move too): they fit at 80 columns
    (("review.reason",), None, "why"),
    (("review.amend",), None, None),
    (("review.try",), None, None),
    (("review.next", "review.previous"), "hunk", None),
    (("review.next_file", "review.previous_file"), "file", None),
    (("review.pager",), None, None),
    (("files.toggle",), None, None),
    (("prompt.queue",), None, None),  # tab, while a turn runs and the prompt holds text
    (("app.next_pane",), None, None),
    (("app.regenerate",), None, None),
    (("app.escalate",), None, None),
    (("app.quit",), None, None),
)
HELP_IDS = ("app.help",)  # the first one enabled is shown
_SLOTTED = frozenset(i for ids, _, _ in SLOTS for i in ids) | set(HELP_IDS)

Active = tuple[Binding, bool, str]  # a binding, enabled, tooltip


def keys_shown(active: Iterable[Active], display: Callable[[Binding], str],
               palette: Binding | None = None) -> tuple[list[Shown], list[Shown]]:
    """(the keys in order of importance, the pinned keys at the right) from the screen's active
    bindings; `display` is the app's key display (remapped keys, ^ for ctrl)."""
    by_id: dict[str, Active] = {}
    extra: list[Active] = []
    for binding, enabled, tooltip in active:
        if binding.id in _SLOTTED:
            by_id.setdefault(binding.id, (binding, enabled, tooltip))
        elif binding.show and binding is not palette and not any(
                b.action == binding.action for b, _, _ in extra):
            extra.append((binding, enabled, tooltip))
    left: list[Shown] = []
    for ids, label, short in SLOTS:
        found = [by_id[i] for i in ids if i in by_id]
        if len(found) == len(ids):
            left.append(_shown(found, display, label, short))
    left += [_shown([a], display, None) for a in extra]
    right: list[Shown] = []
    help_key = next((by_id[i] for i in HELP_IDS if i in by_id and by_id[i][1]), None)
    if help_key is not None:
        right.append(_shown([help_key], display, None))
    if palette is not None:
        right.append(Shown(palette.key, display(palette), palette.description, True,
                           palette.tooltip or palette.description))
    return left, right


def fit(left: Sequence[Shown], right: Sequence[Shown], width: int) -> tuple[list[Shown], int]:
    """The most important keys of `left` that fit beside the pinned ones (a prefix: the first
    that does not fit ends it), and the gap between them: 2 columns and the full labels, else
    1 column, else 1 column and the short labels, else those with each run of chords' modifier
    said once, whichever shows the most keys first."""
    room = width - sum(k.width for k in right) - PIN_GAP * len(right) - 1
    best: tuple[list[Shown], int] = ([], 2)
    short = [k.shortened() for k in left]
    for keys, gap in ((left, 2), (left, 1), (short, 1), (grouped(short), 1)):
        shown = _prefix(keys, room, gap)
        if len(shown) > len(best[0]):
            best = (shown, gap)
        if len(shown) == len(left):
            break
    return best


def _prefix(keys: Sequence[Shown], room: int, gap: int) -> list[Shown]:
    used = -gap
    for n, key in enumerate(keys):
        used += gap + key.width
        if used > room:
            return list(keys[:n])
    return list(keys)


def _shown(found: Sequence[Active], display: Callable[[Binding], str],
           label: str | None, short: str | None = None) -> Shown:
    first, enabled, tooltip = found[0]
    return Shown(first.key.split(",")[0], "/".join(display(b) for b, _, _ in found),
                 label or first.description, enabled,
                 tooltip or first.tooltip or first.description, short or "")
