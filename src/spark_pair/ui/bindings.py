"""Every key binding of the app, as data: each screen and widget takes its BINDINGS from here,
and `[keys]` in the config remaps them by id (the help screen shows the keys in effect).

Nothing here imports the app, a screen or a widget: they all read this module.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from textual.binding import Binding, BindingType
from textual.keys import KEY_ALIASES, key_to_character

# the app (SparkPairApp)
APP: list[BindingType] = [
    Binding("ctrl+q", "quit", "quit", id="app.quit", priority=True,
            tooltip="Quit (asks when work would be lost or left half done)"),
    # f1 (or the palette, or /help), on every screen, over a question or the check too (there
    # and on the keys screen itself it opens or closes them): ? is text, typed into the prompt
    Binding("f1", "help", "keys", id="app.help", priority=True,
            tooltip="Every key and slash command (the same key closes them)"),
]

# the main screen
MAIN: list[BindingType] = [
    Binding("tab", "cycle_focus(1)", "pane", id="app.next_pane",
            tooltip="Move between prompt, review and files"),
    Binding("shift+tab", "cycle_focus(-1)", "previous pane", id="app.previous_pane",
            show=False),
    Binding("escape", "stop", "stop", id="app.stop",
            tooltip="Stop the stream; what arrived stays; nothing is written (between fix "
                    "rounds: stop the loop)"),
    Binding("ctrl+r", "regenerate", "regen", id="app.regenerate",
            tooltip="Run this turn again"),
    Binding("ctrl+e", "escalate", "stronger", id="app.escalate", show=False, priority=True,
            tooltip="Run this turn again on the stronger model"),  # the prompt's too
]

# the review's decisions and moves: on the main screen, on chords that are never text, so they
# work while the prompt has the focus and a sentence typed anywhere never decides (letters typed
# while the review or files pane has the focus go to the prompt)
REVIEW: list[BindingType] = [
    Binding("alt+a", "review('accept')", "accept", id="review.accept", priority=True,
            tooltip="Accept the focused hunk or create and move to the next undecided one"),
    Binding("alt+r", "review('reject')", "reject", id="review.reject", priority=True,
            tooltip="Reject the focused hunk or operation"),
    Binding("alt+shift+a", "review('accept_all')", "all", id="review.accept_all",
            priority=True,
            tooltip="Accept every undecided modify and create (never a delete or rename)"),
    Binding("alt+shift+r", "review('reject_all')", "reject rest", id="review.reject_all",
            priority=True,
            tooltip="Reject everything still undecided; accepted hunks stay accepted"),
    Binding("alt+d", "review('confirm')", "del/rename", id="review.confirm", priority=True,
            tooltip="Accept the focused delete or rename (asks y/n)"),
    Binding("alt+c", "review('reject_with_reason')", "reject+why", id="review.reason",
            priority=True,
            tooltip="Reject the focused hunk or operation with a reason the model hears "
                    "next turn"),
    Binding("alt+e", "review('amend')", "edit", id="review.amend", priority=True,
            tooltip="Edit the focused hunk's result (or a created file) in $VISUAL/$EDITOR; "
                    "what you save is accepted"),
    Binding("alt+t", "review('try_check')", "try", id="review.try", priority=True,
            tooltip="Accept like alt+A, apply, run the configured check (review.check), then "
                    "keep or roll back; a failing check starts fix rounds"),
    Binding("alt+o", "review('open_pager')", "pager", id="review.pager", priority=True,
            tooltip="Open the turn's diff in your pager (review.pager, $PAGER, less -R)"),
    Binding("alt+j", "review('next_item')", "next", id="review.next", show=False,
            priority=True),
    Binding("alt+k", "review('previous_item')", "previous", id="review.previous",
            show=False, priority=True),
    Binding("alt+n", "review('next_file')", "next file", id="review.next_file", show=False,
            priority=True),
    Binding("alt+p", "review('previous_file')", "previous file", id="review.previous_file",
            show=False, priority=True),
]

# the review pane, when it has the focus: moves on keys that are never text
REVIEW_PANE: list[BindingType] = [
    Binding("down", "next_item", "next", id="review.down", show=False),
    Binding("up", "previous_item", "previous", id="review.up", show=False),
    Binding("pagedown", "page(1)", "page down", id="review.page_down", show=False),
    Binding("pageup", "page(-1)", "page up", id="review.page_up", show=False),
    Binding("home", "first", "first", id="review.first", show=False),
    Binding("end", "last", "last", id="review.last", show=False),
]

# the files pane
FILES: list[BindingType] = [
    Binding("enter", "toggle_file", "drop/add", id="files.toggle",
            tooltip="Drop a chosen file (or bring it back); take a file out of the context "
                    "or put it in"),
    Binding("alt+p", "pin", "pin", id="files.pin",
            tooltip="Keep the file in the context for every prompt"),
]

# the prompt
PROMPT: list[BindingType] = [
    # the prompt takes enter itself (its key handler: in turn with the keys typed before it,
    # no message hop, so the request goes out at once); the binding names it in the footer
    # (one key, named for what it does now: the prompt's check_action shows one of these)
    Binding("enter", "submit", "send", id="prompt.send",
            tooltip="Send the prompt (every line of it)"),
    Binding("enter", "submit('run')", "run", id="prompt.send", tooltip="Run the slash command"),
    Binding("enter", "submit('steer')", "steer", id="prompt.send",
            tooltip="Send it to the running turn as a correction (nothing is written by it)"),
    Binding("enter", "submit('later')", "decide first", id="prompt.send",
            tooltip="A turn is under review: enter says so and the text stays; decide the turn "
                    "(alt+R rejects what is left), then enter sends it; tab queues it to start "
                    "by itself once the turn ends"),
    # a line break by hand: ctrl+j is what terminals send for it; shift+enter where the
    # terminal reports it (kitty's keyboard protocol); a paste keeps its lines by itself.
    # The prompt takes it as it takes a letter, in turn with the keys of the same terminal
    # write (Prompt._on_key): a priority binding ran before the keys ahead of it were typed, a
    # binding found on the way back up after the keys behind it
    Binding("ctrl+j,shift+enter", "newline", "new line", id="prompt.newline", show=False,
            tooltip="Start a new line in the prompt"),
    # while a turn runs (streams or waits for review) and the prompt holds text; elsewhere tab
    # moves to the next pane (the footer shows which)
    Binding("tab", "queue", "queue", id="prompt.queue",
            tooltip="Queue the prompt as the next turn: it starts when this one ends"),
    # on an empty prompt while turns are queued and no reply streams (asks first); elsewhere
    # escape stops the stream
    Binding("escape", "clear_queue", "clear queue", id="prompt.clear_queue",
            tooltip="Clear the queued turns (asks first)"),
    Binding("ctrl+u", "clear_prompt", "clear", id="prompt.clear", show=False,
            tooltip="Clear the whole prompt (every line)"),
    # the ids keep the word "history": a [keys] table names them
    Binding("up", "recall(-1)", "earlier prompt", id="prompt.history_back", show=False),
    Binding("down", "recall(1)", "later prompt", id="prompt.history_forward", show=False),
]

# the y/n question
# (questions can come by themselves, e.g. between fix rounds: their answers are chords, so a
# sentence being typed answers nothing; the letters go to the prompt)
CONFIRM: list[BindingType] = [
    Binding("alt+y", "answer(True)", "yes", id="confirm.yes"),
    Binding("alt+n", "answer(False)", "no", id="confirm.no"),
    Binding("escape", "answer(False)", "no", id="confirm.cancel", show=False),
]

# the help screen
HELP: list[BindingType] = [
    # (letters typed here, q and ? too, go on to the prompt)
    Binding("escape", "close", "close", id="help.close"),
    Binding("f1", "close", "close", id="help.close_f1", show=False),
]

# the check screen (keep or roll back)
CHECK: list[BindingType] = [
    Binding("alt+y", "answer(True)", "keep", id="check.keep"),
    Binding("alt+n", "answer(False)", "roll back", id="check.roll_back"),
    Binding("alt+f", "send", "send to the model anyway", id="check.send"),
]

# the reason-for-a-rejection dialog
REASON: list[BindingType] = [
    Binding("escape", "cancel", "cancel", id="reason.cancel"),
]

# the commit message dialog
MESSAGE: list[BindingType] = [
    Binding("ctrl+s", "commit", "commit", id="message.commit", priority=True),
    Binding("escape", "cancel", "cancel", id="message.cancel", priority=True),
]

# the bindings a `[keys]` table may remap (the y/n of a check, the reason dialog's escape and the
# commit message dialog's keys are not among them)
REMAPPABLE = (APP, MAIN, REVIEW, REVIEW_PANE, FILES, PROMPT, CONFIRM, HELP)


# the bindings that act at the same time: the app's, with the main screen's and its focused
# pane's, or with a modal screen's (under a question, the keys screen or the check the main
# screen's keys rest). A [keys] remap onto a key another of them already has is refused.
TOGETHER = (
    (APP, MAIN, REVIEW, PROMPT),
    (APP, MAIN, REVIEW, REVIEW_PANE),
    (APP, MAIN, REVIEW, FILES),
    (APP, CONFIRM),
    (APP, HELP),
    (APP, CHECK),
    (APP, REASON),
    (APP, MESSAGE),
)
# keys of the app that no binding id names (Textual's palette key, on every screen)
UNNAMED = {"ctrl+p": "the command palette"}


def key_label(key: str) -> str:
    """A chord as the footer and the help show it: alt+shift+a is alt+A."""
    mods, _, last = key.rpartition("+")
    if len(last) == 1 and "shift" in mods.split("+"):
        mods = "+".join(m for m in mods.split("+") if m != "shift")
        return f"{mods}+{last.upper()}" if mods else last.upper()
    return key


def default_keys() -> dict[str, str]:
    """binding id -> its default key(s), over every screen and widget of the app."""
    out: dict[str, str] = {}
    for owner in REMAPPABLE:
        for binding in owner:
            if isinstance(binding, Binding) and binding.id:
                out[binding.id] = binding.key
    return out


def unknown_ids(keymap: Mapping[str, str]) -> list[str]:
    known = default_keys()
    return sorted(k for k in keymap if k not in known)


def types_text(key: str) -> bool:
    """`key` (a Textual key name) types a printable character: a letter, a digit, space,
    punctuation by its name (full_stop, comma, question_mark), with or without shift."""
    char = key_to_character(key.strip().removeprefix("shift+"))
    return char is not None and char.isprintable()


def text_keys(keymap: Mapping[str, str]) -> list[str]:
    """The ids in `keymap` of a decision, a question's answer or a files pane key mapped to a
    key that types text: refused, as typing never decides."""
    deciding = {b.id for owner in (REVIEW, FILES, CONFIRM) for b in owner
                if isinstance(b, Binding) and b.id}
    return sorted(i for i, keys in keymap.items() if i in deciding and any(
        types_text(k) for k in keys.split(",")))


_MODIFIER_NAMES = {"control": "ctrl", "option": "alt", "cmd": "super", "command": "super"}


def normal_key(key: str) -> str:
    """A key as Textual names what the terminal sends (one spelling, or the binding never
    runs): modifiers in lower case and in its order (alphabetical: alt, ctrl, shift), a named
    key in lower case, and a capital letter after lower-case modifiers as shift and the
    letter (`alt+A` is alt+shift+a, as the footer writes it), except with ctrl, which a
    terminal sends the same for either case; written in title case (`Alt+Q`, `Ctrl+F5`) the
    letter's case is the style, not shift: alt+q, ctrl+f5. `shift+alt+a` is alt+shift+a."""
    parts = [p.strip() for p in key.strip().split("+")]
    if len(parts) < 2 or not all(parts):
        return key.strip()  # a plain key (its case is the character it types)
    *mods, name = parts
    held = {_MODIFIER_NAMES.get(m.lower(), m.lower()) for m in mods}
    titled = any(m[:1].isupper() for m in mods)
    if len(name) == 1 and name.isalpha() and name.isupper() and not titled \
            and "ctrl" not in held:
        held.add("shift")
    if len(name) == 1 and name.isalpha() or len(name) > 1:
        name = name.lower()
    return "+".join([*sorted(held), name])


