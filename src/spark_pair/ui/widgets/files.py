"""The files pane: what the next request sends, and the files changed on disk since the last turn.

`●` marks a file a person put into the context (sent with every prompt), `○` one the automatic
context chose for the prompt being typed, with its reason on the line below, `×` a chosen file
dropped (not sent), and `↑` one the last request sent besides the context (listed through its
review); each with its token estimate. A file the last request sent cut has the line spans sent
and why on the lines below it. `M` marks a file a person changed on disk since the last
turn (not one spark-pair itself wrote: ui.disk_marks). enter drops a chosen file (or brings it
back), or takes a file out of the context or puts it in; alt+p pins a file (it stays in the
context for every prompt). A context file gone from
disk (a turn deleted it) is not listed; it is listed again once it is back (/undo).
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual import events
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from ...base.printable import shown
from .. import bindings
from ..typed import pass_typed


def tokens_label(n: int | None) -> str:
    if n is None:
        return "…"
    return f"{n / 1000:.1f}k" if n >= 1000 else str(n)


class Chosen:
    """A file the automatic context chose, as the pane shows it: its whole size (`tokens`),
    what the draft's request would send of it (`sends`, None: not known yet) and, when that
    is cut, the regions."""

    __slots__ = ("path", "reason", "tokens", "sends", "regions")

    def __init__(self, path: str, reason: str, tokens: int, sends: int | None = None,
                 regions: Sequence[tuple[int, int]] = ()) -> None:
        self.path = path
        self.reason = reason
        self.tokens = tokens
        self.sends = sends
        self.regions = tuple(regions)

    @property
    def key(self) -> tuple[object, ...]:
        return (self.path, self.reason, self.tokens, self.sends, self.regions)

    @property
    def sent_tokens(self) -> int:
        """What goes with the request: what the draft would send, else the whole file."""
        return self.tokens if self.sends is None else self.sends

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Chosen) and self.key == other.key

    __hash__ = None  # type: ignore[assignment]


_OF_A_FILE = ("test of ", "changes with ")  # reasons that end with the path of a chosen file


def short_reason(reason: str, room: int) -> str:
    """A chosen file's reason within `room` columns: the chosen file it names by its file name
    (`test of src/app/termui.py`: `test of termui.py`), then cut with `…`."""
    if len(reason) > room and reason.removeprefix("dropped: ").startswith(_OF_A_FILE):
        head, _, last = reason.rpartition(" ")
        reason = f"{head} {last.rsplit('/', 1)[-1]}"
    if len(reason) > room:
        reason = reason[:max(1, room - 1)] + "…"
    return reason


CUT_ROWS = 3  # rows at most for a cut file's spans and reason


def spans_text(regions: Sequence[tuple[int, int]]) -> str:
    """'1-40, 88-120, 300' (1-based, inclusive)."""
    return ", ".join(f"{a}-{b}" if b > a else str(a) for a, b in regions)


def cut_rows(regions: Sequence[tuple[int, int]], reason: str, room: int, lead: str = ""
             ) -> list[str]:
    """A file sent cut: the line spans sent and why, in rows of `room` columns."""
    import textwrap

    why = f" ({reason})" if reason else ""
    rows = textwrap.wrap(f"{lead}lines {spans_text(regions)}{why}", max(8, room))
    if len(rows) > CUT_ROWS:
        rows = [*rows[:CUT_ROWS - 1], rows[CUT_ROWS - 1][:max(1, room - 1)] + "…"]
    return rows


Cut = dict[str, tuple[str, tuple[tuple[int, int], ...]]]  # path -> (why, its spans sent)


def file_rows(context: dict[str, int | None], chosen: Sequence[Chosen], dropped: set[str],
              changed: set[str], listed: set[str], missing: frozenset[str],
              width: int = 28, sent: Sequence[str] = (), cut: Cut | None = None
              ) -> list[Option]:
    """The pane's rows: the context, then the chosen files (best first), then the files the
    last request sent besides them (`↑`), then the others. A chosen file's reason is on a
    line of its own, cut to `width`; a file sent cut has its spans and why below it."""
    options = []
    auto = {c.path: c for c in chosen}
    went = [p for p in dict.fromkeys(sent) if p not in context and p not in auto]
    order = [*sorted(p for p in context if p not in missing),
             *(c.path for c in chosen if c.path not in context), *went,
             *sorted(listed - context.keys() - auto.keys() - missing - set(went))]
    for path in order:
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append("M " if path in changed else "  ")
        c = auto.get(path)
        if path in context:
            text.append("● ")
            text.append(shown(path))
            text.append(f" {tokens_label(context[path])}", style="dim")
        elif c is not None:
            gone = path in dropped
            text.append("× " if gone else "○ ")
            text.append(shown(path), style="strike" if gone else "")
            text.append(f" {tokens_label(c.sent_tokens)}", style="dim")  # what goes
            reason = short_reason(("dropped: " if gone else "") + c.reason, width - 4)
            text.append("\n    " + reason, style="dim italic")
            if c.regions and not gone:  # the draft's own spans, and the whole file's size
                whole = f"{tokens_label(c.tokens)} whole"
                for row in cut_rows(c.regions, whole, width - 4, "sends "):
                    text.append("\n    " + row, style="dim italic")
            elif cut and path in cut:  # what the last request sent of it
                why, regions = cut[path]
                for row in cut_rows(regions, why, width - 4, "last sent "):
                    text.append("\n    " + row, style="dim italic")
        elif path in went:
            text.append("↑ ")
            text.append(shown(path))
            text.append(" sent", style="dim")
        else:
            text.append("  ")
            text.append(shown(path))
        if cut and path in cut and c is None:
            why, regions = cut[path]
            for row in cut_rows(regions, why, width - 4):
                text.append("\n    " + row, style="dim italic")
        options.append(Option(text, id=path))
    return options


class FilesPane(OptionList):
    PASSES_TYPED = True  # text typed here goes to the prompt (SparkPairApp.on_event)

    BINDINGS = bindings.FILES

    DEFAULT_CSS = """
    FilesPane {
        width: 32;
        height: 1fr;
        border: round $secondary;
        border-title-align: left;
        padding: 0 1;
    }
    FilesPane:focus {
        border: heavy $accent;  /* (heavy: the focus shows without colour too) */
    }
    """

    class Toggled(Message):
        def __init__(self, path: str) -> None:
            super().__init__()
            self.path = path

    class Folded(Message):
        """The pane was folded away (the terminal narrowed) while it listed a file sent cut
        that nothing else has said: the live diff says it (ui.sent_spans)."""

    class Pinned(Message):
        def __init__(self, path: str) -> None:
            super().__init__()
            self.path = path

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.context: dict[str, int | None] = {}  # path -> token estimate (None: counting)
        self.chosen: list[Chosen] = []  # what the automatic context chose for the draft
        self.dropped: set[str] = set()  # chosen files the person dropped
        self.changed: set[str] = set()
        self.known: set[str] = set()  # listed once: stays, so a dropped file can come back
        self.missing: frozenset[str] = frozenset()  # context files gone from disk: not listed
        self.sent: list[str] = []  # the files the last request sent (listed through review)
        self.cut: Cut = {}  # the files the last request sent cut: why, and the spans sent
        self.cut_told = False  # the live diff's note says the cut (the pane is folded away)
        self.border_title = "Files"
        self._listed: tuple[object, ...] | None = None  # what the list shows

    def set_context(self, context: dict[str, int | None],
                    missing: frozenset[str] | None = None) -> None:
        """The context set, and (when known) which of its files are gone from disk."""
        self.context = dict(context)
        if missing is not None:
            self.missing = missing
        self.refresh_items()

    def set_chosen(self, chosen: Sequence[Chosen], dropped: set[str]) -> None:
        """The files the automatic context chose for the draft, and those dropped of them."""
        self.chosen = list(chosen)
        self.dropped = set(dropped)
        self.refresh_items()

    def set_sent(self, paths: Sequence[str]) -> None:
        """The files the turn's request sends: they stay listed while it is reviewed."""
        self.sent = list(paths)
        self.refresh_items()

    def set_cut(self, cut: Cut) -> None:
        """The files the turn's request sent cut (workspace.context.ContextFile regions)."""
        self.cut = dict(cut)
        self.cut_told = False
        self.refresh_items()

    def add_changed(self, paths: set[str]) -> None:
        self.changed |= paths
        self.refresh_items()

    def set_changed(self, paths: set[str], gone: set[str] | frozenset[str] = frozenset()
                    ) -> None:
        """The files a person changed on disk now; `gone`: no longer (spark-pair's own
        writes, a file that came and went): unlisted unless the prompt sends them."""
        self.changed = set(paths)
        self.known -= gone - self.context.keys() - {c.path for c in self.chosen}
        self.refresh_items()

    def new_turn(self) -> None:
        self.changed.clear()
        self.cut = {}
        self.known = set(self.context)
        self.refresh_items()

    @property
    def context_tokens(self) -> int:
        return sum(n or 0 for rel, n in self.context.items() if rel not in self.missing)

    @property
    def sent_tokens(self) -> int:
        """The context's tokens and those of the chosen files not dropped."""
        return self.context_tokens + sum(c.sent_tokens for c in self.chosen
                                         if c.path not in self.dropped
                                         and c.path not in self.context)

    def refresh_items(self) -> None:
        self.known |= self.context.keys() | self.changed
        listed = (frozenset(self.known), frozenset(self.changed), tuple(self.context.items()),
                  self.missing, tuple(c.key for c in self.chosen),
                  frozenset(self.dropped), tuple(self.sent), tuple(self.cut.items()))
        if listed == self._listed:
            return  # a rebuilt list lays out the whole screen again
        self._listed = listed
        keep = self.highlighted_option.id if self.highlighted_option is not None else None
        options = file_rows(self.context, self.chosen, self.dropped, self.changed, self.known,
                            self.missing, self.content_size.width or 28, self.sent, self.cut)
        if not options:
            options.append(Option(Text("no changes; files the prompt needs are listed here "
                                       "as you type (/add PATH pins one)", style="dim"),
                                  disabled=True))
        self.clear_options()
        self.add_options(options)
        if keep is not None:
            try:
                self.highlighted = self.get_option_index(keep)
            except Exception:  # noqa: BLE001 - the file left the list
                pass
        self.border_subtitle = context_summary(self.context, self.missing, self.chosen,
                                               self.dropped)

    def on_hide(self, event: events.Hide) -> None:
        if self.cut and not self.cut_told:
            self.post_message(self.Folded())

    def on_focus(self, event: events.Focus) -> None:
        """A row is highlighted once the pane has the focus (the last one, else the first),
        so enter acts at once."""
        if self.highlighted is None:
            for index in range(self.option_count):
                if not self.get_option_at_index(index).disabled:
                    self.highlighted = index
                    break

    def on_paste(self, event: events.Paste) -> None:
        pass_typed(self, event)  # a paste goes to the prompt whole

    def on_key(self, event: events.Key) -> None:
        pass_typed(self, event)  # a letter typed here goes to the prompt

    def action_toggle_file(self) -> None:
        option = self.highlighted_option
        if option is not None and option.id:
            self.post_message(self.Toggled(option.id))

    def action_pin(self) -> None:
        option = self.highlighted_option
        if option is not None and option.id:
            self.post_message(self.Pinned(option.id))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id:
            self.post_message(self.Toggled(event.option.id))


def context_summary(context: dict[str, int | None], missing: frozenset[str],
                    chosen: Sequence[Chosen], dropped: set[str]) -> str:
    """'2 in context · 1.2k tok', '2 + 3 chosen · 4.1k tok' ('' when nothing is sent)."""
    n = len(context.keys() - missing)
    auto = [c for c in chosen if c.path not in dropped and c.path not in context]
    tokens = sum(v or 0 for k, v in context.items() if k not in missing) + sum(
        c.sent_tokens for c in auto)
    if not n and not auto:
        return ""
    if not auto:
        return f"{n} in context · {tokens_label(tokens)} tok"
    # (the pane's lower border holds some 24 characters: the marks say which file is which)
    files = f"{n} + {len(auto)} chosen" if n else f"{len(auto)} chosen"
    return f"{files} · {tokens_label(tokens)} tok"
