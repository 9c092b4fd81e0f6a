"""The files pane: files changed on disk since the last turn, and the context set.

`●` marks a file in the context (sent with every prompt) with its token estimate; `M` marks a
file changed on disk since the last turn. space or enter toggles a file in or out of the
context. A context file gone from disk (a turn deleted it) is not listed; it is listed again
once it is back (/undo).
"""

from __future__ import annotations

from rich.text import Text
from textual.binding import Binding
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from ...edits.paths import shown


def tokens_label(n: int | None) -> str:
    if n is None:
        return "…"
    return f"{n / 1000:.1f}k" if n >= 1000 else str(n)


class FilesPane(OptionList):
    BINDINGS = [
        Binding("space", "toggle", "context ±", id="files.toggle",
                tooltip="Put the file into the context or take it out"),
    ]

    DEFAULT_CSS = """
    FilesPane {
        width: 32;
        height: 1fr;
        border: round $secondary;
        border-title-align: left;
        padding: 0 1;
    }
    FilesPane:focus {
        border: round $accent;
    }
    """

    class Toggled(Message):
        def __init__(self, path: str) -> None:
            super().__init__()
            self.path = path

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.context: dict[str, int | None] = {}  # path -> token estimate (None: counting)
        self.changed: set[str] = set()
        self.known: set[str] = set()  # listed once: stays, so a dropped file can come back
        self.missing: frozenset[str] = frozenset()  # context files gone from disk: not listed
        self.border_title = "Files"
        self._listed: tuple[object, ...] | None = None  # what the list shows

    def set_context(self, context: dict[str, int | None],
                    missing: frozenset[str] | None = None) -> None:
        """The context set, and (when known) which of its files are gone from disk."""
        self.context = dict(context)
        if missing is not None:
            self.missing = missing
        self.refresh_items()

    def add_changed(self, paths: set[str]) -> None:
        self.changed |= paths
        self.refresh_items()

    def new_turn(self) -> None:
        self.changed.clear()
        self.known = set(self.context)
        self.refresh_items()

    @property
    def context_tokens(self) -> int:
        return sum(n or 0 for rel, n in self.context.items() if rel not in self.missing)

    def refresh_items(self) -> None:
        self.known |= self.context.keys() | self.changed
        listed = (frozenset(self.known), frozenset(self.changed), tuple(self.context.items()),
                  self.missing)
        if listed == self._listed:
            return  # a rebuilt list lays out the whole screen again
        self._listed = listed
        keep = self.highlighted_option.id if self.highlighted_option is not None else None
        options = []
        for path in sorted(self.known - self.missing):
            text = Text(no_wrap=True, overflow="ellipsis")
            text.append("M " if path in self.changed else "  ")
            text.append("● " if path in self.context else "  ")
            text.append(shown(path))
            if path in self.context:
                text.append(f" {tokens_label(self.context[path])}", style="dim")
            options.append(Option(text, id=path))
        if not options:
            options.append(Option(Text("no changes; /add PATH puts a file into the context",
                                       style="dim"), disabled=True))
        self.clear_options()
        self.add_options(options)
        if keep is not None:
            try:
                self.highlighted = self.get_option_index(keep)
            except Exception:  # noqa: BLE001 - the file left the list
                pass
        n = len(self.context.keys() - self.missing)
        # on the lower border: the title's line is too short for both
        self.border_subtitle = (f"{n} in context · {tokens_label(self.context_tokens)} tok"
                                if n else "")

    def action_toggle(self) -> None:
        option = self.highlighted_option
        if option is not None and option.id:
            self.post_message(self.Toggled(option.id))

    def _on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id:
            self.post_message(self.Toggled(event.option.id))