def normal_keys(keys: str) -> str:
    """Each of a binding's comma-separated keys as `normal_key` spells it."""
    return ",".join(normal_key(k) for k in keys.split(",") if k.strip())


def _keys(keys: str) -> set[str]:
    """The keys of a binding, each by its one name (ctrl+i is tab: a terminal sends the same)."""
    alias = {a: name for name, aliases in KEY_ALIASES.items() for a in aliases}
    return {alias.get(normal_key(k), normal_key(k)) for k in keys.split(",") if k.strip()}


@dataclass(frozen=True)
class Clash:
    """`binding` (remapped by [keys]) was given `key`, which `other` (an id, or a key of the app
    no id names) has: both would act on it, the footer naming one that does not run."""

    binding: str
    key: str
    other: str


def clashes(keymap: Mapping[str, str]) -> list[Clash]:
    """The remaps in `keymap` (known ids) onto a key another binding acting at the same time
    has, by default or by `keymap`: refused, each binding keeps its default key. Two bindings
    that share a key by default (tab: the next pane or queue the prompt) may share another."""
    defaults = {b.id: _keys(b.key) for g in TOGETHER for owner in g for b in owner
                if isinstance(b, Binding) and b.id}
    groups = [list(dict.fromkeys(b.id for owner in g for b in owner
                                 if isinstance(b, Binding) and b.id)) for g in TOGETHER]
    refused: dict[str, Clash] = {}
    while True:  # a refused remap's default key may clash with another remap: until none does
        keys = {i: _keys(keymap[i]) if i in keymap and i not in refused else d
                for i, d in defaults.items()}
        found: dict[str, Clash] = {}
        for ids in groups:
            for i in (i for i in ids if i in keymap and i not in refused):
                for key in sorted(keys[i]):
                    others = [UNNAMED[key]] if key in UNNAMED else []
                    others += [j for j in ids if j != i and key in keys[j]
                               and not defaults[i] & defaults[j]]
                    if others and i not in found:
                        found[i] = Clash(i, key, others[0])
        if not found:
            return [refused[i] for i in sorted(refused)]
        refused.update(found)


def describe(binding_id: str) -> str:
    """'app.quit' (quit): an id with what its binding does."""
    b = next((b for g in TOGETHER for o in g for b in o
              if isinstance(b, Binding) and b.id == binding_id), None)
    return f"{binding_id!r} ({b.description})" if b is not None else binding_id


@dataclass
class KeymapCheck:
    """A `[keys]` table checked: what is taken, and what is refused and why."""

    accepted: dict[str, str] = field(default_factory=dict)
    unknown: list[str] = field(default_factory=list)
    typed: list[str] = field(default_factory=list)
    clashes: list[Clash] = field(default_factory=list)


def check_keymap(keymap: Mapping[str, str]) -> KeymapCheck:
    """`keymap` checked: an id that names no binding, a decision on a key that types text and a
    key another binding has are refused (in that order); the rest is taken."""
    keymap = {k: normal_keys(v) for k, v in keymap.items()}
    unknown, typed = unknown_ids(keymap), text_keys(keymap)
    rest = {k: v for k, v in keymap.items() if k not in {*unknown, *typed}}
    found = clashes(rest)
    accepted = {k: v for k, v in rest.items() if k not in {c.binding for c in found}}
    return KeymapCheck(accepted, unknown, typed, found)


def clash_text(found: list[Clash], keymap: Mapping[str, str]) -> str:
    """The refused remaps, each once: two [keys] entries given one key are said together."""
    parts: list[str] = []
    for c in found:
        mutual = any(o.binding == c.other and o.key == c.key for o in found)
        if mutual and c.other < c.binding:
            continue  # (said with the other)
        if mutual:
            parts.append(f"{describe(c.binding)} and {describe(c.other)} are both given "
                         f"{c.key!r}")
        else:
            other = c.other if c.other in UNNAMED.values() else describe(c.other)
            given = next((k.strip() for k in keymap[c.binding].split(",")
                          if _keys(k) == {c.key}), c.key)
            key = repr(given) if given == c.key else f"{given!r} (the terminal's {c.key})"
            parts.append(f"{describe(c.binding)} = {keymap[c.binding]!r}: {key} is the key of "
                         f"{other}")
    return "; ".join(parts)


def keys_in_effect(keymap: Mapping[str, str]) -> dict[str, str]:
    """binding id -> its key, after the remaps of `keymap` that are taken."""
    return {**default_keys(), **check_keymap(keymap).accepted}
